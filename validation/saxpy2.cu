// saxpy2 validation harness (paper 000: Listing 2 kernel, Listing 6 host code).
//
// Runs the saxpy2 application of 000 section 6.2 over a sweep of configurations and writes
// one CSV row per repetition: both host-to-device copies, the kernel and the device-to-host
// copy are each timed with CUDA events, and the whole application (HtD, HtD, kernel, DtH)
// with a pair of events around it. Occupancy is cut with dummy dynamic shared memory, as in
// 000 section 6.3: for a target of W warps per SM the harness picks the smallest dynamic
// shared-memory size for which the CUDA occupancy API gives at most W resident warps.
//
// Usage (lists are comma separated; every combination is run):
//   saxpy2 --scenario NAME --n 10000000 --block 256 --a 1,2,4 [--warps 2,4,64 | --shmem 0]
//          [--reps 10] [--pinned] [--energy-window-s 0] [--app-window-s 0] [--grids-auto]
//          [--out results.csv] [--device-info device.json] [--device 0]
//
// --energy-window-s S: repeat the kernel back to back until the repeat window lasts at least
//   S seconds and record the window's wall-clock start/end (for the nvidia-smi power log).
// --app-window-s S: repeat the whole application (HtD x, HtD y, kernel, DtH y) back to back
//   until the repeat window lasts at least S seconds and record the window's wall-clock
//   start/end; the row's kernel_repeats is then the applications repeated and
//   window_kernel_s the application's mean time in the window (the energy of a whole run,
//   docs/energy.md). Not with --energy-window-s.
// --grids-auto: ignore --n; run grid sizes NB in {1, 2, R/2, R, R+1, 3R/2, 2R, 2R+1, 3R, 4R,
//   6R, 8R, 12R, 16R} where R = SMs x resident blocks per SM (003's rounds), with n = NB x block.
#include "kit.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


// 000 Listing 2, unchanged. Dynamic shared memory is allocated at launch and never touched.
__global__ void saxpy2(int n, int a, float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float val = x[i], tmp = 0;
#pragma unroll 1
    for (int cnt = 0; cnt < a; ++cnt) tmp += val;
    y[i] += tmp;
  }
}

namespace {

using kit::elapsed_s;
using kit::epoch_s;

struct Options {
  std::string scenario = "custom";
  std::vector<long long> n = {10000000};
  std::vector<long long> block = {256};
  std::vector<long long> a = {1};
  std::vector<long long> warps;  // targets; empty = use --shmem
  std::vector<long long> shmem = {0};
  int reps = 10;
  bool pinned = false;
  bool grids_auto = false;
  double energy_window_s = 0.0;
  double app_window_s = 0.0;
  std::string out = "-";
  std::string device_info;
  int device = 0;
};

std::vector<long long> parse_list(const char *text) {
  std::vector<long long> values;
  std::string s(text);
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string item = s.substr(start, end - start);
    if (!item.empty()) values.push_back(static_cast<long long>(std::atof(item.c_str())));
    start = end + 1;
  }
  return values;
}

void usage_and_exit(const char *bad) {
  std::fprintf(stderr, "saxpy2: bad or missing argument near '%s' (see the header of saxpy2.cu)\n", bad);
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
    if (k == "--scenario") o.scenario = value();
    else if (k == "--n") o.n = parse_list(value());
    else if (k == "--block") o.block = parse_list(value());
    else if (k == "--a") o.a = parse_list(value());
    else if (k == "--warps") o.warps = parse_list(value());
    else if (k == "--shmem") o.shmem = parse_list(value());
    else if (k == "--reps") o.reps = std::atoi(value());
    else if (k == "--pinned") o.pinned = true;
    else if (k == "--grids-auto") o.grids_auto = true;
    else if (k == "--energy-window-s") o.energy_window_s = std::atof(value());
    else if (k == "--app-window-s") o.app_window_s = std::atof(value());
    else if (k == "--out") o.out = value();
    else if (k == "--device-info") o.device_info = value();
    else if (k == "--device") o.device = std::atoi(value());
    else usage_and_exit(k.c_str());
  }
  for (long long v : o.a)
    if (v < 1 || v > (1 << 20)) usage_and_exit("--a (1..1048576)");
  for (long long v : o.block)
    if (v < 1 || v > 1024) usage_and_exit("--block (1..1024)");
  for (long long v : o.n)
    if (v < 1 || v > 2000000000LL) usage_and_exit("--n");
  if (o.reps < 1) usage_and_exit("--reps");
  if (o.energy_window_s > 0 && o.app_window_s > 0) usage_and_exit("--app-window-s (not with --energy-window-s)");
  return o;
}

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

void write_device_info(const std::string &path, int device, const cudaFuncAttributes &fa) {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f) usage_and_exit(path.c_str());
  int runtime = 0, driver = 0;
  CHECK(cudaRuntimeGetVersion(&runtime));
  CHECK(cudaDriverGetVersion(&driver));
  std::fprintf(f,
               "{\n  \"name\": \"%s\",\n  \"computeCapability\": \"%d.%d\",\n"
               "  \"SMs\": %d,\n  \"SMCoreClockMHz\": %.1f,\n  \"memoryClockMHz\": %.1f,\n"
               "  \"busWidth\": %d,\n  \"L2Cache\": %d,\n  \"sharedMemPerSM\": %d,\n"
               "  \"maxSharedMemPerBlockOptin\": %d,\n  \"maxThreadsPerSM\": %d,\n"
               "  \"registersPerSM\": %d,\n  \"memorySize\": %zu,\n"
               "  \"saxpy2RegistersPerThread\": %d,\n  \"cudaRuntime\": %d,\n  \"cudaDriver\": %d\n}\n",
               prop.name, prop.major, prop.minor, prop.multiProcessorCount,
               attribute(cudaDevAttrClockRate, device) / 1000.0,
               attribute(cudaDevAttrMemoryClockRate, device) / 1000.0,
               attribute(cudaDevAttrGlobalMemoryBusWidth, device),
               attribute(cudaDevAttrL2CacheSize, device),
               attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
               attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device),
               attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device), prop.totalGlobalMem,
               fa.numRegs, runtime, driver);
  std::fclose(f);
}

int resident_blocks(int block, size_t shmem) {
  int blocks = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, saxpy2, block, shmem));
  return blocks;
}

// Smallest dynamic shared memory (256-byte steps) giving at most `target` warps per SM.
size_t shmem_for_warps(int block, long long target, int max_shmem) {
  int warps_per_block = (block + 31) / 32;
  for (int s = 0; s <= max_shmem; s += 256) {
    int blocks = resident_blocks(block, static_cast<size_t>(s));
    if (blocks == 0) break;
    if (static_cast<long long>(blocks) * warps_per_block <= target) return static_cast<size_t>(s);
  }
  return static_cast<size_t>(max_shmem);
}



}  // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  CHECK(cudaSetDevice(o.device));
  int sms = attribute(cudaDevAttrMultiProcessorCount, o.device);
  int max_shmem = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, o.device);
  CHECK(cudaFuncSetAttribute(saxpy2, cudaFuncAttributeMaxDynamicSharedMemorySize, max_shmem));
  cudaFuncAttributes fa;
  CHECK(cudaFuncGetAttributes(&fa, saxpy2));
  if (!o.device_info.empty()) write_device_info(o.device_info, o.device, fa);

  FILE *out = o.out == "-" ? stdout : std::fopen(o.out.c_str(), "a");
  if (!out) usage_and_exit(o.out.c_str());
  bool empty_file = true;
  if (out != stdout) {
    std::fseek(out, 0, SEEK_END);
    empty_file = std::ftell(out) == 0;
  }
  if (empty_file)
    std::fprintf(out,
                 "scenario,rep,n,block_size,grid_size,compute_intensity,shmem_bytes,"
                 "registers_per_thread,active_blocks_per_sm,active_warps_per_sm,htd_x_s,htd_y_s,"
                 "kernel_s,dth_s,app_s,kernel_repeats,window_kernel_s,window_start_epoch,"
                 "window_end_epoch\n");

  struct Config { long long n, block, a; size_t shmem; };
  std::vector<Config> configs;
  for (long long block : o.block) {
    std::vector<size_t> shmems;
    if (o.warps.empty()) for (long long s : o.shmem) shmems.push_back(static_cast<size_t>(s));
    else for (long long w : o.warps) shmems.push_back(shmem_for_warps(static_cast<int>(block), w, max_shmem));
    for (size_t s : shmems) {
      std::vector<long long> ns = o.n;
      if (o.grids_auto) {
        long long r = static_cast<long long>(sms) * resident_blocks(static_cast<int>(block), s);
        std::vector<long long> nb = {1, 2, std::max(1LL, r / 2), r, r + 1, 3 * r / 2, 2 * r, 2 * r + 1,
                                     3 * r, 4 * r, 6 * r, 8 * r, 12 * r, 16 * r};
        ns.clear();
        for (long long b : nb) ns.push_back(b * block);
      }
      for (long long n : ns)
        for (long long a : o.a) configs.push_back({n, block, a, s});
    }
  }
  long long max_n = 0;
  for (const Config &c : configs) max_n = std::max(max_n, c.n);

  size_t max_bytes = static_cast<size_t>(max_n) * sizeof(float);
  float *hx = nullptr, *hy = nullptr, *dx = nullptr, *dy = nullptr;
  std::vector<float> vx, vy;
  if (o.pinned) {
    CHECK(cudaMallocHost(&hx, max_bytes));
    CHECK(cudaMallocHost(&hy, max_bytes));
  } else {
    vx.assign(static_cast<size_t>(max_n), 1.0f);
    vy.assign(static_cast<size_t>(max_n), 2.0f);
    hx = vx.data();
    hy = vy.data();
  }
  for (long long i = 0; o.pinned && i < max_n; ++i) { hx[i] = 1.0f; hy[i] = 2.0f; }
  CHECK(cudaMalloc(&dx, max_bytes));
  CHECK(cudaMalloc(&dy, max_bytes));
  cudaEvent_t ev[6];
  for (cudaEvent_t &e : ev) CHECK(cudaEventCreate(&e));

  // Warm-up launch (context, module load) not recorded.
  saxpy2<<<1, 32>>>(1, 1, dx, dy);
  CHECK(cudaDeviceSynchronize());

  for (const Config &c : configs) {
    int block = static_cast<int>(c.block);
    int n = static_cast<int>(c.n);
    int a = static_cast<int>(c.a);
    size_t size = static_cast<size_t>(c.n) * sizeof(float);
    long long grid = (c.n + c.block - 1) / c.block;  // Listing 6
    int blocks_per_sm = resident_blocks(block, c.shmem);
    int warps_per_sm = blocks_per_sm * ((block + 31) / 32);
    for (int rep = 0; rep < o.reps; ++rep) {
      // Listing 6: HtD x, HtD y, kernel, DtH y; one event before and after each step.
      CHECK(cudaEventRecord(ev[0]));
      CHECK(cudaMemcpy(dx, hx, size, cudaMemcpyHostToDevice));
      CHECK(cudaEventRecord(ev[1]));
      CHECK(cudaMemcpy(dy, hy, size, cudaMemcpyHostToDevice));
      CHECK(cudaEventRecord(ev[2]));
      saxpy2<<<static_cast<unsigned>(grid), block, c.shmem>>>(n, a, dx, dy);
      CHECK(cudaGetLastError());
      CHECK(cudaEventRecord(ev[3]));
      CHECK(cudaMemcpy(hy, dy, size, cudaMemcpyDeviceToHost));
      CHECK(cudaEventRecord(ev[4]));
      CHECK(cudaEventSynchronize(ev[4]));
      double htd_x = elapsed_s(ev[0], ev[1]), htd_y = elapsed_s(ev[1], ev[2]);
      double kernel = elapsed_s(ev[2], ev[3]), dth = elapsed_s(ev[3], ev[4]);
      double app = elapsed_s(ev[0], ev[4]);

      long long repeats = 0;
      double window_kernel = 0, start = 0, end = 0;
      if (o.energy_window_s > 0) {
        repeats = std::max(1LL, static_cast<long long>(std::ceil(o.energy_window_s / std::max(kernel, 1e-6))));
        start = epoch_s();
        CHECK(cudaEventRecord(ev[0]));
        for (long long r = 0; r < repeats; ++r)
          saxpy2<<<static_cast<unsigned>(grid), block, c.shmem>>>(n, a, dx, dy);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(ev[5]));
        CHECK(cudaEventSynchronize(ev[5]));
        end = epoch_s();
        window_kernel = elapsed_s(ev[0], ev[5]) / static_cast<double>(repeats);
      }
      if (o.app_window_s > 0) {
        repeats = std::max(1LL, static_cast<long long>(std::ceil(o.app_window_s / std::max(app, 1e-6))));
        start = epoch_s();
        CHECK(cudaEventRecord(ev[0]));
        for (long long r = 0; r < repeats; ++r) {
          CHECK(cudaMemcpy(dx, hx, size, cudaMemcpyHostToDevice));
          CHECK(cudaMemcpy(dy, hy, size, cudaMemcpyHostToDevice));
          saxpy2<<<static_cast<unsigned>(grid), block, c.shmem>>>(n, a, dx, dy);
          CHECK(cudaMemcpy(hy, dy, size, cudaMemcpyDeviceToHost));
        }
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(ev[5]));
        CHECK(cudaEventSynchronize(ev[5]));
        end = epoch_s();
        window_kernel = elapsed_s(ev[0], ev[5]) / static_cast<double>(repeats);
      }
      std::fprintf(out, "%s,%d,%lld,%d,%lld,%d,%zu,%d,%d,%d,%.9e,%.9e,%.9e,%.9e,%.9e,%lld,%.9e,%.6f,%.6f\n",
                   o.scenario.c_str(), rep, c.n, block, grid, a, c.shmem, fa.numRegs, blocks_per_sm,
                   warps_per_sm, htd_x, htd_y, kernel, dth, app, repeats, window_kernel, start, end);
    }
    std::fflush(out);
  }
  for (cudaEvent_t &e : ev) CHECK(cudaEventDestroy(e));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  if (o.pinned) {
    CHECK(cudaFreeHost(hx));
    CHECK(cudaFreeHost(hy));
  }
  if (out != stdout) std::fclose(out);
  return 0;
}
