# session 39: does the L1 data stage serve shared and global loads together? (data_stage probe)
export PATH=/usr/local/cuda/bin:$PATH
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/v; nvidia-smi -L > /tmp/v/nvidia_smi.txt
(timeout 400 python3 validation/probes/data_stage.py --sim /tmp/v/data_stage_sim.json --jobs 14 > /tmp/v/sim_log.txt 2>&1; echo "sim rc=$?" >> /tmp/v/sim_log.txt) &
timeout 300 ncu --clock-control none --metrics sm__cycles_elapsed.avg,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio --csv --page raw --print-units base --log-file /tmp/v/data_stage.csv python3 validation/probes/data_stage.py > /tmp/v/data_stage_log.txt 2>&1; echo "ncu rc=$?"
wait; tail -2 /tmp/v/sim_log.txt
python3 validation/probes/data_stage.py --table /tmp/v/data_stage.csv /tmp/v/data_stage_sim.json > /tmp/v/table.md 2>&1; cat /tmp/v/table.md
tar czf $OUT/v.tgz -C /tmp v
