# session 40: flag_latency's per-load spread; store_cleaning at 4-12 MiB
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/v; nvidia-smi -L > /tmp/v/nvidia_smi.txt
timeout 200 python3 validation/probes/flag_latency.py --gpu /tmp/v/flag_latency_gpu.json --repeats 3 > /tmp/v/gpu_log.txt 2>&1; echo "gpu rc=$?"; tail -3 /tmp/v/gpu_log.txt
timeout 200 ncu --clock-control none --metrics sm__cycles_elapsed.avg,gpu__time_duration.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --page raw --print-units base --log-file /tmp/v/store_cleaning_small.csv python3 validation/probes/store_cleaning.py --footprints 4 5 6 7 8 10 12 --iters 16 > /tmp/v/store_cleaning_small_log.txt 2>&1; echo "ncu rc=$?"
