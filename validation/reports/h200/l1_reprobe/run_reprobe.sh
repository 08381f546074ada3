#!/bin/bash
# l1_reprobe.py under ncu on the GPU, then gpusim's side of the same launches (10 processes)
cd "$(dirname "$0")/../../../.." && bash .whl/setup.sh >/dev/null  # the device machine: gpusim's wheels carried in .whl/ (git-ignored)
export PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv > $OUT/nvidia_smi.txt
ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,launch__shared_mem_config_size \
  --csv --page raw --print-units base --log-file $OUT/l1_reprobe.csv python3 validation/probes/l1_reprobe.py > $OUT/gpu_log.txt 2>&1
tail -3 $OUT/gpu_log.txt
python3 validation/probes/l1_reprobe.py sim $OUT/l1_reprobe.csv $OUT/sim.json --jobs 10 > $OUT/sim_log.txt 2>&1
cat $OUT/sim_log.txt
