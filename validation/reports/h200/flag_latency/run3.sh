# session 40: flag_latency run 3 (adds chase_each2 and chase_wide)
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/v; nvidia-smi -L > /tmp/v/nvidia_smi.txt
timeout 200 python3 validation/probes/flag_latency.py --gpu /tmp/v/flag_latency_gpu.json --repeats 3 > /tmp/v/gpu_log.txt 2>&1; echo "gpu rc=$?"; tail -4 /tmp/v/gpu_log.txt
tar czf $OUT/v.tgz -C /tmp v
