// __device__ globals: counters, initialised scalars and tables, their addresses.
__device__ unsigned int g_counter;
__device__ float g_scale = 2.5f;
__device__ int g_table[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ unsigned long long g_sum64;

extern "C" __global__ void count_positive(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && x[i] > 0.0f) atomicAdd(&g_counter, 1u);
}

extern "C" __global__ void scale_lookup(const int* idx, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = g_scale * (float)g_table[idx[i] & 7];
}

extern "C" __global__ void sum64(const unsigned long long* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&g_sum64, x[i]);
}

__device__ int* pick(int k) { return k ? &g_table[k & 7] : (int*)&g_counter; }

extern "C" __global__ void through_pointer(int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    volatile int* p = pick(i);
    if (i < n) out[i] = *p;
}
