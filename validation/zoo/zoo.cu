// The kernel zoo (issue 42 item 3): one kernel per class the current-architecture model must
// predict beyond saxpy2, each over a few configurations, timed back to back (zoo.cuh).
//
// Usage: zoo [--out zoo.csv] [--reps 10] [--passes 2] [--window-us 200] [--only CLASS,...]
//            [--device 0] [--list]
// Classes: saxpy2, stream, ffma_ilp, fp64, smem_transpose, stencil, reduction_atomic,
// histogram, spmv, softmax, gemm_tensor (the hand WMMA kernel; cuBLAS is zoo_cublas.cu).
// --list prints every configuration (class,kernel,config,grid,block,shmem) without touching
// the GPU; validation/zoo/configs.py holds the same list for the predictions (a test compares).
//
// Every loop whose trip count the analyzer needs is kept rolled (`#pragma unroll 1`) so that
// the SASS has one loop per source loop and the trip counts are the configuration's.
#include "zoo.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include <type_traits>

namespace zk {

using zoo::device_alloc;
using zoo::device_free;
using zoo::label;
using zoo::Runner;

constexpr int BLOCK = 256;

// -- data ----------------------------------------------------------------------------------

__device__ __forceinline__ unsigned hash32(unsigned x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__global__ void fill_float(long long n, float *p, unsigned seed) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = (hash32(static_cast<unsigned>(i) ^ seed) & 0xffff) * (1.0f / 65536.0f);
}

template <typename T>
__global__ void fill_cast(long long n, T *p, unsigned seed) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = static_cast<T>((hash32(static_cast<unsigned>(i) ^ seed) & 0xff) * (1.0f / 256.0f));
}

__global__ void fill_bytes(long long n, unsigned char *p, int same) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = same ? 7 : static_cast<unsigned char>(hash32(static_cast<unsigned>(i)) & 0xff);
}

// CSR with `per_row` entries per row: columns spread at random over the matrix (a gather)
// or a band around the diagonal (neighbouring rows read neighbouring x).
__global__ void fill_csr(int rows, int per_row, int random, int *row_ptr, int *cols, float *vals) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r > rows) return;
  row_ptr[r] = r * per_row;
  if (r == rows) return;
  for (int j = 0; j < per_row; ++j) {
    int c = random ? static_cast<int>(hash32(r * 977u + j) % rows) : (r + j - per_row / 2 + rows) % rows;
    cols[static_cast<long long>(r) * per_row + j] = c;
    vals[static_cast<long long>(r) * per_row + j] = 1.0f / (1 + j);
  }
}

void fill(const Runner &r, long long n, float *p, unsigned seed) {
  if (r.listing()) return;
  fill_float<<<static_cast<unsigned>((n + 255) / 256), 256>>>(n, p, seed);
  CHECK(cudaGetLastError());
}

// -- saxpy2 and stream -----------------------------------------------------------------------

// 000 Listing 2, as validation/saxpy2.cu runs it.
__global__ void saxpy2(int n, int a, float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float val = x[i], tmp = 0;
#pragma unroll 1
    for (int cnt = 0; cnt < a; ++cnt) tmp += val;
    y[i] += tmp;
  }
}

// The stream saxpy: y = a x + y, 12 bytes per element, two loads in flight per thread.
__global__ void stream_saxpy(int n, float a, const float *__restrict__ x, float *__restrict__ y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// -- FFMA with ILP independent chains, FP64 FMA ---------------------------------------------

template <typename T, int ILP>
__global__ void fma_chains(int iters, T *out) {
  T acc[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j) acc[j] = static_cast<T>(threadIdx.x + j) * static_cast<T>(1e-3);
  const T b = static_cast<T>(0.9999), c = static_cast<T>(1e-4);
#pragma unroll 1
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int j = 0; j < ILP; ++j) acc[j] = fma(acc[j], b, c);
  }
  T sum = 0;
#pragma unroll
  for (int j = 0; j < ILP; ++j) sum += acc[j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// -- shared memory: transpose (PAD 0: 32-way bank conflicts on the column read) and stencil -

template <int PAD>
__global__ void transpose(int n, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float tile[32][32 + PAD];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
#pragma unroll
  for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * static_cast<long long>(n) + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
#pragma unroll
  for (int j = 0; j < 32; j += 8) out[(y + j) * static_cast<long long>(n) + x] = tile[threadIdx.x][threadIdx.y + j];
}

constexpr int RADIUS = 4;
__constant__ float STENCIL[2 * RADIUS + 1] = {0.01f, 0.02f, 0.05f, 0.12f, 0.6f, 0.12f, 0.05f, 0.02f, 0.01f};

__global__ void stencil1d(int n, const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float s[BLOCK + 2 * RADIUS];
  int g = blockIdx.x * BLOCK + threadIdx.x, l = threadIdx.x + RADIUS;
  s[l] = g < n ? in[g] : 0.0f;
  if (threadIdx.x < RADIUS) {
    s[l - RADIUS] = g >= RADIUS ? in[g - RADIUS] : 0.0f;
    s[l + BLOCK] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
  }
  __syncthreads();
  if (g < n) {
    float v = 0.0f;
#pragma unroll
    for (int k = -RADIUS; k <= RADIUS; ++k) v += STENCIL[k + RADIUS] * s[l + k];
    out[g] = v;
  }
}

// -- reductions and atomics ----------------------------------------------------------------

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum (or maximum) over the block (BLOCK threads): shuffles in every warp, then every warp
// reduces the warps' results again, so that no shuffle sits under a branch (the compiler's
// divergent fallback for one would give the SASS a loop the analyzer cannot structure).
template <bool MAX>
__device__ __forceinline__ float block_reduce(float v, float *scratch) {
  v = MAX ? warp_max(v) : warp_sum(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float w = scratch[threadIdx.x & (BLOCK / 32 - 1)];
  v = (threadIdx.x & 31) < BLOCK / 32 ? w : (MAX ? -INFINITY : 0.0f);
  v = MAX ? warp_max(v) : warp_sum(v);
  __syncthreads();
  return v;
}

// A tree reduction per block, then one atomic per block on the single result.
__global__ void reduce_sum(int n, const float *__restrict__ in, float *out) {
  __shared__ float scratch[BLOCK / 32];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  float v = block_reduce<false>(i < n ? in[i] : 0.0f, scratch);
  if (threadIdx.x == 0) atomicAdd(out, v);
}

// One atomic per element on `mask + 1` addresses: mask 0 is every thread on one address.
__global__ void atomic_add(int n, unsigned mask, const float *__restrict__ in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out + (i & mask), in[i]);
}

// The same one-address sum as atomic_add with mask 0, on unsigned integers at an address ptxas
// can prove warp-uniform (the parameter itself): it aggregates the warp's atomics (VOTEU.ANY,
// UFLO, REDUX.SUM, one REDG by the elected lane), which it does not for atomic_add's floats or
// runtime-masked addresses. The pair measures a warp's same-address REDG against one
// operation per warp: whether the hardware merges the lanes of the former.
__global__ void atomic_add_warp(int n, const unsigned *__restrict__ in, unsigned *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, in[i]);
}

// 256-bin histograms: every element an atomic in global memory, or first in the block's
// shared-memory copy (merged with 256 global atomics per block).
__global__ void histogram_global(int n, const unsigned char *__restrict__ data, unsigned *bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(bins + data[i], 1u);
}

__global__ void histogram_shared(int n, const unsigned char *__restrict__ data, unsigned *bins) {
  __shared__ unsigned local[256];
  local[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) atomicAdd(local + data[i], 1u);
  __syncthreads();
  if (local[threadIdx.x]) atomicAdd(bins + threadIdx.x, local[threadIdx.x]);
}

// -- SpMV (CSR): a thread per row (scalar) or a warp per row (vector) ------------------------

__global__ void spmv_scalar(int rows, const int *__restrict__ row_ptr, const int *__restrict__ cols,
                            const float *__restrict__ vals, const float *__restrict__ x, float *y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float sum = 0.0f;
    int end = row_ptr[r + 1];
#pragma unroll 1
    for (int j = row_ptr[r]; j < end; ++j) sum += vals[j] * x[cols[j]];
    y[r] = sum;
  }
}

__global__ void spmv_vector(int rows, const int *__restrict__ row_ptr, const int *__restrict__ cols,
                            const float *__restrict__ vals, const float *__restrict__ x, float *y) {
  int r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
  if (r < rows) {
    float sum = 0.0f;
    int end = row_ptr[r + 1];
#pragma unroll 1
    for (int j = row_ptr[r] + lane; j < end; j += 32) sum += vals[j] * x[cols[j]];
    sum = warp_sum(sum);
    if (lane == 0) y[r] = sum;
  }
}

// -- softmax and layernorm: a block per row, PT = cols / BLOCK elements per thread (the loops
// over them unrolled: the analyzer reads straight-line code)

template <int PT>
__global__ void softmax_rows( const float *__restrict__ in, float *__restrict__ out) {
  __shared__ float scratch[BLOCK / 32];
  long long base = static_cast<long long>(blockIdx.x) * PT * BLOCK + threadIdx.x;
  const float *row = in + base;
  float *dst = out + base;
  float m = -INFINITY;
#pragma unroll
  for (int t = 0; t < PT; ++t) m = fmaxf(m, row[t * BLOCK]);
  m = block_reduce<true>(m, scratch);
  float s = 0.0f;
#pragma unroll
  for (int t = 0; t < PT; ++t) s += __expf(row[t * BLOCK] - m);
  float inv = __fdividef(1.0f, block_reduce<false>(s, scratch));
#pragma unroll
  for (int t = 0; t < PT; ++t) dst[t * BLOCK] = __expf(row[t * BLOCK] - m) * inv;
}

template <int PT>
__global__ void layernorm_rows( const float *__restrict__ in, const float *__restrict__ gamma,
                               const float *__restrict__ beta, float *__restrict__ out) {
  __shared__ float scratch[BLOCK / 32];
  long long base = static_cast<long long>(blockIdx.x) * PT * BLOCK + threadIdx.x;
  const float *row = in + base;
  float *dst = out + base;
  float s = 0.0f, q = 0.0f;
#pragma unroll
  for (int t = 0; t < PT; ++t) {
    float v = row[t * BLOCK];
    s += v;
    q += v * v;
  }
  const float per_col = 1.0f / (PT * BLOCK);
  float mean = block_reduce<false>(s, scratch) * per_col;
  float var = block_reduce<false>(q, scratch) * per_col - mean * mean;
  float inv = rsqrtf(var + 1e-5f);
#pragma unroll
  for (int t = 0; t < PT; ++t) {
    int c = t * BLOCK + threadIdx.x;
    dst[t * BLOCK] = (row[t * BLOCK] - mean) * inv * gamma[c] + beta[c];
  }
}

// -- tensor cores: a hand WMMA GEMM (C = A B, row major, FP32 accumulate) -------------------
// A block of 4 warps computes a 64 x 64 tile of C, each warp 32 x 32 (2 x 2 fragments); A and
// B fragments are loaded from global memory (through L1/L2) at every k-step of KS.

namespace wmma = nvcuda::wmma;

template <typename TIn, typename TFrag, int KS>
__global__ void wmma_gemm(int m, int n, int k, const TIn *__restrict__ a, const TIn *__restrict__ b,
                          float *__restrict__ c) {
  int warp = threadIdx.x >> 5;
  int row0 = blockIdx.y * 64 + (warp >> 1) * 32, col0 = blockIdx.x * 64 + (warp & 1) * 32;
  wmma::fragment<wmma::accumulator, 16, 16, KS, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
#pragma unroll 1
  for (int kk = 0; kk < k; kk += KS) {
    wmma::fragment<wmma::matrix_a, 16, 16, KS, TFrag, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, KS, TFrag, wmma::row_major> fb[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      wmma::load_matrix_sync(fa[i], a + static_cast<long long>(row0 + 16 * i) * k + kk, k);
      wmma::load_matrix_sync(fb[i], b + static_cast<long long>(kk) * n + col0 + 16 * i, n);
      if constexpr (std::is_same_v<TFrag, wmma::precision::tf32>) {
#pragma unroll
        for (int e = 0; e < fa[i].num_elements; ++e) fa[i].x[e] = wmma::__float_to_tf32(fa[i].x[e]);
#pragma unroll
        for (int e = 0; e < fb[i].num_elements; ++e) fb[i].x[e] = wmma::__float_to_tf32(fb[i].x[e]);
      }
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(c + static_cast<long long>(row0 + 16 * i) * n + col0 + 16 * j, acc[i][j], n,
                              wmma::mem_row_major);
}

// -- the configurations ----------------------------------------------------------------------

unsigned blocks(long long n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

void run_saxpy2_stream(Runner &r) {
  const int big = 1 << 27;
  float *x = device_alloc<float>(r, big), *y = device_alloc<float>(r, big);
  fill(r, big, x, 1);
  fill(r, big, y, 2);
  const int n = 10000000;
  for (int a : {1, 16, 256}) {
    r.measure("saxpy2", "saxpy2", label("n=%lld;a=%lld", n, a), blocks(n, BLOCK), BLOCK, 0,
              reinterpret_cast<const void *>(saxpy2), 1.0 * n * a, 12.0 * n,
              [=] { saxpy2<<<blocks(n, BLOCK), BLOCK>>>(n, a, x, y); });
  }
  for (int sn : {1 << 20, 1 << 24, 1 << 27}) {
    r.measure("stream", "stream_saxpy", label("n=%lld", sn), blocks(sn, BLOCK), BLOCK, 0,
              reinterpret_cast<const void *>(stream_saxpy), 2.0 * sn, 12.0 * sn,
              [=] { stream_saxpy<<<blocks(sn, BLOCK), BLOCK>>>(sn, 1.5f, x, y); });
  }
  device_free(x);
  device_free(y);
}

template <typename T, int ILP>
void fma_config(Runner &r, const char *cls, const char *kernel, T *out, int grid, int iters) {
  r.measure(cls, kernel, label("ilp=%lld;iters=%lld;grid=%lld", ILP, iters, grid), grid, BLOCK, 0,
            reinterpret_cast<const void *>(fma_chains<T, ILP>), 2.0 * 8 * ILP * iters * grid * BLOCK,
            1.0 * sizeof(T) * grid * BLOCK, [=] { fma_chains<T, ILP><<<grid, BLOCK>>>(iters, out); });
}

void run_fma(Runner &r) {
  const int grid = 132 * 8;  // 8 blocks of 256 threads per SM on a 132-SM H100 / H200
  float *f = device_alloc<float>(r, static_cast<size_t>(grid) * BLOCK);
  double *d = device_alloc<double>(r, static_cast<size_t>(grid) * BLOCK);
  fma_config<float, 1>(r, "ffma_ilp", "ffma_ilp1", f, grid, 256);
  fma_config<float, 4>(r, "ffma_ilp", "ffma_ilp4", f, grid, 256);
  fma_config<float, 8>(r, "ffma_ilp", "ffma_ilp8", f, grid, 256);
  fma_config<double, 1>(r, "fp64", "dfma_ilp1", d, grid, 64);
  fma_config<double, 4>(r, "fp64", "dfma_ilp4", d, grid, 64);
  device_free(f);
  device_free(d);
}

void run_shared(Runner &r) {
  const int big = 8192;
  float *in = device_alloc<float>(r, static_cast<size_t>(big) * big);
  float *out = device_alloc<float>(r, static_cast<size_t>(big) * big);
  fill(r, static_cast<long long>(big) * big, in, 3);
  for (int n : {4096, 8192}) {
    dim3 grid(n / 32, n / 32), block(32, 8);
    long long g = static_cast<long long>(n / 32) * (n / 32);
    r.measure("smem_transpose", "transpose_naive", label("n=%lld", n), g, 256, 0,
              reinterpret_cast<const void *>(transpose<0>), 0.0, 8.0 * n * n,
              [=] { transpose<0><<<grid, block>>>(n, in, out); });
    r.measure("smem_transpose", "transpose_padded", label("n=%lld", n), g, 256, 0,
              reinterpret_cast<const void *>(transpose<1>), 0.0, 8.0 * n * n,
              [=] { transpose<1><<<grid, block>>>(n, in, out); });
  }
  for (int n : {1 << 22, 1 << 26}) {
    r.measure("stencil", "stencil1d_r4", label("n=%lld", n), blocks(n, BLOCK), BLOCK, 0,
              reinterpret_cast<const void *>(stencil1d), 2.0 * (2 * RADIUS + 1) * n, 8.0 * n,
              [=] { stencil1d<<<blocks(n, BLOCK), BLOCK>>>(n, in, out); });
  }
  device_free(in);
  device_free(out);
}

void run_atomics(Runner &r) {
  const int big = 1 << 26;
  float *in = device_alloc<float>(r, big), *acc = device_alloc<float>(r, 1 << 16);
  unsigned char *spread = device_alloc<unsigned char>(r, big), *same = device_alloc<unsigned char>(r, big);
  unsigned *bins = device_alloc<unsigned>(r, 256), *count = device_alloc<unsigned>(r, 1);
  fill(r, big, in, 4);
  if (!r.listing()) {
    fill_bytes<<<blocks(big, 256), 256>>>(big, spread, 0);
    fill_bytes<<<blocks(big, 256), 256>>>(big, same, 1);
    CHECK(cudaMemset(acc, 0, (1 << 16) * sizeof(float)));
    CHECK(cudaMemset(bins, 0, 256 * sizeof(unsigned)));
    CHECK(cudaMemset(count, 0, sizeof(unsigned)));
  }
  for (int n : {1 << 22, 1 << 26}) {
    r.measure("reduction_atomic", "reduce_sum", label("n=%lld", n), blocks(n, BLOCK), BLOCK, 0,
              reinterpret_cast<const void *>(reduce_sum), 1.0 * n, 4.0 * n,
              [=] { reduce_sum<<<blocks(n, BLOCK), BLOCK>>>(n, in, acc); });
  }
  const int an = 1 << 22;
  for (unsigned mask : {0u, 31u, 65535u}) {
    r.measure("reduction_atomic", "atomic_add", label("n=%lld;addresses=%lld", an, mask + 1LL),
              blocks(an, BLOCK), BLOCK, 0, reinterpret_cast<const void *>(atomic_add), 1.0 * an, 8.0 * an,
              [=] { atomic_add<<<blocks(an, BLOCK), BLOCK>>>(an, mask, in, acc); });
  }
  const unsigned *bits = reinterpret_cast<const unsigned *>(in);  // the floats' bits as data
  r.measure("reduction_atomic", "atomic_add_warp", label("n=%lld;addresses=%lld", an, 1LL), blocks(an, BLOCK),
            BLOCK, 0, reinterpret_cast<const void *>(atomic_add_warp), 1.0 * an, 8.0 * an,
            [=] { atomic_add_warp<<<blocks(an, BLOCK), BLOCK>>>(an, bits, count); });
  const int hn = 1 << 24;
  for (int s = 0; s < 2; ++s) {
    const unsigned char *data = s ? same : spread;
    const char *what = s ? "same" : "spread";
    r.measure("histogram", "histogram_global", label("n=%lld;data=", hn) + what, blocks(hn, BLOCK), BLOCK,
              0, reinterpret_cast<const void *>(histogram_global), 0.0, 1.0 * hn,
              [=] { histogram_global<<<blocks(hn, BLOCK), BLOCK>>>(hn, data, bins); });
    r.measure("histogram", "histogram_shared", label("n=%lld;data=", hn) + what, blocks(hn, BLOCK), BLOCK,
              0, reinterpret_cast<const void *>(histogram_shared), 0.0, 1.0 * hn,
              [=] { histogram_shared<<<blocks(hn, BLOCK), BLOCK>>>(hn, data, bins); });
  }
  device_free(in);
  device_free(acc);
  device_free(spread);
  device_free(same);
  device_free(bins);
  device_free(count);
}

void run_spmv(Runner &r) {
  const int rows = 1 << 22;
  for (int random : {1, 0}) {
    for (int per_row : {16, 64}) {
      long long nnz = static_cast<long long>(rows) * per_row;
      int *row_ptr = device_alloc<int>(r, rows + 1), *cols = device_alloc<int>(r, nnz);
      float *vals = device_alloc<float>(r, nnz), *x = device_alloc<float>(r, rows), *y = device_alloc<float>(r, rows);
      if (!r.listing()) {
        fill_csr<<<blocks(rows + 1, 256), 256>>>(rows, per_row, random, row_ptr, cols, vals);
        CHECK(cudaGetLastError());
      }
      fill(r, rows, x, 5);
      std::string cfg = label("rows=%lld;per_row=%lld;cols=", rows, per_row) + (random ? "random" : "band");
      double flops = 2.0 * nnz, bytes = 8.0 * nnz + 12.0 * rows;
      r.measure("spmv", "spmv_scalar", cfg, blocks(rows, BLOCK), BLOCK, 0, reinterpret_cast<const void *>(spmv_scalar),
                flops, bytes, [=] { spmv_scalar<<<blocks(rows, BLOCK), BLOCK>>>(rows, row_ptr, cols, vals, x, y); });
      r.measure("spmv", "spmv_vector", cfg, blocks(32LL * rows, BLOCK), BLOCK, 0,
                reinterpret_cast<const void *>(spmv_vector), flops, bytes,
                [=] { spmv_vector<<<blocks(32LL * rows, BLOCK), BLOCK>>>(rows, row_ptr, cols, vals, x, y); });
      device_free(row_ptr);
      device_free(cols);
      device_free(vals);
      device_free(x);
      device_free(y);
    }
  }
}

template <int PT>
void softmax_config(Runner &r, float *in, float *out, float *gamma, float *beta, long long total) {
  const int cols = PT * BLOCK, rows = static_cast<int>(total / cols);
  r.measure("softmax", "softmax_rows", label("rows=%lld;cols=%lld", rows, cols), rows, BLOCK, 0,
            reinterpret_cast<const void *>(softmax_rows<PT>), 5.0 * total, 8.0 * total,
            [=] { softmax_rows<PT><<<rows, BLOCK>>>(in, out); });
  r.measure("softmax", "layernorm_rows", label("rows=%lld;cols=%lld", rows, cols), rows, BLOCK, 0,
            reinterpret_cast<const void *>(layernorm_rows<PT>), 7.0 * total, 8.0 * total,
            [=] { layernorm_rows<PT><<<rows, BLOCK>>>(in, gamma, beta, out); });
}

void run_softmax(Runner &r) {
  const long long total = 1LL << 26;
  float *in = device_alloc<float>(r, total), *out = device_alloc<float>(r, total);
  float *gamma = device_alloc<float>(r, 8192), *beta = device_alloc<float>(r, 8192);
  fill(r, total, in, 6);
  fill(r, 8192, gamma, 7);
  fill(r, 8192, beta, 8);
  softmax_config<4>(r, in, out, gamma, beta, total);
  softmax_config<32>(r, in, out, gamma, beta, total);
  device_free(in);
  device_free(out);
  device_free(gamma);
  device_free(beta);
}

template <typename TIn, typename TFrag, int KS>
void wmma_config(Runner &r, const char *kernel, int size) {
  long long elements = static_cast<long long>(size) * size;
  TIn *a = device_alloc<TIn>(r, elements), *b = device_alloc<TIn>(r, elements);
  float *c = device_alloc<float>(r, elements);
  if (!r.listing()) {
    fill_cast<TIn><<<blocks(elements, 256), 256>>>(elements, a, 9);
    fill_cast<TIn><<<blocks(elements, 256), 256>>>(elements, b, 10);
    CHECK(cudaGetLastError());
  }
  dim3 grid(size / 64, size / 64);
  r.measure("gemm_tensor", kernel, label("m=%lld;n=%lld;k=%lld", size, size, size),
            static_cast<long long>(grid.x) * grid.y, 128, 0,
            reinterpret_cast<const void *>(wmma_gemm<TIn, TFrag, KS>), 2.0 * size * elements,
            (2.0 * sizeof(TIn) + 4.0) * elements,
            [=] { wmma_gemm<TIn, TFrag, KS><<<grid, 128>>>(size, size, size, a, b, c); });
  device_free(a);
  device_free(b);
  device_free(c);
}

void run_wmma(Runner &r) {
  for (int size : {2048, 4096}) {
    wmma_config<__half, __half, 16>(r, "wmma_fp16", size);
    wmma_config<__nv_bfloat16, __nv_bfloat16, 16>(r, "wmma_bf16", size);
    wmma_config<float, wmma::precision::tf32, 8>(r, "wmma_tf32", size);
  }
}

}  // namespace zk

int main(int argc, char **argv) {
  using namespace zk;
  zoo::Options o = zoo::parse("zoo", argc, argv);
  if (!o.list) CHECK(cudaSetDevice(o.device));
  Runner r(o, "zoo");
  for (int pass = 0; pass < (o.list ? 1 : o.passes); ++pass) {
    r.pass = pass;
    run_saxpy2_stream(r);
    run_fma(r);
    run_shared(r);
    run_atomics(r);
    run_spmv(r);
    run_softmax(r);
    run_wmma(r);
  }
  if (!o.list) CHECK(cudaDeviceSynchronize());
  return 0;
}
