// Corpus family "stencil": 2-D 5-point and 3-D 7-point Jacobi-style stencils on float grids.
// Written for gpusim's generalization corpus from PMPP (Hwu, Kirk & El Hajj, 4th ed.), ch. 8
// "Stencil": the basic kernel (one output per thread, neighbours from global memory) and the
// shared-memory tiled kernel with thread coarsening along z and register tiling (each thread keeps
// the planes below and above in registers; the current plane is shared). Every kernel computes
// c0 * centre + c1 * (sum of the neighbours), the neighbours summed -x, +x, -y, +y, -z, +z, and
// writes the interior points only.

extern "C" __global__ void stencil2d_5pt(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                         float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1) {
        int i = y * nx + x;
        out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx]);
    }
}

extern "C" __global__ void stencil3d_7pt(const float* __restrict__ in, float* __restrict__ out, int nx, int ny, int nz,
                                         float c0, float c1)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x >= 1 && x < nx - 1 && y >= 1 && y < ny - 1 && z >= 1 && z < nz - 1) {
        int plane = nx * ny;
        int i = z * plane + y * nx + x;
        out[i] = c0 * in[i] + c1 * (in[i - 1] + in[i + 1] + in[i - nx] + in[i + nx] + in[i - plane] + in[i + plane]);
    }
}

#define IN_X 32
#define IN_Y 16
#define Z_PER_CTA 8

// Tiled and coarsened: a CTA of IN_X x IN_Y threads loads an IN_X x IN_Y tile of each plane
// (outputs for the inner (IN_X - 2) x (IN_Y - 2) points) and walks Z_PER_CTA planes in z.
extern "C" __global__ void stencil3d_coarse(const float* __restrict__ in, float* __restrict__ out, int nx, int ny,
                                            int nz, float c0, float c1)
{
    __shared__ float tile[IN_Y][IN_X];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * (IN_X - 2) + tx, y = blockIdx.y * (IN_Y - 2) + ty;
    int z0 = blockIdx.z * Z_PER_CTA + 1;
    int plane = nx * ny;
    bool inside = x < nx && y < ny;
    float below = 0.0f, cur = 0.0f, above = 0.0f;
    if (inside && z0 < nz) {
        below = in[(z0 - 1) * plane + y * nx + x];
        cur = in[z0 * plane + y * nx + x];
    }
    for (int z = z0; z < z0 + Z_PER_CTA && z < nz - 1; ++z) {
        if (inside)
            above = in[(z + 1) * plane + y * nx + x];
        __syncthreads();
        tile[ty][tx] = cur;
        __syncthreads();
        if (tx >= 1 && tx < IN_X - 1 && ty >= 1 && ty < IN_Y - 1 && x < nx - 1 && y < ny - 1)
            out[z * plane + y * nx + x] = c0 * cur + c1 * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx]
                                                          + tile[ty + 1][tx] + below + above);
        below = cur;
        cur = above;
    }
}
