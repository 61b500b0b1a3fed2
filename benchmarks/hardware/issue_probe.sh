#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nvcc: the issue probes of mdm_hw.cu, for a preset's
# scheduler policy and FP32 rate. `mdm_hw issue` (warp issue order) and `mdm_hw
# throughput` (FP32 warp instructions per cycle). Writes into $OUT: gpu.txt, issue.csv
# (one line per warp: issue,mode,threads,bps,warp,smid,warpid,t0,t1,t2), throughput.csv
# (one line per block: throughput,op,warps,iters,smid,cycles) and issue_sass.txt (the
# probes' SASS: the clock reads must bracket the timed instructions). Usage: OUT=DIR bash
# issue_probe.sh; read with `python benchmarks/hardware/issue_order.py DIR/issue.csv
# --throughput DIR/throughput.csv`.
set -eu
out=${OUT:?set OUT to the output folder}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt"
nvcc --version | tail -1 >>"$out/gpu.txt"
nvcc -O3 -arch="${ARCH:-sm_90}" -o /tmp/mdm_hw_issue "$here/mdm_hw.cu"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass /tmp/mdm_hw_issue |
    awk '/Function : .*(issue_order|throughput)_probe/,/EXIT/' >"$out/issue_sass.txt"
fi
: >"$out/issue.csv"
# mode, threads per block, blocks per SM, sync (a barrier before t0)
for cfg in "alu 1024 1 1" "alu 1024 2 1" "alu 256 8 0" "alu 128 4 0" \
  "load 1024 1 1" "load 1024 2 1" "load 256 8 0" "load 128 4 0"; do
  set -- $cfg
  for rep in 1 2; do
    /tmp/mdm_hw_issue issue mode="$1" threads="$2" bps="$3" sync="$4" |
      sed "s/^issue,/issue$rep,/" >>"$out/issue.csv"
  done
done
: >"$out/throughput.csv"
for op in ffma ffma3 fadd fmul; do
  for warps in 4 8 16 32; do
    /tmp/mdm_hw_issue throughput op="$op" warps="$warps" >>"$out/throughput.csv"
  done
done
wc -l "$out/issue.csv" "$out/throughput.csv"
