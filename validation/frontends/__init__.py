"""GPU-side validation of the front-ends (CUDA C through NVRTC, Numba, Triton) and their shared kernels."""
