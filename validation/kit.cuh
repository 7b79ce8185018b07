// What the validation kit's CUDA programs (saxpy2.cu, gpuprofile.cu) share: the error check
// and the two clocks they read.
#pragma once
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t err_ = (call);                                                      \
    if (err_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), \
                   __FILE__, __LINE__, cudaGetErrorString(err_));                   \
      std::exit(2);                                                                 \
    }                                                                               \
  } while (0)

namespace kit {

// Wall-clock seconds since the epoch (to match the nvidia-smi power log).
inline double epoch_s() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

// Seconds between two recorded CUDA events.
inline float elapsed_s(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  return ms / 1000.0f;
}

}  // namespace kit
