#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nvcc: the warp issue-order probe of mdm_hw.cu
# (`mdm_hw issue`), for the scheduler policy of a preset. Writes into $OUT: gpu.txt,
# issue.csv (one line per warp: issue,mode,threads,bps,warp,smid,warpid,t0,t1,t2) and
# issue_sass.txt (the probe's SASS, to check that the clock reads bracket the issued
# instructions). Usage: OUT=DIR bash issue_probe.sh; read with
# `python benchmarks/hardware/issue_order.py DIR/issue.csv`.
set -eu
out=${OUT:?set OUT to the output folder}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt"
nvcc --version | tail -1 >>"$out/gpu.txt"
nvcc -O3 -arch="${ARCH:-sm_90}" -o /tmp/mdm_hw_issue "$here/mdm_hw.cu"
if command -v cuobjdump >/dev/null; then
  cuobjdump -sass /tmp/mdm_hw_issue | awk '/Function : .*issue_order_probe/,/EXIT/' >"$out/issue_sass.txt"
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
wc -l "$out/issue.csv"
