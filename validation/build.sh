#!/usr/bin/env bash
# Build the saxpy2 validation harness with nvcc for every architecture this nvcc supports
# among sm_52 (GTX 970, TITAN X), sm_60/61 (GTX 1070), sm_70 (V100), sm_75, sm_80, sm_86,
# sm_89 and sm_90 (H100/H200), plus PTX for the newest of them so later GPUs JIT-compile it.
#
# CUDA 13 dropped sm_52..sm_70: building for the paper's Maxwell/Pascal GPUs needs CUDA 12.x
# or older (set NVCC=/path/to/cuda-12/bin/nvcc). Override the list with ARCHS="52 61".
# Usage: validation/build.sh [output-binary] [source.cu]
#   (default validation/build/saxpy2 from validation/saxpy2.cu; the profile microbenchmarks are
#   `validation/build.sh OUT/gpuprofile validation/gpuprofile.cu`)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
NVCC="${NVCC:-nvcc}"
out="${1:-$here/build/saxpy2}"
source="${2:-$here/saxpy2.cu}"
wanted="${ARCHS:-52 60 61 70 75 80 86 89 90}"
supported="$("$NVCC" --list-gpu-code 2>/dev/null | tr -d '\r' | sed -n 's/^sm_\([0-9]*\)$/\1/p' | tr '\n' ' ')"
if [ -z "$supported" ]; then
  echo "build.sh: '$NVCC --list-gpu-code' listed no architectures" >&2
  exit 1
fi
flags=()
newest=""
for arch in $wanted; do
  if [[ " $supported " == *" $arch "* ]]; then
    flags+=("-gencode" "arch=compute_${arch},code=sm_${arch}")
    newest="$arch"
  else
    echo "build.sh: skipping sm_${arch} (not supported by $("$NVCC" --version | grep -o "release [0-9.]*"))" >&2
  fi
done
if [ -z "$newest" ]; then
  echo "build.sh: none of the wanted architectures ($wanted) is supported by $NVCC" >&2
  exit 1
fi
flags+=("-gencode" "arch=compute_${newest},code=compute_${newest}")
mkdir -p "$(dirname "$out")"
set -x
"$NVCC" -O3 -std=c++17 -Xptxas -v "${flags[@]}" -o "$out" "$source"
