#!/usr/bin/env bash
# On a GPU the shipped config was not fitted to (an H200): `gpusim calibrate`, then the small and
# scale tiers' hardware bundles, so that `gpusim validate --from` can score the shipped h100 config
# and the calibrated override file on the same launches without a GPU. On an H100 it writes only
# the GPU's name (the shipped config is that GPU's own fit). Usage (device machine, repo root):
#   bash validation/probes/other_gpu.sh OUT_DIR
set -uo pipefail
out=${1:?usage: other_gpu.sh OUT_DIR}
mkdir -p "$out"
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "$name" | tee "$out/gpu_name.txt"
case "$name" in *H100*) echo "an H100: nothing to calibrate against the shipped h100 config"; exit 0 ;; esac
start=$SECONDS
python3 -m gpusim calibrate --out "$out/calibrate.toml" --json "$out/calibrate.json" 2>&1 | tee "$out/calibrate_log.txt"
echo "calibrate: $((SECONDS - start)) s"
python3 -m gpusim validate --hardware-only --tier small --out "$out/small" 2>&1 | tail -20 | tee "$out/small_log.txt"
echo "small tier: $((SECONDS - start)) s"
timeout $((540 - SECONDS)) python3 -m gpusim validate --hardware-only --tier scale --out "$out/scale" 2>&1 \
    | tail -20 | tee "$out/scale_log.txt"
echo "scale tier: $((SECONDS - start)) s"
