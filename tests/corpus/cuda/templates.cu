// Templates (mangled entry names), fp64 and 64-bit integers.
template <typename T>
__global__ void axpy(T a, const T* __restrict__ x, T* __restrict__ y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = a * x[i] + y[i];
}
template __global__ void axpy<float>(float, const float*, float*, int);
template __global__ void axpy<double>(double, const double*, double*, int);
template __global__ void axpy<int>(int, const int*, int*, int);
template __global__ void axpy<unsigned long long>(unsigned long long, const unsigned long long*, unsigned long long*, int);

template <typename T, int B>
__global__ void block_sum(const T* x, T* out, int n) {
    __shared__ T s[B];
    int i = blockIdx.x * B + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : T(0);
    __syncthreads();
    for (int k = B / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
template __global__ void block_sum<long long, 128>(const long long*, long long*, int);
template __global__ void block_sum<double, 64>(const double*, double*, int);
