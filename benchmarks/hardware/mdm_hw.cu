// The built-in workloads of mdm (src/mdm/traces/workloads) as CUDA kernels, for
// measuring them on real hardware and comparing with the models' predictions.
//
// Each kernel computes what the generator's docstring says, with the generator's
// launch geometry, array sizes and access order; random inputs (gather indices, the
// CSR matrix, the BFS graph) are read from the binary files that
// benchmarks/hardware/h100_validation.py writes from the generators' own functions, so
// the hardware touches the same addresses (up to array base) as the trace. The SASS is
// the target's (e.g. sm_90), not the trace's Pascal SASS: instruction counts differ
// (ncu's smsp__inst_executed.sum says by how much), memory traffic does not.
//
// Before the workload's kernels the L2 is emptied of the inputs (the hardware presets
// start from cold caches: their l2.fill_on_memcpy is off, so the traces' input copies
// do not fill the simulated L2): l2_flush_kernel reads a buffer of 4x the L2's size. Profile with `ncu --cache-control none` so that the L2 keeps its contents
// between the workload's kernels, as in the models and in Accel-Sim.
//
// Usage: mdm_hw WORKLOAD key=value ... [data=DIR] [l2fetch=BYTES]; mdm_hw latency: the
// pointer-chase latency probe (CSV lines "latency,KiB,bypass_l1,cycles,ns,MHz");
// mdm_hw probes [l2fetch=B]: block-dispatch and DRAM throughput probes ("probe,...")
// (l2fetch: cudaLimitMaxL2FetchGranularity for the run; the value in force is printed)
// mdm_hw issue mode=alu|load threads=T bps=B [sync=1]: the warp issue-order probe
// ("issue,..."); mdm_hw placement threads=T gx=X [gy=Y smem=B iters=N]: which SM runs
// which block ("placement,..."); mdm_hw throughput op=ffma|ffma3|fadd|fmul warps=W
// [iters=N]: FP32 warp instructions of one form issued per cycle ("throughput,...")
// carveout=PCT: cudaFuncAttributePreferredSharedMemoryCarveout of every workload kernel
// (percent of the largest shared-memory carve-out; the L1 gets the rest of the unified
// array; ncu's launch__shared_mem_config_size says what the driver chose).
// sms=N: run in a green context of N SMs (cuDevSmResourceSplitByCount; the SMs the
// kernels ran on are counted with %smid, and a count above N is an error).
// Every size parameter of the workload must be given (the Python side passes them all).

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <string>
#include <vector>

// Driver API functions through the runtime's entry points (no link against libcuda).
template <typename F>
static F driver_fn(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaError_t e = cudaGetDriverEntryPointByVersion(name, &p, 12040, cudaEnableDefault, &q);
  if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !p) {
    fprintf(stderr, "mdm_hw: driver function %s not available\n", name);
    exit(2);
  }
  return reinterpret_cast<F>(p);
}
#define DRV(name) driver_fn<decltype(&name)>(#name)

#define CU(x)                                                                        \
  do {                                                                               \
    CUresult r_ = (x);                                                               \
    if (r_ != CUDA_SUCCESS) {                                                        \
      fprintf(stderr, "mdm_hw: %s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #x,     \
              (int)r_);                                                              \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "mdm_hw: %s:%d: %s: %s\n", __FILE__, __LINE__, #x,             \
              cudaGetErrorString(e_));                                               \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

static void die(const std::string& msg) {
  fprintf(stderr, "mdm_hw: %s\n", msg.c_str());
  exit(2);
}

struct Args {
  std::map<std::string, std::string> kv;
  long i(const char* k) const {
    auto it = kv.find(k);
    if (it == kv.end()) die(std::string("missing parameter ") + k);
    char* end = nullptr;
    long v = strtol(it->second.c_str(), &end, 10);
    if (*end) die(std::string("parameter ") + k + " is not an integer: " + it->second);
    return v;
  }
  double f(const char* k) const {
    auto it = kv.find(k);
    if (it == kv.end()) die(std::string("missing parameter ") + k);
    return atof(it->second.c_str());
  }
  std::string s(const char* k) const {
    auto it = kv.find(k);
    if (it == kv.end()) die(std::string("missing parameter ") + k);
    return it->second;
  }
};

template <typename T>
static std::vector<T> read_file(const std::string& path, size_t count) {
  FILE* fp = fopen(path.c_str(), "rb");
  if (!fp) die("cannot open " + path);
  std::vector<T> v(count);
  size_t got = fread(v.data(), sizeof(T), count, fp);
  int extra = fgetc(fp);
  fclose(fp);
  if (got != count || extra != EOF)
    die(path + ": expected exactly " + std::to_string(count) + " elements of " +
        std::to_string(sizeof(T)) + " B");
  return v;
}

template <typename T>
static T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  CK(cudaMalloc(&d, h.size() * sizeof(T)));
  CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
static T* filled(size_t count, T value) {
  std::vector<T> h(count, value);
  return to_device(h);
}

// ---------------------------------------------------------------- L2 flush
// Reads buf[0..n) with a grid-stride loop of float4 loads (the sum is kept by a store
// that never happens, so the loads are not removed).
__device__ __forceinline__ void read_all(const float4* buf, size_t n, float* sink) {
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float4 v = buf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 123456.f) *sink = acc;
}

__global__ void l2_flush_kernel(const float4* buf, size_t n, float* sink) {
  read_all(buf, n, sink);
}

static void flush_l2() {
  int dev = 0, l2 = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  size_t bytes = 4 * (size_t)l2;
  float4* buf = nullptr;
  float* sink = nullptr;
  CK(cudaMalloc(&buf, bytes));
  CK(cudaMalloc(&sink, sizeof(float)));
  CK(cudaMemset(buf, 0, bytes));
  l2_flush_kernel<<<4 * sms, 1024>>>(buf, bytes / sizeof(float4), sink);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaFree(buf));
  CK(cudaFree(sink));
}

// ---------------------------------------------------------------- stride (Listing 1)
// output[tid][i] = input[GS*ix + i]^2 for i < n; output is shared (volatile, so the
// stores, and hence the loads, are kept).
#define STRIDE_KERNEL(GS)                                                           \
  __global__ void strided_square_kernel_GS##GS(const float* input, int n) {         \
    extern __shared__ float sh_out[];                                               \
    volatile float* out = sh_out;                                                   \
    int ix = blockIdx.x * blockDim.x + threadIdx.x;                                 \
    _Pragma("unroll 1")                                                             \
    for (int i = 0; i < n; i++) {                                                   \
      float v = input[(size_t)(GS) * ix + i];                                       \
      out[threadIdx.x * n + i] = v * v;                                             \
    }                                                                               \
  }
STRIDE_KERNEL(1)
STRIDE_KERNEL(32)

// Loops whose trip count is a run-time value are kept rolled (`unroll 1`), as in the
// traces: unrolling would issue several iterations' loads together and change the
// memory-level parallelism the trace describes.

// ---------------------------------------------------------------- vecadd, gather
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}

__global__ void gather_kernel(const float* x, const int* idx, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    y[i] = x[idx[i]];
}

// ---------------------------------------------------------------- kmeans assignment
__constant__ float c_clusters[64 * 200];

template <int NF, int K>
__global__ void kmeansPoint(float* features, int nfeatures, int npoints, int nclusters,
                            int* membership, float* clusters, float* unused_f,
                            int* unused_i) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npoints) return;
  float f[NF];
#pragma unroll
  for (int j = 0; j < NF; j++) f[j] = features[(size_t)p * NF + j];
  float best = 3.0e38f;
  int arg = 0;
#pragma unroll
  for (int c = 0; c < K; c++) {
    float d = 0.f;
#pragma unroll
    for (int j = 0; j < NF; j++) {
      float t = f[j] - c_clusters[c * NF + j];
      d += t * t;
    }
    if (d < best) {
      best = d;
      arg = c;
    }
  }
  membership[p] = arg;
}

// ---------------------------------------------------------------- spmv, bfs
__global__ void spmv_csr_scalar_kernel(int rows, const int* row_ptr, const int* col,
                                       const float* val, const float* x, float* y) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < rows) {
    float s = 0.f;
    int b = row_ptr[r], e = row_ptr[r + 1];
#pragma unroll 1
    for (int j = b; j < e; j++) s += val[j] * __ldg(&x[col[j]]);
    y[r] = s;
  }
}

struct __align__(8) Node {
  int starting;
  int no_of_edges;
};

__global__ void bfs_kernel(Node* nodes, int* edges, bool* mask, bool* updating,
                           bool* visited, int* cost, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n && mask[tid]) {
    mask[tid] = false;
    int c = cost[tid];
    Node nd = nodes[tid];
#pragma unroll 1
    for (int i = nd.starting; i < nd.starting + nd.no_of_edges; i++) {
      int id = edges[i];
      if (!visited[id]) {
        cost[id] = c + 1;
        updating[id] = true;
      }
    }
  }
}

// ---------------------------------------------------------------- dense
__global__ void jacobi5pt_kernel(const float* in, float* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= w - 1 || y < 1 || y >= h - 1) return;
  int i = y * w + x;
  float c = in[i], l = in[i - 1], r = in[i + 1], u = in[i - w], d = in[i + w];
  out[i] = 0.2f * c + 0.2f * (((l + r) + u) + d);
}

__global__ void sgemm_tiled16(const float* A, const float* B, float* C, int M, int N,
                              int K) {
  __shared__ float As[16][16];
  __shared__ float Bs[16][16];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 16 + ty, col = blockIdx.x * 16 + tx;
  float sum = 0.f;
  for (int t = 0; t < K / 16; t++) {
    As[ty][tx] = A[row * K + t * 16 + tx];
    Bs[ty][tx] = B[(t * 16 + ty) * N + col];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; k++) sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * N + col] = sum;
}

#define TRANSPOSE_KERNEL(NAME, PAD)                                                 \
  __global__ void NAME(float* out, const float* in, int W, int H) {                 \
    __shared__ float tile[32][32 + (PAD)];                                          \
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;       \
    for (int j = 0; j < 32; j += 8) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * W + x]; \
    __syncthreads();                                                                \
    x = blockIdx.y * 32 + threadIdx.x;                                              \
    y = blockIdx.x * 32 + threadIdx.y;                                              \
    for (int j = 0; j < 32; j += 8) out[(y + j) * H + x] = tile[threadIdx.x][threadIdx.y + j]; \
  }
TRANSPOSE_KERNEL(transpose_tile32, 0)
TRANSPOSE_KERNEL(transpose_tile32_padded, 1)


// ---------------------------------------------------------------- latency probe
// One thread follows a random cyclic chain of pointers, one per 128 B line, over a
// footprint: the load-to-use latency of an L1 hit (default loads, small footprint), an
// L2 hit (ld.global.cg, L1 bypassed) and an L2 miss (ld.global.cg, footprint >> L2), in
// SM cycles (clock64) and ns (%globaltimer), as paper 001's pointer-chase calibration.
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void latency_probe(const unsigned* chain, int steps, int bypass_l1,
                              unsigned long long* out) {
  unsigned p = 0;
  for (int i = 0; i < steps; i++) p = bypass_l1 ? __ldcg(&chain[p]) : chain[p];  // warm
  long long c0 = clock64();
  unsigned long long t0 = gtimer();
  for (int i = 0; i < steps; i++) p = bypass_l1 ? __ldcg(&chain[p]) : chain[p];
  long long c1 = clock64();
  unsigned long long t1 = gtimer();
  out[0] = (unsigned long long)(c1 - c0);
  out[1] = t1 - t0;
  out[2] = p;
}

static void latency(const Args& a) {
  // footprints in KiB; each prints: footprint, bypass, cycles/load, ns/load, MHz
  const long kib[] = {16, 64, 1024, 4096, 16384, 32768, 131072, 524288, 2097152};
  const int words = 32;  // 128 B between consecutive pointers (one line each)
  unsigned long long* d_out = nullptr;
  CK(cudaMalloc(&d_out, 3 * sizeof(unsigned long long)));
  for (long k : kib) {
    size_t lines = (size_t)k * 1024 / 128;
    std::vector<unsigned> order(lines);
    for (size_t i = 0; i < lines; i++) order[i] = (unsigned)i;
    unsigned long long x = 88172645463325252ull;  // xorshift64, fixed seed
    for (size_t i = lines - 1; i > 0; i--) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      size_t j = x % (i + 1);
      std::swap(order[i], order[j]);
    }
    std::vector<unsigned> chain(lines * words, 0);
    for (size_t i = 0; i < lines; i++)
      chain[(size_t)order[i] * words] = order[(i + 1) % lines] * words;
    unsigned* d_chain = to_device(chain);
    int steps = (int)std::min<size_t>(lines, 20000);
    for (int bypass = 0; bypass < 2; bypass++) {
      if (bypass == 0 && k > 1024) continue;  // L1 hits only for small footprints
      unsigned long long h[3];
      latency_probe<<<1, 1>>>(d_chain, steps, bypass, d_out);
      CK(cudaGetLastError());
      CK(cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost));
      printf("latency,%ld,%d,%.1f,%.1f,%.0f\n", k, bypass, (double)h[0] / steps,
             (double)h[1] / steps, h[1] ? 1e3 * (double)h[0] / (double)h[1] : 0.0);
    }
    CK(cudaFree(d_chain));
  }
  (void)a;
}


// ---------------------------------------------------------------- throughput probes
// Block dispatch: an empty kernel of G blocks of 256 threads. DRAM: every thread reads
// `iters` 4 B words at pseudo-random 128 B lines of a `mib` MiB buffer (one 32 B sector
// per access; the L2 fetches its granularity), or streams it with float4 loads. Printed
// as CSV lines "probe,name,param,value,unit" (times from CUDA events, mean of `reps`).
__global__ void empty_kernel() {}

__device__ __forceinline__ unsigned long long mix(unsigned long long x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdull; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

__global__ void random_sectors(const float* buf, size_t lines, int iters, float* sink) {
  size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  float acc = 0.f;
  for (int i = 0; i < iters; i++) {
    size_t line = mix(t * 1315423911ull + i) % lines;
    acc += buf[line * 32];
  }
  if (acc == 123456.f) *sink = acc;
}

__global__ void stream_float4(const float4* buf, size_t n, float* sink) {
  read_all(buf, n, sink);
}

template <typename F>
static float time_ms(F launch, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();  // warm-up
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(a));
  for (int r = 0; r < reps; r++) launch();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaGetLastError());
  return ms / reps;
}

static void probes(const Args& a) {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  int reps = a.kv.count("reps") ? (int)a.i("reps") : 0;  // 0: 50 (dispatch), 5 (DRAM)
  for (int waves : {1, 2, 4, 8, 16}) {
    int grid = waves * sms * 8;
    float ms = time_ms([&] { empty_kernel<<<grid, 256>>>(); }, reps ? reps : 50);
    printf("probe,empty_kernel,%d,%.3f,us\n", grid, 1e3 * ms);
  }
  float* sink = nullptr;
  CK(cudaMalloc(&sink, sizeof(float)));
  for (size_t mib : {256, 1024, 4096}) {
    size_t bytes = mib << 20;
    float* buf = nullptr;
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMemset(buf, 0, bytes));
    size_t lines = bytes / 128;
    int grid = sms * 8 * 4, iters = 16;
    double n = (double)grid * 256 * iters;
    float ms = time_ms([&] { random_sectors<<<grid, 256>>>(buf, lines, iters, sink); }, reps ? reps : 5);
    printf("probe,random_sectors_per_us,%zu,%.1f,accesses/us\n", mib, n / (1e3 * ms));
    float ms2 = time_ms([&] {
      stream_float4<<<sms * 8, 256>>>(reinterpret_cast<const float4*>(buf), bytes / 16, sink);
    }, reps ? reps : 5);
    printf("probe,stream_read_gbps,%zu,%.1f,GB/s\n", mib, bytes / (1e6 * ms2));
    CK(cudaFree(buf));
  }
}

// ---------------------------------------------------------------- host
static std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; i++) v[i] = (float)((i * 2654435761u) % 1000) * 1e-3f;
  return v;
}

// ---------------------------------------------------------------- issue-order probe
// Which warp a scheduler issues from. Each warp reads clock64 (t0), issues 64
// independent instructions, reads it again (t1) before using their results and (t2)
// after. mode=alu: 64 FFMAs over 16 registers (each 16 instructions after the one it
// depends on, more than the FMA's latency: no dependency stall); mode=load: kmeans' 16
// feature loads (thread p reads f[p*16 + j], j = 0..15: each load touches 16 lines, and
// each line is read by all 16 loads), then 48 FFMAs that do not use them. sync=1: a
// __syncthreads() before t0, so that the warps of a block are ready at once. A greedy
// scheduler (GTO) issues one ready warp's instructions back to back, so the warps that
// share a scheduler reach t1 one after another, a warp's issue time apart; a
// round-robin one (LRR) interleaves them, so they reach t1 together. One wave of `bps`
// blocks of `threads` per SM; prints "issue,mode,threads,bps,warp,smid,warpid,t0,t1,t2"
// per warp (sync=1: mode "alu_sync" or "load_sync").
__device__ __forceinline__ long long clk() {
  long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}

__device__ __forceinline__ float ldf(const float* a) {
  float v;
  asm volatile("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(a) : "memory");
  return v;
}

template <int LOAD>
__global__ void issue_order_probe(const float* f, float x, float y, int sync,
                                  long long* out, float* sink) {
  size_t p = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  float v[16], u[16];
#pragma unroll
  for (int j = 0; j < 16; j++) u[j] = __int_as_float((int)(p * 16 + j) & 0x3fffffff);
  if (sync) __syncthreads();
  long long t0 = clk();
  if (LOAD) {
#pragma unroll
    for (int j = 0; j < 16; j++) v[j] = ldf(f + p * 16 + j);
  }
#pragma unroll
  for (int r = 0; r < (LOAD ? 3 : 4); r++) {
#pragma unroll
    for (int j = 0; j < 16; j++) u[j] = fmaf(u[j], x, y);
  }
  long long t1 = clk();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 16; j++) s += u[j] + (LOAD ? v[j] : 0.f);
  long long t2 = clk();
  if (s == 123456.f) *sink = s;
  if ((threadIdx.x & 31) == 0) {
    unsigned sm, wid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
    long long* o = out + (p >> 5) * 5;
    o[0] = t0; o[1] = t1; o[2] = t2; o[3] = sm; o[4] = wid;
  }
}

static void issue_order(const Args& a) {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::string mode = a.s("mode");
  int threads = (int)a.i("threads"), bps = (int)a.i("bps"), grid = sms * bps;
  int sync = a.kv.count("sync") ? (int)a.i("sync") : 0;
  size_t n = (size_t)grid * threads, warps = n / 32;
  float* f = to_device(ramp(n * 16));
  float* sink = filled<float>(1, 0.f);
  long long* d = filled<long long>(warps * 5, 0);
  flush_l2();
  if (mode == "load")
    issue_order_probe<1><<<grid, threads>>>(f, 1.0001f, 0.5f, sync, d, sink);
  else if (mode == "alu")
    issue_order_probe<0><<<grid, threads>>>(f, 1.0001f, 0.5f, sync, d, sink);
  else
    die("issue: mode must be alu or load, got " + mode);
  CK(cudaGetLastError());
  std::vector<long long> h(warps * 5);
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  for (size_t w = 0; w < warps; w++) {
    const long long* o = &h[w * 5];
    printf("issue,%s%s,%d,%d,%zu,%lld,%lld,%lld,%lld,%lld\n", mode.c_str(),
           sync ? "_sync" : "", threads, bps, w, o[3], o[4], o[0], o[1], o[2]);
  }
  CK(cudaFree(f));
  CK(cudaFree(sink));
  CK(cudaFree(d));
}

// ---------------------------------------------------------------- block placement probe
// Which SM runs which thread block, and when: thread 0 of every block records %smid and
// %globaltimer at its start and end; in between every thread runs `iters` dependent
// FFMAs, so that blocks stay resident for a while (a wave fills the SMs before the
// first block ends). `smem` bytes of dynamic shared memory per block (allocated at
// launch, unused) limit the blocks per SM as a workload's would. Prints "placement,block,smid,start_ns,end_ns" per
// block, in block order; read with benchmarks/hardware/placement.py.
__global__ void placement_probe(int iters, float x, unsigned long long* out, float* sink) {
  unsigned long long t0 = gtimer();
  float v = threadIdx.x * 1e-3f;
  for (int i = 0; i < iters; i++) v = fmaf(v, x, 0.5f);
  if (v == 123456.f) *sink = v;  // never: keeps the loop
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    size_t b = blockIdx.x + (size_t)gridDim.x * blockIdx.y;
    out[3 * b] = sm;
    out[3 * b + 1] = t0;
    out[3 * b + 2] = gtimer();
  }
}

static void placement(const Args& a) {
  int threads = (int)a.i("threads"), smem = a.kv.count("smem") ? (int)a.i("smem") : 0;
  int gx = (int)a.i("gx"), gy = a.kv.count("gy") ? (int)a.i("gy") : 1;
  int iters = a.kv.count("iters") ? (int)a.i("iters") : 20000;
  size_t blocks = (size_t)gx * gy;
  unsigned long long* d = filled<unsigned long long>(3 * blocks, 0);
  float* sink = filled<float>(1, 0.f);
  placement_probe<<<dim3(gx, gy), threads, smem>>>(iters, 1.0001f, d, sink);
  CK(cudaGetLastError());
  std::vector<unsigned long long> h(3 * blocks);
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ull;
  for (size_t b = 0; b < blocks; b++) t0 = std::min(t0, h[3 * b + 1]);
  for (size_t b = 0; b < blocks; b++)
    printf("placement,%zu,%llu,%llu,%llu\n", b, h[3 * b], h[3 * b + 1] - t0, h[3 * b + 2] - t0);
  CK(cudaFree(d));
  CK(cudaFree(sink));
}

// ---------------------------------------------------------------- issue throughput probe
// How many FP32 warp instructions of one form an SM issues per cycle: one block of
// `warps` warps per SM; after a barrier every warp runs `iters` x 64 instructions over 16
// independent accumulators (each 16 instructions after the one it depends on), then
// the block's cycles (clock64, thread 0) are recorded. op: ffma (acc * x + y, x and y
// in registers the compiler reuses), ffma3 (three accumulators as operands), fadd, fmul
// (floating point: the compiler may not fold them). Prints
// "throughput,op,warps,iters,smid,cycles" per block; warp instructions per cycle per SM
// = warps x iters x 64 / cycles (the loop adds a few instructions per 64: see the SASS).
template <int OP>
__global__ void throughput_probe(float x, float y, int iters, long long* out, float* sink) {
  float a[16];
#pragma unroll
  for (int j = 0; j < 16; j++) a[j] = (threadIdx.x + j) * 1e-3f;
  __syncthreads();
  long long t0 = clock64();
#pragma unroll 1
  for (int i = 0; i < iters; i++) {
#pragma unroll 4
    for (int r = 0; r < 4; r++) {
#pragma unroll
      for (int j = 0; j < 16; j++) {
        if (OP == 0) a[j] = fmaf(a[j], x, y);
        if (OP == 1) a[j] = fmaf(a[j], a[(j + 5) & 15], a[(j + 11) & 15]);
        if (OP == 2) a[j] = a[j] + x;
        if (OP == 3) a[j] = a[j] * x;
      }
    }
  }
  __syncthreads();
  long long t1 = clock64();
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 16; j++) s += a[j];
  if (s == 123456.f) *sink = s;
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    out[2 * blockIdx.x] = sm;
    out[2 * blockIdx.x + 1] = t1 - t0;
  }
}

static void throughput(const Args& a) {
  int dev = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  std::string op = a.s("op");
  int warps = (int)a.i("warps"), iters = a.kv.count("iters") ? (int)a.i("iters") : 256;
  const char* names[] = {"ffma", "ffma3", "fadd", "fmul"};
  int k = -1;
  for (int i = 0; i < 4; i++)
    if (op == names[i]) k = i;
  if (k < 0) die("throughput: op must be ffma, ffma3, fadd or fmul, got " + op);
  long long* d = filled<long long>(2 * sms, 0);
  float* sink = filled<float>(1, 0.f);
  void (*kernels[])(float, float, int, long long*, float*) = {
      throughput_probe<0>, throughput_probe<1>, throughput_probe<2>, throughput_probe<3>};
  kernels[k]<<<sms, 32 * warps>>>(1.0001f, 0.5f, iters, d, sink);
  CK(cudaGetLastError());
  std::vector<long long> h(2 * sms);
  CK(cudaMemcpy(h.data(), d, h.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  for (int b = 0; b < sms; b++)
    printf("throughput,%s,%d,%d,%lld,%lld\n", op.c_str(), warps, iters, h[2 * b], h[2 * b + 1]);
  CK(cudaFree(d));
  CK(cudaFree(sink));
}

// ---------------------------------------------------------------- L1 carve-out, SM count
static void set_carveout(int pct) {
  const void* kernels[] = {
      (const void*)strided_square_kernel_GS1, (const void*)strided_square_kernel_GS32,
      (const void*)vecAdd, (const void*)gather_kernel, (const void*)kmeansPoint<16, 3>,
      (const void*)spmv_csr_scalar_kernel, (const void*)bfs_kernel,
      (const void*)jacobi5pt_kernel, (const void*)sgemm_tiled16,
      (const void*)transpose_tile32, (const void*)transpose_tile32_padded};
  for (const void* k : kernels)
    CK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, pct));
  fprintf(stderr, "mdm_hw: preferred shared-memory carve-out %d %%\n", pct);
}

// Makes a green context of `n` SMs current to this thread; the runtime API's calls
// that follow (allocations, launches on the default stream) go to it.
static void use_sms(int n) {
  CUdevice dev;
  CU(DRV(cuDeviceGet)(&dev, 0));
  CUdevResource all, part, rest;
  CU(DRV(cuDeviceGetDevResource)(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  unsigned groups = 1;
  CU(DRV(cuDevSmResourceSplitByCount)(&part, &groups, &all, &rest, 0, (unsigned)n));
  if (groups != 1 || (int)part.sm.smCount != n)
    die("sms=" + std::to_string(n) + ": the device splits off " +
        std::to_string(part.sm.smCount) + " SMs (of " + std::to_string(all.sm.smCount) +
        "); choose a count it allows");
  CUdevResourceDesc desc;
  CU(DRV(cuDevResourceGenerateDesc)(&desc, &part, 1));
  CUgreenCtx green;
  CU(DRV(cuGreenCtxCreate)(&green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUcontext ctx;
  CU(DRV(cuCtxFromGreenCtx)(&ctx, green));
  CU(DRV(cuCtxSetCurrent)(ctx));
  fprintf(stderr, "mdm_hw: green context of %u SMs (device %u)\n", part.sm.smCount,
          all.sm.smCount);
}

__global__ void smid_kernel(unsigned* seen) {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  if (threadIdx.x == 0) atomicOr(&seen[id / 32], 1u << (id % 32));
  for (volatile int i = 0; i < 1000; i++) {}
}

// The number of SMs a grid of `blocks` blocks runs on in the current context.
static int count_sms(int blocks) {
  unsigned* d = nullptr;
  CK(cudaMalloc(&d, 64 * sizeof(unsigned)));
  CK(cudaMemset(d, 0, 64 * sizeof(unsigned)));
  smid_kernel<<<blocks, 128>>>(d);
  CK(cudaGetLastError());
  unsigned h[64];
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  int n = 0;
  for (unsigned w : h) n += __builtin_popcount(w);
  return n;
}

static void run(const std::string& wl, const Args& a) {
  std::string data = a.kv.count("data") ? a.s("data") : ".";
  const std::map<std::string, void (*)(const Args&)> probe_runs = {
      {"probes", probes},       {"latency", latency},       {"issue", issue_order},
      {"placement", placement}, {"throughput", throughput}};
  auto probe = probe_runs.find(wl);
  if (probe != probe_runs.end()) {
    probe->second(a);
    return;
  }
  if (wl == "stride") {
    long ctas = a.i("ctas"), threads = a.i("threads"), n = a.i("n"), gs = a.i("gs");
    size_t in_n = (size_t)gs * (ctas * threads - 1) + n;
    float* in = to_device(ramp(in_n));
    size_t shmem = threads * n * 4;
    flush_l2();
    if (gs == 1)
      strided_square_kernel_GS1<<<ctas, threads, shmem>>>(in, (int)n);
    else if (gs == 32)
      strided_square_kernel_GS32<<<ctas, threads, shmem>>>(in, (int)n);
    else
      die("stride: only gs=1 and gs=32 are compiled in");
  } else if (wl == "vecadd") {
    long ctas = a.i("ctas"), threads = a.i("threads");
    long n = ctas * threads * a.i("iters") - a.i("tail");
    float* pa = to_device(ramp(n));
    float* pb = to_device(ramp(n));
    float* pc = filled<float>(n, 0.f);
    flush_l2();
    vecAdd<<<ctas, threads>>>(pa, pb, pc, (int)n);
  } else if (wl == "gather") {
    long ctas = a.i("ctas"), threads = a.i("threads"), xsize = a.i("xsize");
    long n = ctas * threads * a.i("iters") - a.i("tail");
    float* x = to_device(ramp(xsize));
    int* idx = to_device(read_file<int32_t>(data + "/idx.i32", n));
    float* y = filled<float>(n, 0.f);
    flush_l2();
    gather_kernel<<<ctas, threads>>>(x, idx, y, (int)n);
  } else if (wl == "kmeans") {
    long ctas = a.i("ctas"), threads = a.i("threads"), nf = a.i("nf"), k = a.i("k");
    long npts = ctas * threads - a.i("tail");
    if (nf != 16 || k != 3) die("kmeans: only nf=16, k=3 is compiled in");
    float* feat = to_device(ramp(npts * nf));
    std::vector<float> cent = ramp(k * nf);
    CK(cudaMemcpyToSymbol(c_clusters, cent.data(), cent.size() * sizeof(float)));
    int* memb = filled<int>(npts, 0);
    flush_l2();
    kmeansPoint<16, 3><<<ctas, threads>>>(feat, (int)nf, (int)npts, (int)k, memb, nullptr,
                                          nullptr, nullptr);
  } else if (wl == "spmv_csr") {
    long ctas = a.i("ctas"), threads = a.i("threads");
    long rows = ctas * threads - a.i("tail");
    std::vector<int32_t> rp = read_file<int32_t>(data + "/row_ptr.i32", rows + 1);
    long nnz = rp[rows];
    int* d_rp = to_device(rp);
    int* d_col = to_device(read_file<int32_t>(data + "/col.i32", nnz));
    float* val = to_device(ramp(nnz));
    float* x = to_device(ramp(rows));
    float* y = filled<float>(rows, 0.f);
    flush_l2();
    spmv_csr_scalar_kernel<<<ctas, threads>>>((int)rows, d_rp, d_col, val, x, y);
  } else if (wl == "bfs") {
    long ctas = a.i("ctas"), threads = a.i("threads");
    long n = ctas * threads - a.i("tail");
    std::vector<int32_t> nodes = read_file<int32_t>(data + "/nodes.i32", 2 * n);
    long ne = (long)nodes[2 * n - 2] + nodes[2 * n - 1];
    Node* d_nodes = reinterpret_cast<Node*>(to_device(nodes));
    int* d_edges = to_device(read_file<int32_t>(data + "/edges.i32", ne));
    bool* mask = reinterpret_cast<bool*>(to_device(read_file<uint8_t>(data + "/mask.u8", n)));
    bool* vis = reinterpret_cast<bool*>(to_device(read_file<uint8_t>(data + "/visited.u8", n)));
    bool* upd = reinterpret_cast<bool*>(filled<uint8_t>(n, 0));
    int* cost = filled<int>(n, 0);
    flush_l2();
    bfs_kernel<<<ctas, threads>>>(d_nodes, d_edges, mask, upd, vis, cost, (int)n);
  } else if (wl == "stencil2d") {
    long w = a.i("W"), h = a.i("H"), sweeps = a.i("sweeps");
    float* p = to_device(ramp(w * h));
    float* q = filled<float>(w * h, 0.f);
    dim3 grid((w + 31) / 32, (h + 7) / 8), block(32, 8);
    flush_l2();
    for (long s = 0; s < sweeps; s++) {
      if (s % 2 == 0)
        jacobi5pt_kernel<<<grid, block>>>(p, q, (int)w, (int)h);
      else
        jacobi5pt_kernel<<<grid, block>>>(q, p, (int)w, (int)h);
    }
  } else if (wl == "gemm_tiled") {
    long m = a.i("M"), n = a.i("N"), k = a.i("K");
    if (m % 16 || n % 16 || k % 16) die("gemm_tiled: M, N, K must be multiples of 16");
    float* pa = to_device(ramp(m * k));
    float* pb = to_device(ramp(k * n));
    float* pc = filled<float>(m * n, 0.f);
    flush_l2();
    sgemm_tiled16<<<dim3(n / 16, m / 16), dim3(16, 16)>>>(pa, pb, pc, (int)m, (int)n, (int)k);
  } else if (wl == "transpose") {
    long w = a.i("W"), h = a.i("H"), pad = a.i("pad");
    if (w % 32 || h % 32) die("transpose: W and H must be multiples of 32");
    float* in = to_device(ramp(w * h));
    float* out = filled<float>(w * h, 0.f);
    dim3 grid(w / 32, h / 32), block(32, 8);
    flush_l2();
    if (pad)
      transpose_tile32_padded<<<grid, block>>>(out, in, (int)w, (int)h);
    else
      transpose_tile32<<<grid, block>>>(out, in, (int)w, (int)h);
  } else {
    die("unknown workload " + wl);
  }
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
}

int main(int argc, char** argv) {
  if (argc < 2) die("usage: mdm_hw WORKLOAD key=value ... [data=DIR]");
  Args a;
  for (int i = 2; i < argc; i++) {
    std::string kv = argv[i];
    size_t eq = kv.find('=');
    if (eq == std::string::npos) die("expected key=value, got " + kv);
    a.kv[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  CK(cudaFree(nullptr));  // the primary context first (green contexts retain it)
  if (a.kv.count("sms")) {
    int want = (int)a.i("sms");
    use_sms(want);
    int ran = count_sms(4096);
    fprintf(stderr, "mdm_hw: a 4096-block grid ran on %d SMs\n", ran);
    if (ran > want) die("sms=" + std::to_string(want) + " but kernels ran on " +
                        std::to_string(ran) + " SMs");
  }
  if (a.kv.count("carveout")) set_carveout((int)a.i("carveout"));
  if (a.kv.count("l2fetch")) {  // the context's L2 fetch-granularity hint, in bytes
    CK(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, (size_t)a.i("l2fetch")));
  }
  size_t fetch = 0;
  CK(cudaDeviceGetLimit(&fetch, cudaLimitMaxL2FetchGranularity));
  fprintf(stderr, "mdm_hw: cudaLimitMaxL2FetchGranularity = %zu B\n", fetch);
  run(argv[1], a);
  fprintf(stderr, "mdm_hw: %s done\n", argv[1]);
  return 0;
}
