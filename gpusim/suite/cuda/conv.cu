// nvcc command (run from gpusim/suite/cuda):
//   nvcc -ptx -arch=sm_90 -lineinfo -o ../ptx/conv.ptx conv.cu
//
// 1D convolution (3-point average), as seed 000 teaches it:
// output[i] = (input[i] + input[i+1] + input[i+2]) / 3, input has N+2 elements.
// Changes from the notes: extern "C" and bounds guards so N need not be a
// multiple of the block size.  Launch block 128, grid ceil(N/128).

#define THREADS_PER_BLOCK 128

// one thread per output, three global loads each
extern "C" __global__ void conv1d_naive(int N, float *input, float *output)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= N) return;
    float result = 0.0f;
    for (int i = 0; i < 3; i++)
        result += input[idx + i];
    output[idx] = result / 3.0f;
}

// a block stages its THREADS_PER_BLOCK + 2 inputs in shared memory once
extern "C" __global__ void conv1d_shared(int N, float *input, float *output)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float shared[THREADS_PER_BLOCK + 2];
    if (idx < N + 2)
        shared[threadIdx.x] = input[idx];
    if (threadIdx.x < 2 && idx + THREADS_PER_BLOCK < N + 2)
        shared[threadIdx.x + THREADS_PER_BLOCK] = input[idx + THREADS_PER_BLOCK];
    __syncthreads();    // barrier (all threads in block)

    if (idx < N) {
        float result = 0.0f;
        for (int i = 0; i < 3; i++)
            result += shared[threadIdx.x + i];
        output[idx] = result / 3.0f;
    }
}
