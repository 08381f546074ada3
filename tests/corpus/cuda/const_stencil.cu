// __constant__ stencils: uniform (broadcast) and lane-indexed (divergent) constant reads.
__constant__ float c_weights[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};
__constant__ int c_perm[32];          // written by the host before the launch
__constant__ double c_poly[4] = {1.0, -0.5, 0.25, -0.125};

extern "C" __global__ void stencil5(const float* __restrict__ in, float* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= 2 && i < n - 2) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < 5; ++k) s += c_weights[k] * in[i + k - 2];
        out[i] = s;
    }
}

extern "C" __global__ void permute_lanes(const int* in, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[(i & ~31) + c_perm[threadIdx.x & 31]];
}

extern "C" __global__ void horner(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        double v = x[i], acc = c_poly[3];
        for (int k = 2; k >= 0; --k) acc = fma(acc, v, c_poly[k]);
        y[i] = acc;
    }
}
