#!/usr/bin/env bash
# How validation/reports/h200/scored_{shipped,calibrated}/ were made: gpusim validate --from the H200's
# small and scale bundles, with the shipped h100 config ($1 = shipped) or the H200's calibrate
# output ($1 = calibrated), on a 16-core device machine (one call there runs 10 minutes at most).
# matmul_regtile is simulated at its small-tier sizes only: its N = 512 launch alone takes over
# 10 minutes on one of that machine's cores. Run from the repository root with OUT set.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD; export PATH=/usr/local/cuda/bin:$PATH
ALL="aos_update axpy_half conv1d_naive conv1d_shared copy_block_size copy_grid_stride copy_occupancy copy_offset copy_stride copy_vec4 divergent_branch divergent_loop gmem_offset_u32 gmem_stride_u32 gmem_uniform_u32 hgemm_mma ilp_fma_1 ilp_fma_unroll2_block ilp_fma_unroll2_grid ilp_fma_unroll4_block local_hist8 matmul_naive matmul_smem_regtile matmul_tiled reduce_atomic_f32 reduce_atomic_int reduce_v0 reduce_v1 reduce_v2 reduce_v3 reduce_v4 reduce_v5 reduce_v6 reduce_v7 reduce_v7_down shared_stride smem_same_word_u32 smem_stride_u32 smem_stride_v2_u32 smem_stride_v4_u32 soa_update transpose_conflict transpose_naive transpose_padded transpose_swizzled uniform_branch warp_scan warp_vote"
H="validation/reports/h200/small validation/reports/h200/scale"
X=""; [ "$1" = calibrated ] && X="--config-overrides validation/reports/h200/calibrate_1.toml"
mkdir -p $OUT/$1
python3 -m gpusim validate --from $H --cases $ALL $X --out /tmp/a_$1 --jobs 15 > $OUT/$1/log_all_but_regtile.txt 2>&1 &
python3 -m gpusim validate --from validation/reports/h200/small --tier small --cases matmul_regtile $X --out /tmp/b_$1 --jobs 1 > $OUT/$1/log_regtile_small.txt 2>&1 &
wait
cp /tmp/a_$1/validation_h200.json $OUT/$1/validation_h200.json; cp /tmp/b_$1/validation_h200.json $OUT/$1/validation_h200_regtile_small.json
tail -n 1 $OUT/$1/log_all_but_regtile.txt
