#!/bin/bash
# l1_reprobe.py's dist-1 launches on gpusim under L1 capacities and replacement policies (16 processes)
cd "$(dirname "$0")/../../../.." && bash .whl/setup.sh >/dev/null  # the device machine: gpusim's wheels carried in .whl/ (git-ignored)
export PYTHONPATH=.
CSV=validation/reports/h200/l1_reprobe/l1_reprobe.csv
L=("dist 1 c1" "dist 1 c2" "dist 1 c4" "dist 1 c6" "dist 1 c8")
run() { python3 validation/probes/l1_reprobe.py sim $CSV $OUT/$1.json --jobs $2 --labels "${L[@]}" --set "${@:3}" > $OUT/$1_log.txt 2>&1; }
run lru1248 2 l1.carveout_kib=100 &
run lru992 2 l1.carveout_kib=132 &
run lru736 2 l1.carveout_kib=164 &
run rnd1792 2 'l1.replacement="random"' &
run rnd1248 2 'l1.replacement="random"' l1.carveout_kib=100 &
run rnd992 2 'l1.replacement="random"' l1.carveout_kib=132 &
run rnd736 2 'l1.replacement="random"' l1.carveout_kib=164 &
run lru480 2 l1.carveout_kib=196 &
wait
for f in $OUT/*_log.txt; do echo "== $f"; cat $f | cut -c1-120; done
