#!/bin/bash
# l1_sets.py under ncu on the GPU, then gpusim's side of the same launches (16 processes); on the device
# machine, gpusim's wheels carried in .whl/ (git-ignored)
cd "$(dirname "$0")/../../../.." && bash .whl/setup.sh >/dev/null
export PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv > $OUT/nvidia_smi.txt
ncu --clock-control none --metrics sm__cycles_elapsed.avg,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct,launch__shared_mem_config_size \
  --csv --page raw --print-units base --log-file $OUT/l1_sets.csv python3 validation/probes/l1_sets.py > $OUT/gpu_log.txt 2>&1
tail -2 $OUT/gpu_log.txt
python3 validation/probes/l1_sets.py sim $OUT/l1_sets.csv $OUT/sim.json --jobs 16 > $OUT/sim_log.txt 2>&1
cat $OUT/sim_log.txt
