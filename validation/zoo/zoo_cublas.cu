// The kernel zoo's library GEMMs (issue 42 item 3): cuBLAS over square shapes in FP16, BF16,
// TF32 and FP64 (cublasGemmEx / cublasDgemm) and FP8 E4M3 through cuBLASLt (sm_89 and later;
// on older GPUs the FP8 rows are left out with a message on stderr). Options and CSV as zoo.cu
// (zoo.cuh); class gemm_tensor, kernel cublas_<precision>. Link with -lcublas -lcublasLt.
//
// Matrices are column major as cuBLAS has them: C (m x n) = A (m x k) B (k x n); FP8 runs the
// "TN" layout cuBLASLt requires for it (A stored k x m and transposed).
#include "zoo.cuh"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#define CHECK_BLAS(call)                                                              \
  do {                                                                                \
    int status_ = static_cast<int>(call);                                             \
    if (status_ != 0) {                                                               \
      std::fprintf(stderr, "cuBLAS error %d at %s:%d\n", status_, __FILE__, __LINE__); \
      std::exit(2);                                                                   \
    }                                                                                 \
  } while (0)

namespace {

using zoo::device_alloc;
using zoo::device_free;
using zoo::label;
using zoo::Runner;

constexpr size_t WORKSPACE = 32u << 20;

struct Precision {
  const char *name;
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  size_t in_bytes, out_bytes;
};

void gemm_ex(Runner &r, cublasHandle_t handle, const Precision &p, int size) {
  size_t elements = static_cast<size_t>(size) * size;
  char *a = device_alloc<char>(r, elements * p.in_bytes), *b = device_alloc<char>(r, elements * p.in_bytes);
  char *c = device_alloc<char>(r, elements * p.out_bytes);
  if (!r.listing()) {
    // small values in every format: each byte 0x20 is 2^-12 ... in FP16/BF16 pairs, a small
    // normal number in FP32 and FP64; the timing does not depend on the values
    CHECK(cudaMemset(a, 0x20, elements * p.in_bytes));
    CHECK(cudaMemset(b, 0x20, elements * p.in_bytes));
  }
  const double alpha_d = 1.0, beta_d = 0.0;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  bool fp64 = p.in == CUDA_R_64F;
  const void *alpha = fp64 ? static_cast<const void *>(&alpha_d) : static_cast<const void *>(&alpha_f);
  const void *beta = fp64 ? static_cast<const void *>(&beta_d) : static_cast<const void *>(&beta_f);
  std::string kernel = std::string("cublas_") + p.name;
  r.measure("gemm_tensor", kernel, label("m=%lld;n=%lld;k=%lld", size, size, size), 0, 0, 0, nullptr,
            2.0 * size * static_cast<double>(elements), (2.0 * p.in_bytes + p.out_bytes) * elements, [=] {
              CHECK_BLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, alpha, a, p.in, size,
                                      b, p.in, size, beta, c, p.out, size, p.compute, CUBLAS_GEMM_DEFAULT));
            });
  device_free(a);
  device_free(b);
  device_free(c);
}

void gemm_fp8(Runner &r, cublasLtHandle_t lt, void *workspace, int size) {
  size_t elements = static_cast<size_t>(size) * size;
  char *a = device_alloc<char>(r, elements), *b = device_alloc<char>(r, elements);
  __nv_bfloat16 *d = device_alloc<__nv_bfloat16>(r, elements);
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  if (!r.listing()) {
    CHECK(cudaMemset(a, 0x30, elements));  // E4M3 0x30 = 0.5
    CHECK(cudaMemset(b, 0x30, elements));
    // a cuBLASLt that cannot set up FP8 leaves the FP8 rows out; the other GEMMs are done
    int status = 0;
    auto ok = [&](cublasStatus_t s) { return status == 0 && (status = static_cast<int>(s)) == 0; };
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtMatmulPreference_t pref = nullptr;
    size_t ws = WORKSPACE;
    int found = 0;
    ok(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    ok(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    ok(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    ok(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, size, size, size));
    ok(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, size, size, size));
    ok(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, size, size, size));
    ok(cublasLtMatmulPreferenceCreate(&pref));
    ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    ok(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heuristic, &found));
    if (status != 0 || found == 0) {
      std::fprintf(stderr, "zoo_cublas: cuBLASLt gives no FP8 GEMM for %d^3 (status %d); FP8 left out\n",
                   size, status);
      device_free(a);
      device_free(b);
      device_free(d);
      return;
    }
    CHECK_BLAS(cublasLtMatmulPreferenceDestroy(pref));
  }
  const float alpha = 1.0f, beta = 0.0f;
  r.measure("gemm_tensor", "cublas_fp8", label("m=%lld;n=%lld;k=%lld", size, size, size), 0, 0, 0, nullptr,
            2.0 * size * static_cast<double>(elements), 4.0 * elements, [=] {
              CHECK_BLAS(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &heuristic.algo,
                                        workspace, WORKSPACE, 0));
            });
  if (!r.listing()) {
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(la));
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(lb));
    CHECK_BLAS(cublasLtMatrixLayoutDestroy(ld));
    CHECK_BLAS(cublasLtMatmulDescDestroy(op));
  }
  device_free(a);
  device_free(b);
  device_free(d);
}

}  // namespace

int main(int argc, char **argv) {
  zoo::Options o = zoo::parse("zoo_cublas", argc, argv);
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr;
  bool fp8 = true;
  if (!o.list) {
    CHECK(cudaSetDevice(o.device));
    CHECK_BLAS(cublasCreate(&handle));
    CHECK_BLAS(cublasLtCreate(&lt));
    CHECK(cudaMalloc(&workspace, WORKSPACE));
    CHECK_BLAS(cublasSetWorkspace(handle, workspace, WORKSPACE));
    int major = 0, minor = 0;
    CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, o.device));
    CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, o.device));
    fp8 = major * 10 + minor >= 89;
    if (!fp8) std::fprintf(stderr, "zoo_cublas: sm_%d%d has no FP8 tensor cores; FP8 left out\n", major, minor);
  }
  const Precision precisions[] = {
      {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2},
      {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2},
      {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4},
      {"fp64", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, 8, 8},
  };
  Runner r(o, "zoo_cublas");
  for (int pass = 0; pass < (o.list ? 1 : o.passes); ++pass) {
    r.pass = pass;
    for (int size : {1024, 4096, 8192})
      for (const Precision &p : precisions) gemm_ex(r, handle, p, size);
    // FP8 last: a cuBLASLt without it cannot cut the other rows short
    for (int size : {1024, 4096, 8192})
      if (fp8) gemm_fp8(r, lt, workspace, size);
  }
  if (!o.list) {
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(workspace));
    CHECK_BLAS(cublasLtDestroy(lt));
    CHECK_BLAS(cublasDestroy(handle));
  }
  return 0;
}
