// Compile-only check (no GPU on the build machines): statements in their
// device form (kernel::run_device) through a launcher written here on the
// CUDA runtime API, without Kokkos (compiled by hipcc, the same launcher
// on HIP's runtime API, whose calls are named hip* for cuda*): operands in
// device memory as views over borrowed arrays, the operands' views and the
// expression uploaded with one memcpy, the loop nest launched as one
// __global__ over the chunks of its outer loop (one row per thread),
// scalar partials summed on the host; sparse outputs in owned device arrays
// (the launcher's alloc, and an exclusive scan in one block). Every output
// strategy of the device form: rows, scatter (atomicAdd), scalar, split
// terms, `+=`, sparse outputs by count, scan and fill (CSR, DCSR and COO
// matrices; CSF and COO tensors per level, in chunks), SpGEMM with row
// accumulators, a sparse vector.
// tests/codegen/device_form.cpp runs the same device form on the host.
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#define GPU(name) hip##name
#else
#include <cuda_runtime.h>
#define GPU(name) cuda##name
#endif

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/execution.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/view.hpp"
#include "../support/format_lists.hpp"  // tltest::hash_rows

namespace tl = tensorlev;

// Borrowed arrays in device memory.
struct device_memory : tl::borrowed<> {
  static constexpr bool host_accessible = false;
  using borrowed_type = tl::borrowed<>;
};

inline void check(GPU(Error_t) e, const char* what) {
  if (e != GPU(Success)) throw std::runtime_error(std::string(what) + ": " + GPU(GetErrorString)(e));
}

// An owned array in device memory (what the launcher's alloc returns and a
// sparse output adopts): copies share it, the last one frees it.
template <class T>
class gpu_array {
 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  gpu_array() = default;
  explicit gpu_array(std::size_t n) : n_(n) {
    void* p = nullptr;
    if (n > 0) check(GPU(Malloc)(&p, n * sizeof(T)), "malloc");
    owner_ = std::shared_ptr<void>(p, [](void* q) { (void)GPU(Free)(q); });
    p_ = static_cast<T*>(p);
  }
  __host__ __device__ T* data() const noexcept { return p_; }
  __host__ __device__ std::size_t size() const noexcept { return n_; }
  __host__ __device__ bool empty() const noexcept { return n_ == 0; }
  __host__ __device__ T& operator[](std::size_t i) const noexcept { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
  std::shared_ptr<void> owner_;
};

// Storage whose arrays are owned device memory: sparse outputs are built
// there by the launcher's count, scan and fill (not growable).
struct device_arrays {
  template <class T>
  using array = gpu_array<T>;
  template <class T>
  using shared = gpu_array<T>;
  template <class I>
  using pos_type = I;
  template <class I>
  using crd_type = I;
  static constexpr bool growable = false;
  static constexpr bool host_accessible = false;
  static constexpr const char* name = "device";
  using borrowed_type = tl::borrowed<>;
};
static_assert(tl::storage_policy<device_arrays> && !tl::growable_storage<device_arrays>);

template <class F>
__global__ void each_chunk(F f, std::size_t n) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < n) (void)f(c);
}
template <class V, class F>
__global__ void chunk_sums(F f, std::size_t n, V* partial) {
  const std::size_t c = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < n) partial[c] = f(c);
}
constexpr unsigned scan_threads = 256;
// An exclusive scan of a[0, n) in place by one block (sums in 64 bits);
// part[t] ends as thread t's offset, part[scan_threads] the total.
template <class T>
__global__ void scan_block(T* a, std::size_t n, std::uint64_t* part) {
  const unsigned t = threadIdx.x;
  const std::size_t stretch = (n + scan_threads - 1) / scan_threads;
  const std::size_t lo = t * stretch < n ? t * stretch : n;
  const std::size_t hi = lo + stretch < n ? lo + stretch : n;
  std::uint64_t s = 0;
  for (std::size_t k = lo; k < hi; ++k) {
    const T v = a[k];
    a[k] = static_cast<T>(s);
    s += static_cast<std::uint64_t>(v);
  }
  part[t] = s;
  __syncthreads();
  if (t == 0) {
    std::uint64_t run = 0;
    for (unsigned u = 0; u < scan_threads; ++u) {
      const std::uint64_t v = part[u];
      part[u] = run;
      run += v;
    }
    part[scan_threads] = run;
  }
  __syncthreads();
  for (std::size_t k = lo; k < hi; ++k) a[k] = static_cast<T>(static_cast<std::uint64_t>(a[k]) + part[t]);
}

class gpu_launcher {
 public:
  struct device_launcher_tag {};
  template <class S>
  static constexpr bool reaches = !S::host_accessible;

  gpu_launcher() = default;
  gpu_launcher(const gpu_launcher&) = delete;
  gpu_launcher& operator=(const gpu_launcher&) = delete;
  ~gpu_launcher() {
    (void)GPU(DeviceSynchronize)();
    for (void* p : kept_) (void)GPU(Free)(p);
  }

  template <class T>
  const T* upload(const T& x) const {
    void* p = nullptr;
    check(GPU(Malloc)(&p, sizeof(T)), "malloc");
    kept_.push_back(p);
    check(GPU(Memcpy)(p, &x, sizeof(T), GPU(MemcpyHostToDevice)), "memcpy");
    return static_cast<const T*>(p);
  }
  template <class F>
  void for_each(std::size_t n, const F& f) const {
    each_chunk<<<static_cast<unsigned>((n + 127) / 128), 128>>>(f, n);
    check(GPU(GetLastError)(), "launch");
  }
  template <class V, class F>
  V sum(std::size_t n, const F& f) const {
    V* partial = nullptr;
    check(GPU(Malloc)(reinterpret_cast<void**>(&partial), n * sizeof(V)), "malloc");
    kept_.push_back(partial);
    chunk_sums<V><<<static_cast<unsigned>((n + 127) / 128), 128>>>(f, n, partial);
    check(GPU(GetLastError)(), "launch");
    std::vector<V> host(n);
    check(GPU(Memcpy)(host.data(), partial, n * sizeof(V), GPU(MemcpyDeviceToHost)), "memcpy");
    V s{};
    for (const V& v : host) s += v;
    return s;
  }
  template <class T>
  gpu_array<T> alloc(std::size_t n, bool zeroed) const {
    gpu_array<T> a(n);
    if (zeroed && n > 0) check(GPU(Memset)(a.data(), 0, n * sizeof(T)), "memset");
    return a;
  }
  // In place, one block: each thread scans a stretch, a serial pass over the
  // stretch sums, then each thread offsets its stretch. Returns the total.
  template <class T>
  std::uint64_t exclusive_scan(T* a, std::size_t n) const {
    std::uint64_t* total = nullptr;
    check(GPU(Malloc)(reinterpret_cast<void**>(&total), (scan_threads + 1) * sizeof(std::uint64_t)), "malloc");
    kept_.push_back(total);
    scan_block<T><<<1, scan_threads>>>(a, n, total);
    check(GPU(GetLastError)(), "launch");
    std::uint64_t s = 0;
    check(GPU(Memcpy)(&s, total + scan_threads, sizeof s, GPU(MemcpyDeviceToHost)), "memcpy");
    return s;
  }

 private:
  mutable std::vector<void*> kept_;
};
static_assert(tl::device_launcher<gpu_launcher>);

template <class F>
using in = tl::tensor<const double, F, int, device_memory>;
template <class F>
using out = tl::tensor<double, F, int, device_memory>;
template <class F>
using built = tl::tensor<double, F, int, device_arrays>;

// Every statement of the device form over operands in device memory
// (instantiated here; never run: no GPU).
void run_all(const in<tl::csr>& A, const in<tl::coo>& Acoo, const in<tl::dcsr>& Adcsr, const in<tl::csc>& Acsc,
             const in<tl::ell>& Aell, const in<tl::csf>& B, const in<tl::dense_row_major>& C,
             const in<tl::dense_row_major>& D, const in<tl::dense_vector>& x, const in<tl::dense_vector>& z,
             out<tl::dense_vector>& y, out<tl::dense_row_major>& M, built<tl::csr>& Ccsr, built<tl::dcsr>& Cdcsr,
             built<tl::coo>& Ccoo, built<tl::sparse_vector>& w, const in<tl::sparse_vector>& v, built<tl::csf>& Zcsf,
             built<tl::coo_tensor<3>>& Zcoo) {
  using namespace tl::indices;
  constexpr tl::index_var<'r'> r{};
  const gpu_launcher dev;
  tl::cg::run_device_form<false>(dev, y(i), A(i, j) * x(j));                     // rows
  tl::cg::run_device_form<true>(dev, y(i), Acoo(i, j) * x(j));                   // rows, cut between rows, +=
  tl::cg::run_device_form<false>(dev, y(i), Adcsr(i, j) * x(j) + z(i));          // rows over stored rows
  tl::cg::run_device_form<false>(dev, y(i), Acsc(i, j) * x(j));                  // scatter: atomicAdd
  tl::cg::run_device_form<false>(dev, y(j), A(i, j) * z(i));                     // transposed: atomicAdd
  tl::cg::run_device_form<false>(dev, y(i), Aell(i, j) * x(j));                  // ELL: a private loop variable
  tl::cg::run_device_form<false>(dev, y(i), -(A(i, j) * x(j) - 2.0 * z(i)) - z(i) * z(i));  // split terms
  tl::cg::run_device_form<false>(dev, M(i, r), B(i, k, l) * C(k, r) * D(l, r));  // MTTKRP over CSF
  // Sparse outputs assembled on the device: count, scan, fill.
  tl::cg::run_device_form<false>(dev, Ccsr(i, j), A(i, j) + 2.0 * Acoo(i, j));      // CSR: merged rows
  tl::cg::run_device_form<true>(dev, Ccsr(i, j), Adcsr(i, j) * C(i, j));           // CSR +=
  tl::cg::run_device_form<false>(dev, Cdcsr(i, j), A(i, j) - Adcsr(i, j));         // DCSR: CSR, compacted
  tl::cg::run_device_form<false>(dev, Ccoo(i, j), -A(i, j));                       // COO: CSR, compacted
  tl::cg::run_device_form<false>(dev, Ccsr(i, j), A(i, k) * Adcsr(k, j));          // SpGEMM: row accumulators
  tl::cg::run_device_form<true>(dev, Ccoo(i, j), A(i, k) * A(k, j) - Acoo(i, j));  // SpGEMM +=, split terms
  tl::cg::run_device_form<false>(dev, w(j), v(i) * A(i, j));                       // a sparse vector
  // Order-3 outputs: chunked count, scan, fill per level.
  tl::cg::run_device_form<false>(dev, Zcsf(i, j, k), B(i, j, k) + B(i, j, k) * x(k));  // CSF
  tl::cg::run_device_form<true>(dev, Zcsf(i, j, k), B(i, j, k) * C(i, j));           // CSF +=
  tl::cg::run_device_form<false>(dev, Zcoo(i, j, k), -B(i, j, k));                   // COO: singletons
  tl::scalar<double> s;
  tl::cg::run_device_form<false>(dev, s(), z(i) * A(i, j) * x(j));  // a scalar: partial sums
}

// Every other format the device form takes as an operand (the device-form
// cases' formats, tests/codegen/device_cases.hpp), each in a row product, a
// transposed (scattered) product and a scalar reduction: the formats' own
// device code (their levels' iteration and locate, derived coordinates)
// through this compiler. CI's Kokkos::Cuda compile runs the Kokkos launcher
// on a few formats only (scripts/check-kokkos-cuda.sh).
using tltest::hash_rows;
template <class F>
void run_matrix_format(const gpu_launcher& dev, const in<F>& A, const in<tl::dense_vector>& x,
                       const in<tl::dense_vector>& z, out<tl::dense_vector>& y, out<tl::dense_vector>& yt) {
  using namespace tl::indices;
  tl::cg::run_device_form<false>(dev, y(i), A(i, j) * x(j) + z(i));
  tl::cg::run_device_form<true>(dev, yt(j), A(i, j) * z(i));
  tl::scalar<double> s;
  tl::cg::run_device_form<false>(dev, s(), z(i) * A(i, j) * x(j));
}
template <class F>
void run_order3_format(const gpu_launcher& dev, const in<F>& B, const in<tl::dense_row_major>& C,
                       const in<tl::dense_row_major>& D, const in<tl::dense_vector>& x, out<tl::dense_row_major>& M,
                       out<tl::dense_row_major>& N) {
  using namespace tl::indices;
  constexpr tl::index_var<'r'> r{};
  tl::cg::run_device_form<false>(dev, M(i, r), B(i, k, l) * C(k, r) * D(l, r));  // MTTKRP
  tl::cg::run_device_form<true>(dev, N(i, j), B(i, j, k) * x(k));               // TTV +=
}
void run_formats(const in<tl::coo_aos>& A1, const in<tl::dense_col_major>& A2, const in<hash_rows>& A3,
                 const in<tl::dia>& A4, const in<tl::bcsr<2>>& A5, const in<tl::dense_row_major>& A6,
                 const in<tl::sell_sigma<4, 8>>& A7,
                 const in<tl::coo_tensor<3>>& B1, const in<tl::dense_tensor<3>>& B2, const in<tl::mode_generic>& B3,
                 const in<tl::dense_row_major>& C, const in<tl::dense_row_major>& D, const in<tl::dense_vector>& x,
                 const in<tl::dense_vector>& z, out<tl::dense_vector>& y, out<tl::dense_vector>& yt,
                 out<tl::dense_row_major>& M, out<tl::dense_row_major>& N) {
  const gpu_launcher dev;
  run_matrix_format(dev, A1, x, z, y, yt);
  run_matrix_format(dev, A2, x, z, y, yt);
  run_matrix_format(dev, A3, x, z, y, yt);
  run_matrix_format(dev, A4, x, z, y, yt);
  run_matrix_format(dev, A5, x, z, y, yt);
  run_matrix_format(dev, A6, x, z, y, yt);
  run_matrix_format(dev, A7, x, z, y, yt);  // rows through the lanes' permutation
  run_order3_format(dev, B1, C, D, x, M, N);
  run_order3_format(dev, B2, C, D, x, M, N);
  run_order3_format(dev, B3, C, D, x, M, N);
}

// Host statements on owning tensors in a translation unit the device
// compiler builds, as a user's file built with nvcc_wrapper: the kernel's
// host/device members instantiated with outputs whose host form calls
// host-only level code (CSR from CSC operands: a sorted stream; an order-3
// COO sum: assembled into host levels; a hashed output from CSR operands:
// entries inserted into host levels) must compile without a warning.
// The explorer's k_add and k_tensor_elementwise units met the first two
// when they were first built for a GPU run.
void host_statements(const tl::tensor<double, tl::csc>& A, const tl::tensor<double, tl::csc>& B,
                     tl::tensor<double, tl::csr>& C, const tl::tensor<double, tl::coo_tensor<3>>& X,
                     const tl::tensor<double, tl::coo_tensor<3>>& Y, tl::tensor<double, tl::coo_tensor<3>>& Z,
                     const tl::tensor<double, tl::csr>& P, const tl::tensor<double, tl::csr>& Q,
                     tl::tensor<double, tltest::hash_rows>& H) {
  using namespace tl::indices;
  tl::compute(tl::serial, C(i, j), A(i, j) + B(i, j));
  tl::compute(tl::serial, Z(i, j, k), X(i, j, k) + Y(i, j, k));
  tl::compute(tl::serial, H(i, j), P(i, j) + Q(i, j));
}
// SELL-C-sigma's host block workspace (its stores through the permutation,
// an unrolled lane loop) through this compiler's host pass.
void host_sell_sigma(const tl::tensor<double, tl::sell_sigma<8>>& A, const tl::tensor<double, tl::dense_vector>& x,
                     tl::tensor<double, tl::dense_vector>& y) {
  using namespace tl::indices;
  tl::compute(tl::serial, y(i), A(i, j) * x(j));
}
