export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/d
nvidia-smi --query-gpu=name --format=csv,noheader
nvidia-smi topo -m > /tmp/d/topo.txt; nvidia-smi > /tmp/d/nvidia_smi.txt
timeout 240 python3 validation/probes/ddp_step.py ddp /tmp/d/ddp.json --rounds 3 > /tmp/d/ddp_log.txt 2>&1; echo "ddp rc=$?"; grep step /tmp/d/ddp_log.txt | tail -4
timeout 300 python3 validation/probes/ddp_step.py collectives /tmp/d/collectives.json --rounds 3 > /tmp/d/collectives_log.txt 2>&1; echo "coll rc=$?"; grep -c all_reduce /tmp/d/collectives_log.txt
cp validation/probes/ddp_step.py /tmp/d/; tar czf $OUT/d.tgz -C /tmp d
