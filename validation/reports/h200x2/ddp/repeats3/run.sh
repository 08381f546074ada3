export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p $OUT/d
nvidia-smi --query-gpu=name --format=csv,noheader
nvidia-smi topo -m > $OUT/d/topo.txt
for i in 1 2 3; do timeout 120 python3 validation/probes/ddp_step.py ddp $OUT/d/ddp_repeat$i.json > $OUT/d/ddp_repeat${i}_log.txt 2>&1; echo "ddp $i rc=$?"; grep step $OUT/d/ddp_repeat${i}_log.txt; done
for i in 1 2; do timeout 150 python3 validation/probes/ddp_step.py collectives $OUT/d/collectives_repeat$i.json > $OUT/d/collectives_repeat${i}_log.txt 2>&1; echo "coll $i rc=$?"; grep all_reduce $OUT/d/collectives_repeat${i}_log.txt; done
