#!/usr/bin/env bash
# Build and run the whole kernel zoo on the GPU of this machine (docs/validation/zoo.md); every
# raw file goes to one folder, validation/results/zoo-<gpu>-<date>/ (or --out DIR):
#   zoo.csv            one row per timed window (zoo.cu and zoo_cublas.cu, zoo.cuh's columns)
#   zoo.sass, zoo.res  the zoo's SASS and resource usage as built here (what the analyzer reads)
#   build.log          nvcc's output (ptxas -v); cublas.log says why cuBLAS is left out, if it is
#   device.txt, nvidia-smi-q.txt, host.txt, run.json   the machine, the GPU and the run's times
#
# Usage: validation/zoo/run.sh [--gpu INDEX] [--out DIR] [--reps 10] [--passes 2]
# Needs nvcc (CUDA 12 or 13; cuBLAS and cuBLASLt headers for the library GEMMs) and nvidia-smi.
# The whole zoo, built for sm_90 only (ARCHS overrides), takes a few minutes on an H100 or H200.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$(dirname "$here")")"
NVCC="${NVCC:-nvcc}"
gpu=0 ; out="" ; reps=10 ; passes=2
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu) gpu="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --passes) passes="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 1 ;;
  esac
done
name="$(nvidia-smi -i "$gpu" --query-gpu=name --format=csv,noheader | head -1)"
slug="$(echo "$name" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')"
dir="${out:-$root/validation/results/zoo-$slug-$(date -u +%Y%m%d-%H%M%S)}"
mkdir -p "$dir"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
archs="${ARCHS:-90}"
flags=()
for arch in $archs; do flags+=("-gencode" "arch=compute_${arch},code=sm_${arch}"); done

"$NVCC" -O3 -std=c++17 -Xptxas -v "${flags[@]}" -o "$dir/zoo" "$here/zoo.cu" > "$dir/build.log" 2>&1
cuobjdump -sass "$dir/zoo" > "$dir/zoo.sass" 2>&1 || true
cuobjdump -res-usage "$dir/zoo" > "$dir/zoo.res" 2>&1 || true
cublas=0
if "$NVCC" -O3 -std=c++17 "${flags[@]}" -o "$dir/zoo_cublas" "$here/zoo_cublas.cu" -lcublas -lcublasLt \
     >> "$dir/build.log" 2>&1; then
  cublas=1
else
  echo "zoo_cublas.cu did not build with $NVCC (no cuBLAS headers or libraries?): see build.log" \
    > "$dir/cublas.log"
fi
nvidia-smi -i "$gpu" --query-gpu=name,serial,clocks.max.sm,clocks.max.mem,power.limit,driver_version \
  --format=csv > "$dir/device.txt" 2>&1 || true
nvidia-smi -i "$gpu" -q > "$dir/nvidia-smi-q.txt" 2>&1 || true
{ uname -a; "$NVCC" --version | tail -2; } > "$dir/host.txt" 2>&1 || true
commit="$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)"

common=(--device "$gpu" --out "$dir/zoo.csv" --reps "$reps" --passes "$passes")
# a program that stops early keeps the rows it wrote; its exit status goes to run.json
zoo_status=0 ; cublas_status=null
"$dir/zoo" "${common[@]}" 2> "$dir/zoo.log" || zoo_status=$?
if [ "$cublas" = 1 ]; then
  cublas_status=0
  "$dir/zoo_cublas" "${common[@]}" 2>> "$dir/zoo.log" || cublas_status=$?
fi
finished="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
cat > "$dir/run.json" <<EOF
{
  "gpu": "$name",
  "started_utc": "$started",
  "finished_utc": "$finished",
  "kit_commit": "$commit",
  "archs": "$archs",
  "cublas": $([ "$cublas" = 1 ] && echo true || echo false),
  "zoo_exit_status": $zoo_status,
  "zoo_cublas_exit_status": $cublas_status,
  "command": "validation/zoo/run.sh --gpu $gpu --reps $reps --passes $passes"
}
EOF
rm -f "$dir/zoo" "$dir/zoo_cublas"
rows=0; [ -f "$dir/zoo.csv" ] && rows=$(($(wc -l < "$dir/zoo.csv") - 1))
echo "zoo: $rows rows in ${dir#$root/}/ (exit statuses in run.json)"
