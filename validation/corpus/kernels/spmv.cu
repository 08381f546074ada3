// Corpus family "spmv": sparse matrix times dense vector, y = A x, in four storage formats.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 14
// "Sparse matrix computation" (COO with atomics, CSR one thread per row, ELL column-major with
// padding) and Bell & Garland, "Implementing Sparse Matrix-Vector Multiplication on
// Throughput-Oriented Processors" (SC 2009: CSR "vector", one warp per row).

// CSR, one thread per row.
extern "C" __global__ void spmv_csr_scalar(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int e = row_ptr[r]; e < row_ptr[r + 1]; ++e)
            s += vals[e] * x[cols[e]];
        y[r] = s;
    }
}

// CSR, one warp per row: lanes take every 32nd nonzero, then a shuffle reduction.
extern "C" __global__ void spmv_csr_vector(const int* __restrict__ row_ptr, const int* __restrict__ cols,
                                           const float* __restrict__ vals, const float* __restrict__ x,
                                           float* __restrict__ y, int rows)
{
    int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (r >= rows)
        return;
    float s = 0.0f;
    for (int e = row_ptr[r] + lane; e < row_ptr[r + 1]; e += 32)
        s += vals[e] * x[cols[e]];
    for (int d = 16; d > 0; d /= 2)
        s += __shfl_down_sync(0xffffffffu, s, d);
    if (lane == 0)
        y[r] = s;
}

// ELL: width nonzeros per row (padded with zero values at column 0), stored column-major
// (entry k of row r at k * rows + r), one thread per row.
extern "C" __global__ void spmv_ell(const int* __restrict__ cols, const float* __restrict__ vals,
                                    const float* __restrict__ x, float* __restrict__ y, int rows, int width)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int k = 0; k < width; ++k)
            s += vals[k * rows + r] * x[cols[k * rows + r]];
        y[r] = s;
    }
}

// COO: one thread per nonzero, accumulated with float atomics (y starts at zero).
extern "C" __global__ void spmv_coo(const int* __restrict__ row_idx, const int* __restrict__ cols,
                                    const float* __restrict__ vals, const float* __restrict__ x, float* y, int nnz)
{
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < nnz)
        atomicAdd(&y[row_idx[e]], vals[e] * x[cols[e]]);
}
