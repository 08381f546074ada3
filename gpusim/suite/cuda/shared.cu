// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/shared.ptx shared.cu
//
// Shared-memory bank conflicts (seed 001): 32 banks, 4 bytes wide,
// bank = (byte_address / 4) % 32.  A 32x32 tile is transposed through
// shared memory; the row write tile[ty][tx] is conflict-free, the column
// read tile[tx][ty] (word index tx*32 + ty) is what the kernels vary:
//   transpose_naive      no shared memory: coalesced reads, strided (uncoalesced) writes
//   transpose_conflict   tile[32][32]: column read is a 32-way bank conflict
//   transpose_padded     tile[32][33]: padding breaks the alignment, no conflict
//   transpose_swizzled   tile[32][32] with column index (ty ^ tx): XOR swizzle, no conflict
//   shared_stride        read shmem[(t * stride) % 1024]: gcd(stride, 32)-way conflict
// out (n x n) = in^T (n x n), row-major; block (32, 32), grid (ceil(n/32), ceil(n/32)).

#define TILE 32

extern "C" __global__ void transpose_naive(const float *in, float *out, int n)
{
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) out[x * n + y] = in[y * n + x];
}

extern "C" __global__ void transpose_conflict(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void transpose_padded(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}

extern "C" __global__ void transpose_swizzled(const float *in, float *out, int n)
{
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) tile[threadIdx.y][threadIdx.x ^ threadIdx.y] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) out[y * n + x] = tile[threadIdx.x][threadIdx.y ^ threadIdx.x];
}

// Each block stages 1024 consecutive inputs in shared memory (conflict-free),
// then thread t reads word (t * stride) % 1024:
//   out[blockIdx.x * blockDim.x + t] = in[blockIdx.x * 1024 + (t * stride) % 1024]
// in holds gridDim.x * 1024 floats.
#define SBUF 1024
extern "C" __global__ void shared_stride(const float *in, float *out, unsigned int stride)
{
    __shared__ float buf[SBUF];
    for (unsigned int j = threadIdx.x; j < SBUF; j += blockDim.x)
        buf[j] = in[blockIdx.x * SBUF + j];
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * stride) % SBUF];
}
