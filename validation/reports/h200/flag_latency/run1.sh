# session 40: flag_latency probe (GPU, then gpusim on the device's cores)
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/v; nvidia-smi -L > /tmp/v/nvidia_smi.txt
(timeout 500 python3 validation/probes/flag_latency.py --sim /tmp/v/flag_latency_sim.json --jobs 14 > /tmp/v/sim_log.txt 2>&1; echo "sim rc=$?" >> /tmp/v/sim_log.txt) &
timeout 200 python3 validation/probes/flag_latency.py --gpu /tmp/v/flag_latency_h100.json --repeats 5 > /tmp/v/gpu_log.txt 2>&1; echo "gpu rc=$?"; cat /tmp/v/gpu_log.txt
wait; tail -3 /tmp/v/sim_log.txt
python3 validation/probes/flag_latency.py --table /tmp/v/flag_latency_h100.json /tmp/v/flag_latency_sim.json > /tmp/v/table.md 2>&1; cat /tmp/v/table.md
tar czf $OUT/v.tgz -C /tmp v
