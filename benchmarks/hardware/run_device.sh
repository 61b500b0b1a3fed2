#!/usr/bin/env bash
# On a machine with an NVIDIA GPU, nvcc and Nsight Compute: build mdm_hw.cu and profile
# every case of INPUTS/cases.txt (written by `h100_validation.py prepare INPUTS`).
# Writes into $OUT: gpu.txt, time.csv and mem.csv (ncu --csv --page raw, one "### case"
# marker before each case's output) and log.txt. Usage: OUT=DIR bash run_device.sh INPUTS
# Optional: ONLY="case ..." (a subset), EXTRA="key=value ..." (more mdm_hw arguments, e.g.
# l2fetch=32), TAG=name (files named TAG_time.csv, TAG_mem.csv; the build is skipped
# when /tmp/mdm_hw exists), CLOCK=none (ncu leaves the SM clock to the GPU's boost
# instead of locking it to base), KINDS="time" (skip the memory counters).
set -u
inputs=${1:?usage: OUT=DIR bash run_device.sh INPUTS}
out=${OUT:?set OUT to the output folder}
here=$(cd "$(dirname "$0")" && pwd)
arch=${ARCH:-sm_90}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem \
  --format=csv | tee "$out/gpu.txt"
ncu --version | tail -1 | tee -a "$out/gpu.txt"
nvcc --version | tail -1 | tee -a "$out/gpu.txt"
tag=${TAG:+${TAG}_}
[ -x /tmp/mdm_hw ] && [ -n "$tag" ] || nvcc -O3 -arch="$arch" -o /tmp/mdm_hw "$here/mdm_hw.cu" || exit 1
time_metrics=sm__cycles_elapsed.avg,gpc__cycles_elapsed.max,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,launch__shared_mem_config_size,launch__occupancy_limit_shared_mem,launch__registers_per_thread
mem_metrics=l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__sectors_read.sum,dram__sectors_write.sum
# --cache-control none: the L2 keeps its contents between a case's kernels (mdm_hw empties
# it of the inputs before the first); application replay reruns the whole case per pass.
ncu_opts=(--csv --page raw --replay-mode application --cache-control none
  --clock-control "${CLOCK:-base}")
kinds=" ${KINDS:-time mem} "
while read -r id wl args; do
  [ -n "$id" ] || continue
  case " ${ONLY:-$id} " in *" $id "*) ;; *) continue ;; esac
  # shellcheck disable=SC2086
  set -- $args ${EXTRA:-}
  cd "$inputs" || exit 1
  start=$SECONDS
  if [[ $kinds == *" time "* ]]; then
    echo "### $id" >>"$out/${tag}time.csv"
    timeout 120 ncu "${ncu_opts[@]}" --metrics "$time_metrics" /tmp/mdm_hw "$wl" "$@" \
      >>"$out/${tag}time.csv" || echo "!!! $id: time profile failed"
  fi
  if [[ $kinds == *" mem "* ]]; then
    echo "### $id" >>"$out/${tag}mem.csv"
    timeout 120 ncu "${ncu_opts[@]}" --metrics "$mem_metrics" /tmp/mdm_hw "$wl" "$@" \
      >>"$out/${tag}mem.csv" || echo "!!! $id: memory profile failed"
  fi
  cd - >/dev/null || exit 1
  echo "=== $id $((SECONDS - start)) s"
done <"$inputs/cases.txt"
