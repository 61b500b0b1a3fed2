#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and nvcc: the block placement probe of mdm_hw.cu
# (`mdm_hw placement`): which SM runs which thread block, in the launch geometries of the
# hardware cases (gemm_tiled's 32 x 64 blocks with 2 KB of shared memory, stride's 4224
# with 3 KB, kmeans' 4224 without). Writes into $OUT: gpu.txt and placement.csv (one line
# per block: placement,case,block,smid,start_ns,end_ns). Usage: OUT=DIR bash
# placement_probe.sh; read with `python benchmarks/hardware/placement.py DIR/placement.csv`.
set -eu
out=${OUT:?set OUT to the output folder}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt"
nvcc -O3 -arch="${ARCH:-sm_90}" -o /tmp/mdm_hw_placement "$here/mdm_hw.cu"
: >"$out/placement.csv"
# case, threads per block, grid x, grid y, shared memory bytes per block
for cfg in "gemm_tiled 256 32 64 2048" "stride 256 4224 1 3072" "kmeans 256 4224 1 0"; do
  set -- $cfg
  /tmp/mdm_hw_placement placement threads="$2" gx="$3" gy="$4" smem="$5" |
    sed "s/^placement,/placement,$1,/" >>"$out/placement.csv"
done
wc -l "$out/placement.csv"
