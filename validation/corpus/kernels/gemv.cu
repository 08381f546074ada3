// Corpus family "gemv": dense matrix-vector products and batches of small matrix products.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 3
// (matrix-vector multiplication exercise) and ch. 5 "Memory architecture and data locality"
// (tiled matrix multiplication in shared memory), and the batched small-GEMM layout of
// cuBLAS's gemmStridedBatched (one matrix after another in memory).

// y = A x, A rows x cols row-major, one thread per row (each thread walks its own row).
extern "C" __global__ void gemv_thread_row(const float* __restrict__ A, const float* __restrict__ x,
                                           float* __restrict__ y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        const float* a = A + (size_t)r * cols;
        float s = 0.0f;
        for (int c = 0; c < cols; ++c)
            s += a[c] * x[c];
        y[r] = s;
    }
}

// y = A x, one warp per row: lanes read the row coalesced, then a shuffle reduction.
extern "C" __global__ void gemv_warp_row(const float* __restrict__ A, const float* __restrict__ x,
                                         float* __restrict__ y, int rows, int cols)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    const float* a = A + (size_t)r * cols;
    float s = 0.0f;
    for (int c = lane; c < cols; c += 32)
        s += a[c] * x[c];
    for (int d = 16; d > 0; d /= 2)
        s += __shfl_down_sync(0xffffffffu, s, d);
    if (lane == 0)
        y[r] = s;
}

// C[b] = A[b] B[b], 16 x 16 matrices, one CTA of 16 x 16 threads per matrix, both operands
// staged in shared memory.
extern "C" __global__ void bgemm16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ float as[16][16];
    __shared__ float bs[16][17];
    size_t off = (size_t)blockIdx.x * 256;
    int tx = threadIdx.x, ty = threadIdx.y;
    as[ty][tx] = A[off + ty * 16 + tx];
    bs[ty][tx] = B[off + ty * 16 + tx];
    __syncthreads();
    float s = 0.0f;
    for (int k = 0; k < 16; ++k)
        s += as[ty][k] * bs[k][tx];
    C[off + ty * 16 + tx] = s;
}

// C[b] = A[b] B[b], 32 x 32 matrices, one CTA of 32 x 8 threads per matrix; each thread computes
// 4 outputs of one column (rows ty, ty + 8, ty + 16, ty + 24), reusing each B element from a register.
extern "C" __global__ void bgemm32_reg(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C)
{
    __shared__ float as[32][33];
    __shared__ float bs[32][32];
    size_t off = (size_t)blockIdx.x * 1024;
    int tx = threadIdx.x, ty = threadIdx.y;
    for (int r = ty; r < 32; r += 8) {
        as[r][tx] = A[off + r * 32 + tx];
        bs[r][tx] = B[off + r * 32 + tx];
    }
    __syncthreads();
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (int k = 0; k < 32; ++k) {
        float b = bs[k][tx];
        s0 += as[ty][k] * b;
        s1 += as[ty + 8][k] * b;
        s2 += as[ty + 16][k] * b;
        s3 += as[ty + 24][k] * b;
    }
    C[off + ty * 32 + tx] = s0;
    C[off + (ty + 8) * 32 + tx] = s1;
    C[off + (ty + 16) * 32 + tx] = s2;
    C[off + (ty + 24) * 32 + tx] = s3;
}
