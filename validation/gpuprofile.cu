// GPU profile microbenchmarks: what the "current architectures" models need of a GPU.
//
// Writes one CSV row per measurement (long format):
//   benchmark,param,param_value,rep,value,unit,window_start_epoch,window_end_epoch
// Benchmarks (each can be selected with --only NAME,NAME):
//   clock      SM clock while a kernel runs: clock64() against %globaltimer over ~20 ms [MHz]
//   launch     empty kernel <<<1,32>>> between two events [s]; back-to-back launches [s/launch];
//              an empty kernel of one wave (SMs x 2 blocks of 1024) between events [s]
//   dependent  one warp, a chain of dependent FADD / IADD / FFMA [cycles per instruction]
//   issue      independent FADDs at full occupancy [warp instructions per cycle per SM]
//   pchase     one thread chasing pointers over a footprint [cycles per load]; "warm" footprints
//              are walked once before timing (L1, L2 hits), "cold" ones visit each line once
//   stream     saxpy (12 B/element) and a float4 copy (8 B/element) against the footprint, with
//              the data left in L2 by the previous launch ("warm") or L2 flushed first ("cold")
//              [s per kernel, bytes per kernel in param_value's row companion "bytes"]
//   memcpy     cudaMemcpy HtD / DtH from pinned and pageable host memory, and DtD [s per copy]
//   power      windows for the nvidia-smi power log: context idle, FFMA-loaded, stream-loaded
//   wake       a saxpy of 10^7 elements timed after the GPU idled for 0..200 ms (host sleep):
//              what a kernel pays when the clocks have come down since the last work [s]
//
// Usage: gpuprofile [--device 0] [--out profile.csv] [--reps 10] [--only a,b] [--quick]
//                   [--power-window-s 4]
#include "kit.cuh"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>


__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void empty_kernel() {}

// Spin ~target_ns of wall time, recording SM cycles and global-timer ns.
__global__ void clock_kernel(unsigned long long target_ns, unsigned long long *out) {
  unsigned long long t0 = global_ns();
  long long c0 = clock64();
  unsigned long long t1 = t0;
  while (t1 - t0 < target_ns) t1 = global_ns();
  long long c1 = clock64();
  out[0] = static_cast<unsigned long long>(c1 - c0);
  out[1] = t1 - t0;
}

constexpr int kChain = 256;  // dependent instructions per loop iteration

__global__ void dep_fadd(int iters, float step, float *sink, long long *cycles) {
  float x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kChain; ++k) asm volatile("add.f32 %0, %0, %1;" : "+f"(x) : "f"(step));
  }
  long long c1 = clock64();
  sink[threadIdx.x] = x;
  if (threadIdx.x == 0) cycles[0] = c1 - c0;
}

__global__ void dep_ffma(int iters, float m, float step, float *sink, long long *cycles) {
  float x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kChain; ++k)
      asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(m), "f"(step));
  }
  long long c1 = clock64();
  sink[threadIdx.x] = x;
  if (threadIdx.x == 0) cycles[0] = c1 - c0;
}

__global__ void dep_iadd(int iters, int step, int *sink, long long *cycles) {
  int x = threadIdx.x;
  long long c0 = clock64();
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < kChain; ++k) asm volatile("add.s32 %0, %0, %1;" : "+r"(x) : "r"(step));
  }
  long long c1 = clock64();
  sink[threadIdx.x] = x;
  if (threadIdx.x == 0) cycles[0] = c1 - c0;
}

// Eight independent FADD chains per thread: issue-bound at full occupancy.
__global__ void issue_fadd(int iters, float step, float *sink) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5,
        a6 = a0 + 6, a7 = a0 + 7;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a0) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a1) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a2) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a3) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a4) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a5) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a6) : "f"(step));
      asm volatile("add.f32 %0, %0, %1;" : "+f"(a7) : "f"(step));
    }
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// FFMA-heavy load for the power window (same shape as issue_fadd, with FMAs).
__global__ void load_ffma(int iters, float m, float step, float *sink) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 64; ++k) {
      a0 = fmaf(a0, m, step);
      a1 = fmaf(a1, m, step);
      a2 = fmaf(a2, m, step);
      a3 = fmaf(a3, m, step);
    }
  }
  sink[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3;
}

__global__ void pchase(const unsigned *next, int warm, int iters, unsigned start, unsigned *sink,
                       long long *cycles) {
  unsigned j = start;
  for (int i = 0; i < warm; ++i) j = next[j];
  long long c0 = clock64();
  for (int i = 0; i < iters; ++i) j = next[j];
  long long c1 = clock64();
  sink[0] = j;
  cycles[0] = c1 - c0;
}

__global__ void saxpy(long long n, float a, const float *x, float *y) {
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void copy4(long long n4, const float4 *x, float4 *y) {
  long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
    y[i] = x[i];
}

__global__ void fill(long long n, float value, float *y) {
  long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = value;
}

namespace {

using kit::elapsed_s;
using kit::epoch_s;

struct Options {
  int device = 0;
  std::string out = "-";
  int reps = 10;
  bool quick = false;
  double power_window_s = 4.0;
  std::vector<std::string> only;
};

[[noreturn]] void usage_and_exit(const char *what) {
  std::fprintf(stderr,
               "gpuprofile: bad or missing %s\nusage: gpuprofile [--device 0] [--out profile.csv] "
               "[--reps 10] [--only clock,launch,dependent,issue,pchase,stream,memcpy,power,wake] "
               "[--quick] [--power-window-s 4]\n",
               what);
  std::exit(1);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) usage_and_exit(k.c_str());
      return argv[++i];
    };
    if (k == "--device") o.device = std::atoi(value());
    else if (k == "--out") o.out = value();
    else if (k == "--reps") o.reps = std::atoi(value());
    else if (k == "--quick") o.quick = true;
    else if (k == "--power-window-s") o.power_window_s = std::atof(value());
    else if (k == "--only") {
      std::string s = value();
      size_t start = 0;
      while (start <= s.size()) {
        size_t end = s.find(',', start);
        if (end == std::string::npos) end = s.size();
        if (end > start) o.only.push_back(s.substr(start, end - start));
        start = end + 1;
      }
    } else usage_and_exit(k.c_str());
  }
  if (o.reps < 1) usage_and_exit("--reps");
  return o;
}



struct Writer {
  FILE *f;
  void row(const char *bench, const char *param, double param_value, int rep, double value,
           const char *unit, double start = 0, double end = 0) {
    std::fprintf(f, "%s,%s,%.9g,%d,%.9e,%s,%.6f,%.6f\n", bench, param, param_value, rep, value, unit,
                 start, end);
  }
};

struct Gpu {
  int device;
  int sms;
  size_t l2;
  cudaEvent_t e0, e1;
};

void bench_clock(Writer &w, const Gpu &g, const Options &o) {
  unsigned long long *d;
  CHECK(cudaMalloc(&d, 2 * sizeof(unsigned long long)));
  for (int rep = 0; rep < std::min(o.reps, 5); ++rep) {
    clock_kernel<<<1, 1>>>(20000000ULL, d);
    CHECK(cudaGetLastError());
    unsigned long long h[2];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    w.row("clock", "sm_clock", 0, rep, static_cast<double>(h[0]) / static_cast<double>(h[1]) * 1e3, "MHz");
  }
  CHECK(cudaFree(d));
}

void bench_launch(Writer &w, const Gpu &g, const Options &o) {
  int reps = o.quick ? 20 : 200;
  for (int i = 0; i < 10; ++i) empty_kernel<<<1, 32>>>();
  CHECK(cudaDeviceSynchronize());
  for (int rep = 0; rep < reps; ++rep) {
    CHECK(cudaEventRecord(g.e0));
    empty_kernel<<<1, 32>>>();
    CHECK(cudaEventRecord(g.e1));
    CHECK(cudaEventSynchronize(g.e1));
    w.row("launch", "event_pair_grid", 1, rep, elapsed_s(g.e0, g.e1), "s");
  }
  int wave = g.sms * 2;
  for (int rep = 0; rep < reps; ++rep) {
    CHECK(cudaEventRecord(g.e0));
    empty_kernel<<<wave, 1024>>>();
    CHECK(cudaEventRecord(g.e1));
    CHECK(cudaEventSynchronize(g.e1));
    w.row("launch", "event_pair_grid", wave, rep, elapsed_s(g.e0, g.e1), "s");
  }
  const int batch = 1000;
  for (int rep = 0; rep < std::min(o.reps, 10); ++rep) {
    CHECK(cudaEventRecord(g.e0));
    for (int i = 0; i < batch; ++i) empty_kernel<<<1, 32>>>();
    CHECK(cudaEventRecord(g.e1));
    CHECK(cudaEventSynchronize(g.e1));
    w.row("launch", "back_to_back", batch, rep, elapsed_s(g.e0, g.e1) / batch, "s");
  }
  // Host-side wall time of launch + synchronize, what a blocking host loop pays.
  for (int rep = 0; rep < std::min(o.reps, 10) * 10; ++rep) {
    double t0 = epoch_s();
    empty_kernel<<<1, 32>>>();
    CHECK(cudaDeviceSynchronize());
    w.row("launch", "host_sync", 1, rep, epoch_s() - t0, "s");
  }
}

void bench_dependent(Writer &w, const Gpu &, const Options &o) {
  float *sink;
  long long *cycles;
  CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
  CHECK(cudaMalloc(&cycles, sizeof(long long)));
  const int iters = 64;
  const double count = static_cast<double>(iters) * kChain;
  for (int rep = 0; rep < std::min(o.reps, 5) + 1; ++rep) {
    long long c = 0;
    dep_fadd<<<1, 32>>>(iters, 1.0f, sink, cycles);
    CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    if (rep > 0) w.row("dependent", "fadd", 1, rep - 1, c / count, "cycles");
    dep_ffma<<<1, 32>>>(iters, 1.0f, 1.0f, sink, cycles);
    CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    if (rep > 0) w.row("dependent", "ffma", 1, rep - 1, c / count, "cycles");
    dep_iadd<<<1, 32>>>(iters, 1, reinterpret_cast<int *>(sink), cycles);
    CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    if (rep > 0) w.row("dependent", "iadd", 1, rep - 1, c / count, "cycles");
    // Two and four warps on one SM: per-warp dependent chains sharing schedulers.
    dep_fadd<<<1, 128>>>(iters, 1.0f, sink, cycles);
    CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
    if (rep > 0) w.row("dependent", "fadd_4warps", 4, rep - 1, c / count, "cycles");
  }
  CHECK(cudaGetLastError());
  CHECK(cudaFree(sink));
  CHECK(cudaFree(cycles));
}

void bench_issue(Writer &w, const Gpu &g, const Options &o) {
  const int block = 1024;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, issue_fadd, block, 0));
  float *sink;
  for (int waves : {1, 8}) {
    long long grid = static_cast<long long>(g.sms) * per_sm * waves;
    CHECK(cudaMalloc(&sink, grid * block * sizeof(float)));
    const int iters = o.quick ? 64 : 512;
    issue_fadd<<<static_cast<unsigned>(grid), block>>>(4, 1.0f, sink);
    CHECK(cudaDeviceSynchronize());
    for (int rep = 0; rep < std::min(o.reps, 5); ++rep) {
      CHECK(cudaEventRecord(g.e0));
      issue_fadd<<<static_cast<unsigned>(grid), block>>>(iters, 1.0f, sink);
      CHECK(cudaEventRecord(g.e1));
      CHECK(cudaEventSynchronize(g.e1));
      double warp_instructions = static_cast<double>(grid) * (block / 32) * iters * 32 * 8;
      // value: seconds; the analysis turns it into IPC with the measured clock
      w.row("issue", "fadd_warp_instructions", warp_instructions, rep, elapsed_s(g.e0, g.e1), "s");
    }
    CHECK(cudaFree(sink));
  }
  CHECK(cudaGetLastError());
}

__global__ void scatter(const unsigned long long *where, const unsigned *what, int count, unsigned *next) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) next[where[i]] = what[i];
}

void bench_pchase(Writer &w, const Gpu &g, const Options &o) {
  // Footprints in bytes, lines of 128 B, one 4-byte index per line. A footprint up to 2 x L2
  // is one random cycle through all its lines, walked once before timing (L1 / L2 hits). A
  // larger one is a random cycle through 8193 lines drawn from it, each visited once per
  // repetition, with L2 flushed between repetitions (DRAM / HBM latency).
  std::vector<double> footprints = {16e3, 64e3, 192e3, 1e6, 4e6, 16e6, 0.5 * g.l2, 0.8 * g.l2,
                                    1.5 * g.l2, 4.0 * g.l2, 256e6, 1e9, 4e9};
  if (o.quick) footprints = {16e3, 4e6, 1e9};
  size_t max_bytes = static_cast<size_t>(*std::max_element(footprints.begin(), footprints.end()));
  size_t free_b = 0, total_b = 0;
  CHECK(cudaMemGetInfo(&free_b, &total_b));
  max_bytes = std::min(max_bytes, free_b / 2);
  unsigned *next, *sink, *what;
  unsigned long long *where;
  long long *cycles;
  float *flush;
  size_t flush_bytes = 4 * g.l2;
  const int cold_lines = 8193;
  CHECK(cudaMalloc(&next, max_bytes));
  CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  CHECK(cudaMalloc(&cycles, sizeof(long long)));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMalloc(&where, cold_lines * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&what, cold_lines * sizeof(unsigned)));
  const size_t line = 128, per_line = line / sizeof(unsigned);
  std::mt19937_64 rng(12345);
  for (double fp : footprints) {
    size_t bytes = std::min(static_cast<size_t>(fp), max_bytes);
    size_t lines = bytes / line;
    bool cold = bytes > 2 * g.l2;
    unsigned start = 0;
    int iters = 0, warm = 0;
    if (!cold) {
      std::vector<unsigned> order(lines);
      std::iota(order.begin(), order.end(), 0u);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<unsigned> host(lines * per_line, 0u);
      for (size_t k = 0; k < lines; ++k)
        host[order[k] * per_line] = static_cast<unsigned>(order[(k + 1) % lines] * per_line);
      CHECK(cudaMemcpy(next, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
      start = static_cast<unsigned>(order[0] * per_line);
      iters = 4096;
      warm = static_cast<int>(std::min<size_t>(lines, 1 << 20));
    } else {
      std::vector<unsigned long long> picked;
      while (picked.size() < static_cast<size_t>(cold_lines)) {
        unsigned long long l = rng() % lines;
        if (std::find(picked.begin(), picked.end(), l) == picked.end()) picked.push_back(l);
      }
      std::vector<unsigned long long> at(cold_lines);
      std::vector<unsigned> to(cold_lines);
      for (int k = 0; k < cold_lines; ++k) {
        at[k] = picked[k] * per_line;
        to[k] = static_cast<unsigned>(picked[(k + 1) % cold_lines] * per_line);
      }
      CHECK(cudaMemcpy(where, at.data(), at.size() * sizeof(at[0]), cudaMemcpyHostToDevice));
      CHECK(cudaMemcpy(what, to.data(), to.size() * sizeof(to[0]), cudaMemcpyHostToDevice));
      scatter<<<(cold_lines + 255) / 256, 256>>>(where, what, cold_lines, next);
      start = static_cast<unsigned>(at[0]);
      iters = cold_lines - 1;
    }
    int reps = cold ? 3 : std::min(o.reps, 5);
    for (int rep = 0; rep < reps; ++rep) {
      if (cold) fill<<<g.sms * 4, 1024>>>(static_cast<long long>(flush_bytes / 4), 0.0f, flush);
      pchase<<<1, 1>>>(next, warm, iters, start, sink, cycles);
      long long c = 0;
      CHECK(cudaMemcpy(&c, cycles, sizeof c, cudaMemcpyDeviceToHost));
      w.row("pchase", cold ? "cold" : "warm", static_cast<double>(bytes), rep,
            static_cast<double>(c) / iters, "cycles");
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaFree(next));
  CHECK(cudaFree(sink));
  CHECK(cudaFree(cycles));
  CHECK(cudaFree(flush));
  CHECK(cudaFree(where));
  CHECK(cudaFree(what));
}

void bench_stream(Writer &w, const Gpu &g, const Options &o) {
  std::vector<long long> ns = {100000,   300000,   1000000,  2000000,   3000000,  4000000,
                               6000000,  8000000,  12000000, 16000000,  24000000, 32000000,
                               64000000, 128000000, 256000000};
  if (o.quick) ns = {1000000, 4000000, 64000000};
  long long max_n = *std::max_element(ns.begin(), ns.end());
  float *x, *y, *flush;
  size_t flush_bytes = 4 * g.l2;
  CHECK(cudaMalloc(&x, max_n * sizeof(float)));
  CHECK(cudaMalloc(&y, max_n * sizeof(float)));
  CHECK(cudaMalloc(&flush, flush_bytes));
  fill<<<g.sms * 4, 1024>>>(max_n, 1.0f, x);
  fill<<<g.sms * 4, 1024>>>(max_n, 2.0f, y);
  CHECK(cudaDeviceSynchronize());
  int copy_grid = g.sms * 8;
  for (long long n : ns) {
    unsigned grid = static_cast<unsigned>((n + 255) / 256);
    for (int mode = 0; mode < 2; ++mode) {  // 0 warm, 1 cold
      const char *kind = mode == 0 ? "warm" : "cold";
      for (int kernel = 0; kernel < 2; ++kernel) {
        const char *name = kernel == 0 ? "saxpy" : "copy4";
        double bytes = kernel == 0 ? 12.0 * n : 8.0 * n;
        // one untimed launch leaves the working set in L2 for the warm mode
        if (kernel == 0) saxpy<<<grid, 256>>>(n, 1.0f, x, y);
        else copy4<<<copy_grid, 256>>>(n / 4, reinterpret_cast<float4 *>(x), reinterpret_cast<float4 *>(y));
        for (int rep = 0; rep < o.reps; ++rep) {
          if (mode == 1) fill<<<g.sms * 4, 1024>>>(static_cast<long long>(flush_bytes / 4), 0.0f, flush);
          CHECK(cudaEventRecord(g.e0));
          if (kernel == 0) saxpy<<<grid, 256>>>(n, 1.0f, x, y);
          else copy4<<<copy_grid, 256>>>(n / 4, reinterpret_cast<float4 *>(x), reinterpret_cast<float4 *>(y));
          CHECK(cudaEventRecord(g.e1));
          CHECK(cudaEventSynchronize(g.e1));
          char param[64];
          std::snprintf(param, sizeof param, "%s_%s_bytes_%.0f", name, kind, bytes);
          w.row("stream", param, static_cast<double>(n), rep, elapsed_s(g.e0, g.e1), "s");
        }
      }
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(flush));
}

void bench_memcpy(Writer &w, const Gpu &g, const Options &o) {
  std::vector<size_t> sizes = {4096,     16384,     65536,     262144,    1048576,
                               4194304,  16777216,  67108864,  268435456, 1073741824};
  if (o.quick) sizes = {65536, 16777216, 268435456};
  size_t max_bytes = *std::max_element(sizes.begin(), sizes.end());
  char *pinned, *device, *device2;
  CHECK(cudaMallocHost(&pinned, max_bytes));
  std::vector<char> pageable(max_bytes, 1);
  std::memset(pinned, 1, max_bytes);
  CHECK(cudaMalloc(&device, max_bytes));
  CHECK(cudaMalloc(&device2, max_bytes));
  for (size_t bytes : sizes) {
    int reps = bytes >= (256u << 20) ? std::min(o.reps, 5) : o.reps;
    for (int rep = 0; rep < reps; ++rep) {
      struct Case { const char *name; void *dst; const void *src; cudaMemcpyKind kind; };
      Case cases[] = {
          {"htd_pinned", device, pinned, cudaMemcpyHostToDevice},
          {"htd_pageable", device, pageable.data(), cudaMemcpyHostToDevice},
          {"dth_pinned", pinned, device, cudaMemcpyDeviceToHost},
          {"dth_pageable", pageable.data(), device, cudaMemcpyDeviceToHost},
          {"dtd", device2, device, cudaMemcpyDeviceToDevice},
      };
      for (const Case &c : cases) {
        CHECK(cudaEventRecord(g.e0));
        CHECK(cudaMemcpy(c.dst, c.src, bytes, c.kind));
        CHECK(cudaEventRecord(g.e1));
        CHECK(cudaEventSynchronize(g.e1));
        w.row("memcpy", c.name, static_cast<double>(bytes), rep, elapsed_s(g.e0, g.e1), "s");
      }
    }
  }
  CHECK(cudaFreeHost(pinned));
  CHECK(cudaFree(device));
  CHECK(cudaFree(device2));
}

void bench_power(Writer &w, const Gpu &g, const Options &o) {
  double window = o.quick ? 2.0 : o.power_window_s;
  // context idle: the context exists, nothing runs
  CHECK(cudaDeviceSynchronize());
  double t0 = epoch_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  w.row("power", "context_idle", 0, 0, epoch_s() - t0, "s", t0, epoch_s());

  const int block = 1024;
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, load_ffma, block, 0));
  long long grid = static_cast<long long>(g.sms) * per_sm;
  float *sink;
  CHECK(cudaMalloc(&sink, grid * block * sizeof(float)));
  // calibrate iterations to ~20 ms per launch
  int iters = 256;
  CHECK(cudaEventRecord(g.e0));
  load_ffma<<<static_cast<unsigned>(grid), block>>>(iters, 1.0f, 1e-7f, sink);
  CHECK(cudaEventRecord(g.e1));
  CHECK(cudaEventSynchronize(g.e1));
  double one = std::max(1e-6, static_cast<double>(elapsed_s(g.e0, g.e1)));
  iters = static_cast<int>(std::max(1.0, iters * 0.02 / one));
  long long launches = 0;
  t0 = epoch_s();
  CHECK(cudaEventRecord(g.e0));
  while (epoch_s() - t0 < window) {
    for (int i = 0; i < 5; ++i) load_ffma<<<static_cast<unsigned>(grid), block>>>(iters, 1.0f, 1e-7f, sink);
    launches += 5;
    CHECK(cudaEventRecord(g.e1));
    CHECK(cudaEventSynchronize(g.e1));
  }
  double t1 = epoch_s();
  double flops = 2.0 * 4 * 64 * static_cast<double>(iters) * grid * block * launches;
  w.row("power", "ffma_loaded", flops, 0, elapsed_s(g.e0, g.e1), "s", t0, t1);
  CHECK(cudaFree(sink));

  // memory-bound load: float4 copy of 2 x 1 GB
  long long n = 256LL << 20;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  launches = 0;
  t0 = epoch_s();
  CHECK(cudaEventRecord(g.e0));
  while (epoch_s() - t0 < window) {
    for (int i = 0; i < 5; ++i)
      copy4<<<g.sms * 8, 256>>>(n / 4, reinterpret_cast<float4 *>(x), reinterpret_cast<float4 *>(y));
    launches += 5;
    CHECK(cudaEventRecord(g.e1));
    CHECK(cudaEventSynchronize(g.e1));
  }
  t1 = epoch_s();
  w.row("power", "stream_loaded", 8.0 * n * launches, 0, elapsed_s(g.e0, g.e1), "s", t0, t1);
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  // after the load: the clocks come down while the context stays
  t0 = epoch_s();
  std::this_thread::sleep_for(std::chrono::duration<double>(window));
  w.row("power", "after_load_idle", 0, 0, epoch_s() - t0, "s", t0, epoch_s());
  CHECK(cudaGetLastError());
}

void bench_wake(Writer &w, const Gpu &g, const Options &o) {
  const long long n = 10000000;
  float *x, *y;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  fill<<<g.sms * 4, 1024>>>(n, 1.0f, x);
  fill<<<g.sms * 4, 1024>>>(n, 2.0f, y);
  CHECK(cudaDeviceSynchronize());
  unsigned grid = static_cast<unsigned>((n + 255) / 256);
  const double idles_ms[] = {0.0, 0.2, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 200.0};
  for (int rep = 0; rep < std::min(o.reps, 5); ++rep) {
    for (double idle : idles_ms) {
      // busy first: a few kernels back to back bring the clocks up
      for (int i = 0; i < 20; ++i) saxpy<<<grid, 256>>>(n, 1.0f, x, y);
      CHECK(cudaDeviceSynchronize());
      if (idle > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(idle));
      CHECK(cudaEventRecord(g.e0));
      saxpy<<<grid, 256>>>(n, 1.0f, x, y);
      CHECK(cudaEventRecord(g.e1));
      CHECK(cudaEventSynchronize(g.e1));
      w.row("wake", "saxpy_1e7_after_idle_ms", idle, rep, elapsed_s(g.e0, g.e1), "s");
    }
  }
  CHECK(cudaGetLastError());
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
}

}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  CHECK(cudaSetDevice(o.device));
  Gpu g{};
  g.device = o.device;
  CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, o.device));
  int l2 = 0;
  CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, o.device));
  g.l2 = static_cast<size_t>(l2);
  CHECK(cudaEventCreate(&g.e0));
  CHECK(cudaEventCreate(&g.e1));
  FILE *out = o.out == "-" ? stdout : std::fopen(o.out.c_str(), "a");
  if (!out) usage_and_exit(o.out.c_str());
  std::fseek(out, 0, SEEK_END);
  if (out == stdout || std::ftell(out) == 0)
    std::fprintf(out, "benchmark,param,param_value,rep,value,unit,window_start_epoch,window_end_epoch\n");
  Writer w{out};
  struct Bench { const char *name; void (*run)(Writer &, const Gpu &, const Options &); };
  const Bench benches[] = {
      {"clock", bench_clock},   {"launch", bench_launch}, {"dependent", bench_dependent},
      {"issue", bench_issue},   {"pchase", bench_pchase}, {"stream", bench_stream},
      {"memcpy", bench_memcpy}, {"power", bench_power},   {"wake", bench_wake},
  };
  empty_kernel<<<1, 32>>>();
  CHECK(cudaDeviceSynchronize());
  for (const Bench &b : benches) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), b.name) == o.only.end()) continue;
    double t0 = epoch_s();
    b.run(w, g, o);
    std::fflush(out);
    std::fprintf(stderr, "gpuprofile: %s done in %.1f s\n", b.name, epoch_s() - t0);
  }
  CHECK(cudaEventDestroy(g.e0));
  CHECK(cudaEventDestroy(g.e1));
  if (out != stdout) std::fclose(out);
  return 0;
}
