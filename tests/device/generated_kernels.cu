// Compile-only check (no GPU on the build machines): statements in their
// device form (kernel::run_device) through a launcher written here on the
// CUDA runtime API, without Kokkos (compiled by hipcc, the same launcher
// on HIP's runtime API, whose calls are named hip* for cuda*): operands in
// device memory as views over borrowed arrays, the operands' views and the
// expression uploaded with one memcpy, the loop nest launched as one
// __global__ over the chunks of its outer loop (one row per thread),
// scalar partials summed on the host. Every output strategy of the device
// form: rows, scatter (atomicAdd), scalar, split terms, `+=`.
// tests/codegen/device_form.cpp runs the same device form on the host.
#if defined(__HIP__)
#include <hip/hip_runtime.h>
#define GPU(name) hip##name
#else
#include <cuda_runtime.h>
#define GPU(name) cuda##name
#endif

#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/view.hpp"

namespace tl = tensorlev;

// Borrowed arrays in device memory.
struct device_memory : tl::borrowed<> {
  static constexpr bool host_accessible = false;
  using borrowed_type = tl::borrowed<>;
};

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

inline void check(GPU(Error_t) e, const char* what) {
  if (e != GPU(Success)) throw std::runtime_error(std::string(what) + ": " + GPU(GetErrorString)(e));
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

 private:
  mutable std::vector<void*> kept_;
};
static_assert(tl::device_launcher<gpu_launcher>);

template <class F>
using in = tl::tensor<const double, F, int, device_memory>;
template <class F>
using out = tl::tensor<double, F, int, device_memory>;

// Every statement of the device form over operands in device memory
// (instantiated here; never run: no GPU).
void run_all(const in<tl::csr>& A, const in<tl::coo>& Acoo, const in<tl::dcsr>& Adcsr, const in<tl::csc>& Acsc,
             const in<tl::ell>& Aell, const in<tl::csf>& B, const in<tl::dense_row_major>& C,
             const in<tl::dense_row_major>& D, const in<tl::dense_vector>& x, const in<tl::dense_vector>& z,
             out<tl::dense_vector>& y, out<tl::dense_row_major>& M) {
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
  tl::scalar<double> s;
  tl::cg::run_device_form<false>(dev, s(), z(i) * A(i, j) * x(j));  // a scalar: partial sums
}
