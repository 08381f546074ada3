// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/ilp.ptx ilp.cu
//
// Instruction-level parallelism, as seed 001 teaches it: c[idx] += a[idx] * b[idx]
//   ilp_fma_1                one element per thread: load, load, load -> FFMA -> store, all dependent
//   ilp_fma_unroll2_grid     two elements per thread, grid stride (blockDim.x * gridDim.x):
//                            `#pragma unroll 2`; the stride is not known at compile time
//   ilp_fma_unroll2_block    two elements per thread, constant block stride THREAD_BLOCK_DIM:
//                            addresses statically analysable, both loads issue back to back
//   ilp_fma_unroll4_block    the same with four elements per thread
// Changes from the notes: extern "C" and an explicit n.  A thread whose whole
// chunk is in range runs the unrolled loop with no per-element guard (so the
// independent loads can be scheduled together); the last, partial chunk takes a
// guarded tail path.  blockDim.x must be THREAD_BLOCK_DIM (256); launch
// grid = ceil(n / (ILP * 256)).
// Note: the PTX nvcc emits keeps source order; the overlap is ptxas's (SASS)
// scheduling, or the simulator's timing model, not a reordering in the PTX.

#define THREAD_BLOCK_DIM 256

extern "C" __global__ void ilp_fma_1(const float *__restrict__ a, const float *__restrict__ b, float *c, unsigned int n)
{
    unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) c[idx] += a[idx] * b[idx];
}

// The full-chunk path has no per-element guard, so the compiler is free to
// schedule the unrolled loads together; the tail path keeps the guards.
extern "C" __global__ void ilp_fma_unroll2_grid(const float *__restrict__ a, const float *__restrict__ b, float *c, unsigned int n)
{
    unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int stride = blockDim.x * gridDim.x;
    if (tid + stride < n) {
#pragma unroll 2
        for (int i = 0; i < 2; i++) {
            const unsigned int idx = tid + i * stride;
            c[idx] += a[idx] * b[idx];
        }
    } else if (tid < n) {
        c[tid] += a[tid] * b[tid];
    }
}

extern "C" __global__ void ilp_fma_unroll2_block(const float *__restrict__ a, const float *__restrict__ b, float *c, unsigned int n)
{
    unsigned int off = 2 * THREAD_BLOCK_DIM * blockIdx.x + threadIdx.x;
    if (off + THREAD_BLOCK_DIM < n) {
#pragma unroll 2
        for (int i = 0; i < 2; i++) {
            const unsigned int idx = off + i * THREAD_BLOCK_DIM;
            c[idx] += a[idx] * b[idx];
        }
    } else if (off < n) {
        c[off] += a[off] * b[off];
    }
}

extern "C" __global__ void ilp_fma_unroll4_block(const float *__restrict__ a, const float *__restrict__ b, float *c, unsigned int n)
{
    unsigned int off = 4 * THREAD_BLOCK_DIM * blockIdx.x + threadIdx.x;
    if (off + 3 * THREAD_BLOCK_DIM < n) {
#pragma unroll 4
        for (int i = 0; i < 4; i++) {
            const unsigned int idx = off + i * THREAD_BLOCK_DIM;
            c[idx] += a[idx] * b[idx];
        }
    } else {
        for (int i = 0; i < 4; i++) {
            const unsigned int idx = off + i * THREAD_BLOCK_DIM;
            if (idx < n) c[idx] += a[idx] * b[idx];
        }
    }
}
