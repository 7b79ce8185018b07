// saxpy2 from 000 Listing 2 (Gajger & Czarnul 2018): y[i] += a * x[i] as `a` additions.
__global__ void saxpy2(int n, int a, float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float val = x[i], tmp = 0;
        #pragma unroll 1
        for(int cnt = 0; cnt < a; ++cnt) tmp += val;
        y[i] += tmp;
    }
}
