// Corpus family "conv2d": 2-D convolution with a 5 x 5 filter in constant memory, zero outside
// the image. Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th
// ed.), ch. 7 "Convolution": the basic kernel with the filter in __constant__ memory, and the
// tiled kernel whose CTA loads an input tile with its halo into shared memory (input tile = the
// CTA, output tile = the CTA less the halo).

#define R 2
#define W (2 * R + 1)
#define TILE 32

__constant__ float filter[W][W];

extern "C" __global__ void conv2d_const(const float* __restrict__ in, float* __restrict__ out, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col >= width || row >= height)
        return;
    float s = 0.0f;
    for (int i = 0; i < W; ++i) {
        int r = row - R + i;
        for (int j = 0; j < W; ++j) {
            int c = col - R + j;
            if (r >= 0 && r < height && c >= 0 && c < width)
                s += filter[i][j] * in[r * width + c];
        }
    }
    out[row * width + col] = s;
}

extern "C" __global__ void conv2d_tiled(const float* __restrict__ in, float* __restrict__ out, int width, int height)
{
    __shared__ float tile[TILE][TILE];
    int col = blockIdx.x * (TILE - 2 * R) + threadIdx.x - R;
    int row = blockIdx.y * (TILE - 2 * R) + threadIdx.y - R;
    tile[threadIdx.y][threadIdx.x] = (row >= 0 && row < height && col >= 0 && col < width) ? in[row * width + col] : 0.0f;
    __syncthreads();
    int tx = threadIdx.x - R, ty = threadIdx.y - R;
    if (tx >= 0 && tx < TILE - 2 * R && ty >= 0 && ty < TILE - 2 * R && row < height && col < width) {
        float s = 0.0f;
        for (int i = 0; i < W; ++i)
            for (int j = 0; j < W; ++j)
                s += filter[i][j] * tile[ty + i][tx + j];
        out[row * width + col] = s;
    }
}
