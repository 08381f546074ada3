// CUDA C for `gpusim validate --experiment saxpy_cu.toml`: compiled by NVRTC on both sides
// (CuPy's RawModule(code=...) on the GPU, gpusim.RawModule(code=...) in the simulator).
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
