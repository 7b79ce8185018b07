#!/usr/bin/env bash
# Run the whole validation on the GPU of this machine; the raw data and a report of the paper
# models go to validation/results/<gpu>-<date>/ (see docs/validation/README.md to commit them).
#
# Usage: validation/run_all.sh [--record HARDWARE.json] [--link LINK.json] [--gpu INDEX] [--quick]
#   --record  the database record of this GPU (JSON with the seed vocabulary: either one
#             component {"name":..., "attributes": [...]} or the name of a GPU in
#             hwdb/seed/hardware.json, e.g. --record "H100 SXM5 80GB"); without it the
#             analysis builds a record from what the CUDA runtime reports.
#   --link    the host-device bus record (same forms; e.g. "PCIe 3.0 16x"); without it the
#             transfer parameters are fitted from this run and bandwidth comes from nvidia-smi.
#   --quick   fewer repetitions and points (a smoke run, minutes instead of tens of minutes).
# Needs: nvcc (CUDA <= 12.x for sm_52..sm_70), nvidia-smi, python3 with numpy (the project's
# .venv is used when present). Results go to validation/results/<gpu>-<date>/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
record="" ; link="" ; gpu=0 ; quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --record) record="$2"; shift 2 ;;
    --link) link="$2"; shift 2 ;;
    --gpu) gpu="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    *) echo "run_all.sh: unknown argument $1" >&2; exit 1 ;;
  esac
done
python="$root/.venv/bin/python"; [ -x "$python" ] || python=python3
name="$(nvidia-smi -i "$gpu" --query-gpu=name --format=csv,noheader | head -1)"
slug="$(echo "$name" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/[^a-z0-9]\+/-/g; s/^-//; s/-$//')"
dir="$here/results/$slug-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$dir"
"$here/build.sh" "$dir/saxpy2" > "$dir/build.log" 2>&1
"$here/build.sh" "$dir/gpuprofile" "$here/gpuprofile.cu" >> "$dir/build.log" 2>&1
cuobjdump -sass "$dir/saxpy2" > "$dir/saxpy2.sass" 2>&1 || true
cuobjdump -sass "$dir/gpuprofile" > "$dir/gpuprofile.sass" 2>&1 || true
nvidia-smi -i "$gpu" --query-gpu=name,pcie.link.gen.max,pcie.link.width.max,power.limit,driver_version \
  --format=csv,noheader,nounits > "$dir/nvidia-smi.csv"
# the machine as it was: clocks, power limits, link, driver (for the data's README)
nvidia-smi -i "$gpu" -q > "$dir/nvidia-smi-q.txt" 2>&1 || true
{ uname -a; nvcc --version 2>/dev/null | tail -2; } > "$dir/host.txt" 2>&1 || true

reps=10; intensities="1,2,4,8,16,32,64,128,256,512,1024,2048,4096"
warps="2,4,6,8,12,16,20,24,28,32,40,48,56,64"
sizes="1000,3000,10000,30000,100000,300000,1000000,3000000,10000000,20000000,50000000,100000000"
if [ "$quick" = 1 ]; then reps=3; intensities="1,16,256,4096"; warps="4,16,32,64"; sizes="10000,1000000,10000000,30000000"; fi

"$here/power_sampler.sh" "$dir/power.csv" "$gpu" 50 &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT
sleep 3   # idle power before any work (the analysis takes P_s from the first samples)
echo "$(date +%s.%N)" > "$dir/idle_end_epoch"
bin="$dir/saxpy2"; csv="$dir/measurements.csv"
common=(--device "$gpu" --out "$csv" --reps "$reps")
"$bin" "${common[@]}" --device-info "$dir/device.json" --scenario intensity --n 10000000 --block 256 --a "$intensities"
"$bin" "${common[@]}" --scenario occupancy --n 10000000 --block 32,64 --a 64 --warps "$warps"
"$bin" "${common[@]}" --scenario size --n "$sizes" --block 256 --a 1
"$bin" --device "$gpu" --out "$csv" --reps 1 --scenario energy --block 1024 --a 4096 --grids-auto --energy-window-s 2
if [ "$quick" = 0 ]; then
  # the per-warp latency at higher intensities, and the transfer curves from pinned memory
  "$bin" "${common[@]}" --scenario occupancy-a256 --n 10000000 --block 32,64 --a 256 --warps "$warps"
  "$bin" "${common[@]}" --scenario occupancy-a1024 --n 10000000 --block 64 --a 1024 --warps 2,8,32,64
  "$bin" --device "$gpu" --out "$csv" --reps 5 --scenario size-pinned --pinned --n "$sizes" --block 256 --a 1
  # whole applications back to back in windows: the energy of a whole run (docs/energy.md)
  "$bin" --device "$gpu" --out "$csv" --reps 3 --scenario app-energy --n 10000000 --block 256 --a 1 --app-window-s 3
fi
# the GPU's profile for the current-architecture models (launch, latencies, bandwidth and the
# L2 knee, transfer curves, power by state); its power windows are in the same power log
profile_args=(--device "$gpu" --out "$dir/profile.csv")
[ "$quick" = 1 ] && profile_args+=(--quick)
"$dir/gpuprofile" "${profile_args[@]}" 2> "$dir/gpuprofile.log"
sleep 1
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
trap - EXIT

args=(--measurements "$csv" --device-info "$dir/device.json" --power "$dir/power.csv"
      --idle-end-epoch "$(cat "$dir/idle_end_epoch")" --nvidia-smi "$dir/nvidia-smi.csv"
      --report "$dir/report.md")
[ -n "$record" ] && args+=(--record "$record")
[ -n "$link" ] && args+=(--link "$link")
cd "$root"
"$python" -m validation.analyze "${args[@]}"
echo "report: ${dir#$root/}/report.md; to commit the run, copy its data files to validation/data/"
