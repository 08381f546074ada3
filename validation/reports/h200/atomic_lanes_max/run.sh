#!/bin/bash
# atomic_lanes.py --max under ncu on the GPU, then gpusim's side of the same launches (8 processes); on the device
# machine, gpusim's wheels carried in .whl/ (git-ignored)
cd "$(dirname "$0")/../../../.." && bash .whl/setup.sh >/dev/null
export PYTHONPATH=.
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,memory.total --format=csv > $OUT/nvidia_smi.txt
ncu --clock-control none --metrics sm__cycles_elapsed.avg,lts__t_requests_srcunit_tex_op_atom.sum,lts__t_requests_srcunit_tex_op_red.sum,lts__t_sectors_op_atom.sum,lts__t_sectors_op_red.sum \
  --csv --page raw --print-units base --log-file $OUT/atomic_lanes_max.csv python3 validation/probes/atomic_lanes.py --max > $OUT/gpu_log.txt 2>&1
tail -2 $OUT/gpu_log.txt
L=("L1 s1 d8 m4" "L1 s4 d8 m1" "random64" "L1 s1 d8 m4 max" "L1 s4 d8 m1 max" "random64 max")
python3 validation/probes/atomic_lanes.py sim $OUT/atomic_lanes_max.csv $OUT/sim.json --jobs 6 --labels "${L[@]}" > $OUT/sim_log.txt 2>&1
cat $OUT/sim_log.txt
