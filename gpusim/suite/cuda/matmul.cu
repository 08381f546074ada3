// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/matmul.ptx matmul.cu
//
// Matrix multiplication, as the course notes teach it (seeds 000, 002, 004).
// Matrices are row-major float arrays.  Changes from the notes: extern "C",
// explicit sizes, and bounds guards where the notes assume exact multiples.
//
//   matmul_naive          one thread per output element (seed 000/002 `mm`),
//                         x (the row) from threadIdx.x: uncoalesced, 2N^3 loads
//   matmul_tiled          16x16 shared-memory tiles (seed 004 tiled_matmul_kernel)
//   matmul_regtile        register tiling: each thread computes a VxV block
//   matmul_smem_regtile   block tiling in shared memory (L x L per block, S-deep
//                         k slices, cooperative fetching) + VxV register tiles;
//                         like the notes it reads A as A[k][row] (A given k-major,
//                         i.e. it computes C = At^T * B for a K x N array At)

// ---------------------------------------------------------------- naive
// C[x][y] = sum_k A[x][k] * B[k][y];  launch block (32, 32), grid (ceil(N/32), ceil(N/32))
extern "C" __global__ void matmul_naive(const float *A, const float *B, float *C, int N)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= N || y >= N) return;
    float result = 0.0f;
    for (int k = 0; k < N; ++k) {
        result += A[x * N + k] * B[k * N + y];
    }
    C[x * N + y] = result;
}

// ---------------------------------------------------------------- tiled
// out (h x w) = M (h x k) * N (k x w);  block (16, 16), grid (ceil(w/16), ceil(h/16))
constexpr int TILE_SIZE = 16;

extern "C" __global__ void matmul_tiled(float *out, float *M, float *N, int h, int w, int k)
{
    __shared__ float M_tile[TILE_SIZE][TILE_SIZE];
    __shared__ float N_tile[TILE_SIZE][TILE_SIZE];

    // idxes into tile
    int ir = threadIdx.y;
    int ic = threadIdx.x;

    int r = blockIdx.y * blockDim.y + threadIdx.y;
    int c = blockIdx.x * blockDim.x + threadIdx.x;

    // note: cannot just exit if we want to do padding!
    float res = 0.0f;
    for (int K_tileidx = 0; K_tileidx < (k + TILE_SIZE - 1) / TILE_SIZE; K_tileidx++) {
        // threadIdx.x is the fastest moving index --> coalesced memory access
        M_tile[ir][ic] = (((r < h) && (K_tileidx * TILE_SIZE + ic < k)) ? M[r * k + K_tileidx * TILE_SIZE + ic] : 0.f);
        N_tile[ir][ic] = ((((K_tileidx * TILE_SIZE + ir) < k) && (c < w)) ? N[(K_tileidx * TILE_SIZE + ir) * w + c] : 0.f);
        __syncthreads();
        for (int idx = 0; idx < TILE_SIZE; idx++) {
            res += M_tile[ir][idx] * N_tile[idx][ic];
        }
        __syncthreads(); // important! (why?)
    }
    if ((r < h) && (c < w)) {
        out[r * w + c] = res;
    }
}

// ---------------------------------------------------------------- register tile
// Each thread computes C[xbase*V : xbase*V+V, ybase*V : ybase*V+V].
// N must be a multiple of V.  block (16, 16), grid (ceil(N/V/16), ceil(N/V/16))
#define V 4

extern "C" __global__ void matmul_regtile(const float *A, const float *B, float *C, int N)
{
    int ybase = blockIdx.y * blockDim.y + threadIdx.y;
    int xbase = blockIdx.x * blockDim.x + threadIdx.x;
    if (xbase * V >= N || ybase * V >= N) return;
    float c[V][V] = {{0.0f}};
    float a[V], b[V];
    for (int k = 0; k < N; ++k) {
#pragma unroll
        for (int x = 0; x < V; ++x) a[x] = A[(xbase * V + x) * N + k];
#pragma unroll
        for (int y = 0; y < V; ++y) b[y] = B[k * N + ybase * V + y];
#pragma unroll
        for (int y = 0; y < V; ++y) {
#pragma unroll
            for (int x = 0; x < V; ++x) {
                c[x][y] += a[x] * b[y];
            }
        }
    }
#pragma unroll
    for (int x = 0; x < V; ++x)
#pragma unroll
        for (int y = 0; y < V; ++y)
            C[(xbase * V + x) * N + ybase * V + y] = c[x][y];
}

// ---------------------------------------------------------------- shared + register tile
// C[row][col] = sum_k At[k][row] * B[k][col]   (At is K x N, B is K x N, C is N x N)
// Block computes an L x L tile of C with blockDim (L/V, L/V) threads;
// N must be a multiple of L.  block (16, 16), grid (N/L, N/L)
#define L 64
#define S 8

extern "C" __global__ void matmul_smem_regtile(const float *At, const float *B, float *C, int N)
{
    __shared__ float sA[S][L], sB[S][L];
    float c[V][V] = {{0.0f}};
    float a[V], b[V];
    int yblock = blockIdx.y;
    int xblock = blockIdx.x;
    int nthreads = blockDim.y * blockDim.x;
    int tid = threadIdx.y * blockDim.x + threadIdx.x;

    for (int ko = 0; ko < N; ko += S) {
        __syncthreads();
        // cooperative fetching:
        //   sA[:, :] = At[ko : ko + S, yblock * L : yblock * L + L]
        //   sB[:, :] = B[ko : ko + S, xblock * L : xblock * L + L]
        for (int j = 0; j < L * S / nthreads; ++j) {
            int y = (j * nthreads + tid) / L;
            int x = (j * nthreads + tid) % L;
            sA[y][x] = At[(ko + y) * N + yblock * L + x];
            sB[y][x] = B[(ko + y) * N + xblock * L + x];
        }
        __syncthreads();
        for (int ki = 0; ki < S; ++ki) {
#pragma unroll
            for (int v = 0; v < V; ++v) a[v] = sA[ki][threadIdx.y * V + v];
#pragma unroll
            for (int v = 0; v < V; ++v) b[v] = sB[ki][threadIdx.x * V + v];
#pragma unroll
            for (int y = 0; y < V; ++y) {
#pragma unroll
                for (int x = 0; x < V; ++x) {
                    c[y][x] += a[y] * b[x];
                }
            }
        }
    }
    int ybase = blockIdx.y * blockDim.y + threadIdx.y;
    int xbase = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int y = 0; y < V; ++y)
#pragma unroll
        for (int x = 0; x < V; ++x)
            C[(ybase * V + y) * N + xbase * V + x] = c[y][x];
}
