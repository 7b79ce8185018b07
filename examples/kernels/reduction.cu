// Block sum reduction in shared memory: each block adds blockDim.x elements into out[blockIdx.x].
// The tree loop halves the active threads each step (trip count log2(blockDim.x)).
__global__ void reduction(const float *in, float *out, int n) {
    extern __shared__ float partial[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    partial[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = partial[0];
    }
}
