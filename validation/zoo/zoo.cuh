// What the kernel zoo's programs (zoo.cu, zoo_cublas.cu) share: the options, the CSV they
// append to, and how one configuration is timed (docs/validation/zoo.md).
//
// One configuration = one kernel launched back to back k times between two CUDA events, k
// chosen so that the window lasts at least --window-us (a single launch is timed first);
// --reps windows per pass, and the whole list is run --passes times so that the repeat-run
// noise floor (the spread between passes of the same configuration) is measured beside it.
#pragma once
#include "../kit.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace zoo {

struct Options {
  std::string out = "-";
  std::string only;  // comma-separated kernel classes; empty = all
  int reps = 10;
  int passes = 2;
  double window_us = 200.0;
  int device = 0;
  bool list = false;  // print the configurations (no CUDA call) and exit
};

inline void usage_and_exit(const char *program, const char *bad) {
  std::fprintf(stderr, "%s: bad or missing argument near '%s' (see docs/validation/zoo.md)\n",
               program, bad);
  std::exit(1);
}

inline Options parse(const char *program, int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) usage_and_exit(program, k.c_str());
      return argv[++i];
    };
    if (k == "--out") o.out = value();
    else if (k == "--only") o.only = value();
    else if (k == "--reps") o.reps = std::atoi(value());
    else if (k == "--passes") o.passes = std::atoi(value());
    else if (k == "--window-us") o.window_us = std::atof(value());
    else if (k == "--device") o.device = std::atoi(value());
    else if (k == "--list") o.list = true;
    else usage_and_exit(program, k.c_str());
  }
  if (o.reps < 1) usage_and_exit(program, "--reps");
  if (o.passes < 1) usage_and_exit(program, "--passes");
  // the issue's floor: every measurement spans at least 100 us of back-to-back launches
  if (o.window_us < 100.0) usage_and_exit(program, "--window-us (at least 100)");
  return o;
}

inline const char *header() {
  return "class,kernel,config,pass,rep,launches,window_s,kernel_s,grid_size,block_size,"
         "shmem_bytes,registers_per_thread,flops,bytes\n";
}

// A configuration's launcher: enqueue one launch of the kernel.
using Launch = std::function<void()>;

class Runner {
 public:
  Runner(const Options &o, const char *program) : o_(o), program_(program) {
    if (o.list) return;
    out_ = o.out == "-" ? stdout : std::fopen(o.out.c_str(), "a");
    if (!out_) usage_and_exit(program, o.out.c_str());
    bool empty = true;
    if (out_ != stdout) {
      std::fseek(out_, 0, SEEK_END);
      empty = std::ftell(out_) == 0;
    }
    if (empty) std::fputs(header(), out_);
    CHECK(cudaEventCreate(&start_));
    CHECK(cudaEventCreate(&stop_));
  }
  ~Runner() {
    if (o_.list) return;
    CHECK(cudaEventDestroy(start_));
    CHECK(cudaEventDestroy(stop_));
    if (out_ && out_ != stdout) std::fclose(out_);
  }
  bool listing() const { return o_.list; }
  int pass = 0;

  bool wanted(const std::string &cls) const {
    if (o_.only.empty()) return true;
    std::string list = "," + o_.only + ",";
    return list.find("," + cls + ",") != std::string::npos;
  }

  // Time one configuration (or, with --list, print its identity). `func` is the kernel (for
  // its registers per thread; nullptr for library calls), flops and bytes its useful work.
  void measure(const std::string &cls, const std::string &kernel, const std::string &config,
               long long grid, int block, size_t shmem, const void *func, double flops,
               double bytes, const Launch &launch) {
    if (!wanted(cls)) return;
    if (o_.list) {
      std::printf("%s,%s,%s,%lld,%d,%zu\n", cls.c_str(), kernel.c_str(), config.c_str(), grid,
                  block, shmem);
      return;
    }
    int registers = 0;
    if (func) {
      cudaFuncAttributes fa;
      CHECK(cudaFuncGetAttributes(&fa, func));
      registers = fa.numRegs;
    }
    launch();  // warm-up: module load, caches, clocks
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventRecord(start_));
    launch();
    CHECK(cudaEventRecord(stop_));
    CHECK(cudaEventSynchronize(stop_));
    double single = kit::elapsed_s(start_, stop_);
    long long launches = std::max(
        1LL, static_cast<long long>(std::ceil(o_.window_us * 1e-6 / std::max(single, 1e-7))));
    launches = std::min(launches, 100000LL);
    for (int rep = 0; rep < o_.reps; ++rep) {
      CHECK(cudaEventRecord(start_));
      for (long long l = 0; l < launches; ++l) launch();
      CHECK(cudaEventRecord(stop_));
      CHECK(cudaEventSynchronize(stop_));
      CHECK(cudaGetLastError());
      double window = kit::elapsed_s(start_, stop_);
      std::fprintf(out_, "%s,%s,%s,%d,%d,%lld,%.9e,%.9e,%lld,%d,%zu,%d,%.6e,%.6e\n", cls.c_str(),
                   kernel.c_str(), config.c_str(), pass, rep, launches, window,
                   window / static_cast<double>(launches), grid, block, shmem, registers, flops,
                   bytes);
    }
    std::fflush(out_);
  }

 private:
  Options o_;
  const char *program_;
  FILE *out_ = nullptr;
  cudaEvent_t start_{}, stop_{};
};

// Device memory that is not allocated when only listing the configurations.
template <typename T>
T *device_alloc(const Runner &r, size_t count) {
  if (r.listing()) return nullptr;
  T *p = nullptr;
  CHECK(cudaMalloc(&p, count * sizeof(T)));
  return p;
}

template <typename T>
void device_free(T *p) {
  if (p) CHECK(cudaFree(p));
}

inline std::string label(const char *format, long long a, long long b = 0, long long c = 0) {
  char text[128];
  std::snprintf(text, sizeof text, format, a, b, c);
  return text;
}

}  // namespace zoo
