#!/usr/bin/env bash
# How validation/reports/h200/scored_{shipped,calibrated,calibrated_rederived}/ were made: gpusim validate --from the H200's
# small and scale bundles, with the shipped h100 config ($1 = shipped), the H200's calibrate output as
# written on 2026-11-26 ($1 = calibrated) or re-derived from its measurements by today's calibrate.py
# ($1 = calibrated_rederived), on a 16-core device machine (one call there runs 10 minutes at most).
# matmul_regtile is simulated at its small-tier sizes only: its N = 512 launch alone takes over
# 10 minutes on one of that machine's cores. Run from the repository root with OUT set.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD; export PATH=/usr/local/cuda/bin:$PATH
ALL=$(python3 -c "from gpusim.suite import CASES; print(*(c for c in CASES if c != 'matmul_regtile'))")
H="validation/reports/h200/small validation/reports/h200/scale"
X=""; [ "$1" = calibrated ] && X="--config-overrides validation/reports/h200/calibrate_1.toml"
[ "$1" = calibrated_rederived ] && X="--config-overrides validation/reports/h200/calibrate_1_rederived.toml"
mkdir -p $OUT/$1
python3 -m gpusim validate --from $H --cases $ALL $X --out /tmp/a_$1 --jobs 15 > $OUT/$1/log_all_but_regtile.txt 2>&1 &
python3 -m gpusim validate --from validation/reports/h200/small --tier small --cases matmul_regtile $X --out /tmp/b_$1 --jobs 1 > $OUT/$1/log_regtile_small.txt 2>&1 &
wait
gzip -9 -n -c /tmp/a_$1/validation_h200.json > $OUT/$1/validation_h200.json.gz; gzip -9 -n -c /tmp/b_$1/validation_h200.json > $OUT/$1/validation_h200_regtile_small.json.gz
tail -n 1 $OUT/$1/log_all_but_regtile.txt
