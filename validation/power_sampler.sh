#!/usr/bin/env bash
# Sample one GPU's board power (and clocks, utilisation, temperature) every 50 ms into a CSV,
# until killed. Run it alongside the harness; run_all.sh starts and stops it.
# Usage: validation/power_sampler.sh OUTPUT.csv [GPU-INDEX] [PERIOD-MS]
set -euo pipefail
out="${1:?usage: power_sampler.sh OUTPUT.csv [GPU-INDEX] [PERIOD-MS]}"
gpu="${2:-0}"
period="${3:-50}"
echo "timestamp,power_w,sm_clock_mhz,mem_clock_mhz,utilization_pct,temperature_c" > "$out"
# nvidia-smi prints its timestamp in local time with a fixed format; analyze.py converts it.
exec nvidia-smi -i "$gpu" \
  --query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,utilization.gpu,temperature.gpu \
  --format=csv,noheader,nounits -lms "$period" >> "$out"
