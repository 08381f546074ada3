# session 39: fit-half stall breakdowns, H100 (ncu) and gpusim side by side
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/v; nvidia-smi -L > /tmp/v/nvidia_smi.txt
CASES="fft1024_shared bgemm16 bgemm32_reg stencil2d_5pt stencil3d_7pt stencil3d_coarse scan_lookback hash_insert_75 hash_insert_half scatter gemv_warp_row bfs_topdown fft_stage_first"
(timeout 540 python3 validation/probes/corpus_stalls.py --sim /tmp/v/sim.json --cases $CASES --jobs 13 > /tmp/v/sim_log.txt 2>&1; echo "sim rc=$?" >> /tmp/v/sim_log.txt) &
timeout 400 ncu --clock-control none --metrics $(python3 validation/probes/corpus_stalls.py --metrics) --csv --page raw --print-units base --log-file /tmp/v/corpus_stalls.csv python3 validation/corpus/on_gpu.py /tmp/v/digests.json --cases $CASES > /tmp/v/ncu_log.txt 2>&1; echo "ncu rc=$?"
wait; tail -2 /tmp/v/sim_log.txt
python3 validation/probes/corpus_stalls.py --table /tmp/v/corpus_stalls.csv /tmp/v/sim.json > /tmp/v/table.md 2>&1; head -c 3000 /tmp/v/table.md
tar czf $OUT/v.tgz -C /tmp v
