#pragma once
/// @file kernels_impl.hpp
/// The per-format runner: pack the COO input into one format, run the
/// generated kernel for that exact format, compare with the reference.
/// Included by the k_*.cpp files, each of which instantiates run_format for
/// one kernel and value type (one TU each keeps compile times short).

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <tensorlev/codegen.hpp>
#include <tensorlev/formats.hpp>

#include "explore.hpp"

namespace tlx {

namespace tl = tensorlev;

/// Rows stored in a hash table each: dense rows, hashed columns.
struct hash_rows : tl::format<tl::levels<tl::dense<>, tl::hashed<>>> {
  static constexpr std::string_view name = "hash rows";
};
inline constexpr std::size_t csb_block = 64;

using matrix_format_types = std::tuple<tl::csr, tl::csc, tl::coo, tl::coo_aos, tl::dcsr, tl::ell, tl::dia, tl::bcsr<4>,
                                       tl::csb<csb_block>, hash_rows, tl::dense_row_major, tl::csr_long_rows,
                                       tl::sell<8>, tl::grouped_rows<4>, tl::grouped_rows<8>,
                                       tl::sell_sigma<8, 256>, tl::blocked_dia<16>>;
using tensor_format_types = std::tuple<tl::coo_tensor<3>, tl::csf, tl::dense_tensor<3>>;
static_assert(std::tuple_size_v<matrix_format_types> == num_matrix_formats);
static_assert(std::tuple_size_v<tensor_format_types> == num_tensor_formats);

namespace detail {

using clock = std::chrono::steady_clock;

inline double ms_between(clock::time_point a, clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline double median(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  const std::size_t n = t.size();
  if (n == 0) return 0;
  return n % 2 == 1 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

/// The timed runs of one phase (packing, or the kernel): up to opt.reps,
/// fewer once they have taken opt.rep_seconds together (at least one).
class timings {
 public:
  explicit timings(const run_options& opt)
      : reps_(static_cast<std::size_t>(opt.reps)), limit_ms_(opt.rep_seconds * 1e3) {}
  [[nodiscard]] bool more() const { return ms_.size() < reps_ && (ms_.empty() || total_ms_ < limit_ms_); }
  /// Runs fn once, timed; returns what it returns.
  template <class Fn>
  auto operator()(Fn&& fn) {
    const auto a = clock::now();
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&>>) {
      fn();
      add(a);
    } else {
      auto v = fn();
      add(a);
      return v;
    }
  }
  [[nodiscard]] double median_ms() const { return median(ms_); }
  [[nodiscard]] int runs() const { return static_cast<int>(ms_.size()); }

 private:
  void add(clock::time_point a) {
    ms_.push_back(ms_between(a, clock::now()));
    total_ms_ += ms_.back();
  }
  std::size_t reps_;
  double limit_ms_;
  std::vector<double> ms_;
  double total_ms_ = 0;
};

/// Runs fn while t wants more runs; returns the median time in ms.
template <class Fn>
double time_reps(timings& t, Fn&& fn) {
  while (t.more()) t(fn);
  return t.median_ms();
}

inline void phase(const run_options& opt, const char* what) {
  if (opt.progress != nullptr) opt.progress(opt.progress_ctx, what);
}

/// A dense tensor of format F holding a row-major operand.
template <class F, class V>
tl::tensor<V, F, index_t> dense_from(const dense_operand<V>& d) {
  tl::tensor<V, F, index_t> t(std::array<index_t, F::order>{d.rows, d.cols});
  auto vals = t.values();
  std::copy(d.data.begin(), d.data.end(), vals.begin());
  return t;
}

template <class V, class T>
void capture_dense(result_tensor<V>* out, const T& t) {
  if (out == nullptr) return;
  out->present = true;
  out->dense = true;
  out->dims.assign(t.dims().begin(), t.dims().end());
  out->values.assign(t.values().begin(), t.values().end());
}

template <class V, class T>
void capture_sparse(result_tensor<V>* out, const T& t) {
  if (out == nullptr) return;
  out->present = true;
  out->dense = false;
  out->dims.assign(t.dims().begin(), t.dims().end());
  out->entries = tl::to_coordinate_list(t);
}

}  // namespace detail

/// Where run_format runs the kernels: the host (opt.ex, the serial or
/// Kokkos host executor); tensors stay where they are. device_exec.hpp has
/// the other environment (--device): tensors copied into the memory of a
/// Kokkos execution space and the statements run in their device form.
struct host_env {
  static constexpr bool device_form = false;
  explicit host_env(const run_options& opt) : ex(opt.ex) {}
  /// A tensor where the kernels read it (here: t itself, moved).
  template <class T>
  T put(T&& t) const {
    return std::forward<T>(t);
  }
  /// A result where the host reads it (here: t itself).
  template <class T>
  const T& back(const T& t) const {
    return t;
  }
  template <class Out, class E>
  void compute(const Out& out, const E& e) const {
    tl::compute(ex, out, e);
  }
  tl::executor ex;
};

/// Packs p.A (and p.At) into format FI, puts the operands where Env runs,
/// runs kernel K there, compares the result with the reference.
template <kernel_id K, class V, std::size_t FI, class Env>
format_result run_format_in(const problem<V>& p, const reference<V>& ref, const run_options& opt,
                            result_tensor<V>* out) {
  using namespace tl::indices;
  constexpr kernel_info info = kernels[static_cast<int>(K)];
  constexpr bool matrix = info.order == 2;
  using F = std::tuple_element_t<FI, std::conditional_t<matrix, matrix_format_types, tensor_format_types>>;
  static_assert(unsupported_reason(K, FI) == nullptr, "tl-explore: this (kernel, format) pair is not supported");
  const Env env(opt);

  format_result r;
  r.format = std::string(format_name(info.order, FI));
  r.device_form = Env::device_form;
  const auto& d = p.A.dims();
  // An empty sparse result of format G, where the kernels run.
  auto empty = [&]<class G>(std::type_identity<G>, std::vector<index_t> dims) {
    return env.put(tl::pack<G>(coo_list<V>(std::move(dims))));
  };
  // A dense tensor of format G holding operand o, where the kernels run.
  auto dense = [&]<class G>(std::type_identity<G>, const dense_operand<V>& o) {
    return env.put(detail::dense_from<G>(o));
  };
  auto vec = [&](const dense_operand<V>& o) {
    tl::tensor<V, tl::dense_vector, index_t> x(std::array<index_t, 1>{o.rows});
    std::copy(o.data.begin(), o.data.end(), x.values().begin());
    return env.put(std::move(x));
  };
  auto zeros = [&]<class G>(std::type_identity<G>, std::array<index_t, G::order> dims) {
    return env.put(tl::tensor<V, G, index_t>(dims));
  };

  // Conversion from the COO list (and, in the device form, the copy to the
  // space's memory): median of the packs (add: A and A^T); the first one
  // builds the operand.
  detail::phase(opt, "packing");
  detail::timings pack_t(opt), run_t(opt);
  auto A = pack_t([&] { return env.put(tl::pack<F>(p.A)); });
  r.convert_ms = detail::time_reps(pack_t, [&] { A = env.put(tl::pack<F>(p.A)); });
  r.packs = pack_t.runs();
  if constexpr (K == kernel_id::add) {
    detail::timings pack_at(opt);
    auto At = pack_at([&] { return env.put(tl::pack<F>(p.At)); });
    r.convert_ms += detail::time_reps(pack_at, [&] { At = env.put(tl::pack<F>(p.At)); });
    auto C = empty(std::type_identity<tl::csr>{}, {d[0], d[1]});
    detail::phase(opt, "running the kernel");
    r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(C(i, j), A(i, j) + At(i, j)); });
    decltype(auto) Ch = env.back(C);
    r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(Ch));
    detail::capture_sparse(out, Ch);
  } else {
    detail::phase(opt, "running the kernel");
    if constexpr (K == kernel_id::spmv) {
      auto x = vec(p.operands[0]);
      auto y = zeros(std::type_identity<tl::dense_vector>{}, {d[0]});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(y(i), A(i, j) * x(j)); });
      decltype(auto) yh = env.back(y);
      r.max_abs_err = dense_error(ref, yh.values().data(), yh.values().size());
      detail::capture_dense(out, yh);
    } else if constexpr (K == kernel_id::spmm) {
      auto B = dense(std::type_identity<tl::dense_row_major>{}, p.operands[0]);
      auto C = zeros(std::type_identity<tl::dense_row_major>{}, {d[0], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(C(i, k), A(i, j) * B(j, k)); });
      decltype(auto) Ch = env.back(C);
      r.max_abs_err = dense_error(ref, Ch.values().data(), Ch.values().size());
      detail::capture_dense(out, Ch);
    } else if constexpr (K == kernel_id::spgemm) {
      auto C = empty(std::type_identity<tl::csr>{}, {d[0], d[1]});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(C(i, j), A(i, k) * A(k, j)); });
      decltype(auto) Ch = env.back(C);
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(Ch));
      detail::capture_sparse(out, Ch);
    } else if constexpr (K == kernel_id::sddmm) {
      auto U = dense(std::type_identity<tl::dense_row_major>{}, p.operands[0]);
      auto W = dense(std::type_identity<tl::dense_row_major>{}, p.operands[1]);
      auto C = empty(std::type_identity<tl::csr>{}, {d[0], d[1]});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(C(i, j), A(i, j) * U(i, k) * W(j, k)); });
      decltype(auto) Ch = env.back(C);
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(Ch));
      detail::capture_sparse(out, Ch);
    } else if constexpr (K == kernel_id::ttv) {
      auto c = vec(p.operands[0]);
      auto Y = zeros(std::type_identity<tl::dense_row_major>{}, {d[0], d[1]});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(Y(i, j), A(i, j, k) * c(k)); });
      decltype(auto) Yh = env.back(Y);
      r.max_abs_err = dense_error(ref, Yh.values().data(), Yh.values().size());
      detail::capture_dense(out, Yh);
    } else if constexpr (K == kernel_id::ttm) {
      auto M = dense(std::type_identity<tl::dense_row_major>{}, p.operands[0]);
      auto Y = zeros(std::type_identity<tl::dense_tensor<3>>{}, {d[0], d[1], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(Y(i, j, l), A(i, j, k) * M(k, l)); });
      decltype(auto) Yh = env.back(Y);
      r.max_abs_err = dense_error(ref, Yh.values().data(), Yh.values().size());
      detail::capture_dense(out, Yh);
    } else if constexpr (K == kernel_id::mttkrp) {
      auto M = dense(std::type_identity<tl::dense_row_major>{}, p.operands[0]);
      auto N = dense(std::type_identity<tl::dense_row_major>{}, p.operands[1]);
      auto Y = zeros(std::type_identity<tl::dense_row_major>{}, {d[0], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(Y(i, l), A(i, j, k) * M(j, l) * N(k, l)); });
      decltype(auto) Yh = env.back(Y);
      r.max_abs_err = dense_error(ref, Yh.values().data(), Yh.values().size());
      detail::capture_dense(out, Yh);
    } else if constexpr (K == kernel_id::innerprod) {
      tl::scalar<V> a;
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(a(), A(i, j, k) * A(i, j, k)); });
      const V v = a.value();
      r.max_abs_err = dense_error(ref, &v, 1);
      if (out != nullptr) {
        out->present = true;
        out->dense = true;
        out->dims.clear();
        out->values.assign(1, v);
      }
    } else if constexpr (K == kernel_id::plus) {
      auto C = empty(std::type_identity<tl::coo_tensor<3>>{}, {d[0], d[1], d[2]});
      r.kernel_ms = detail::time_reps(run_t, [&] { env.compute(C(i, j, k), A(i, j, k) + A(i, j, k)); });
      decltype(auto) Ch = env.back(C);
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(Ch));
      detail::capture_sparse(out, Ch);
    }
  }
  r.runs = run_t.runs();
  r.gflops = r.kernel_ms > 0 ? ref.flops / (r.kernel_ms * 1e6) : 0.0;
  return r;
}

template <kernel_id K, class V, std::size_t FI>
format_result run_format(const problem<V>& p, const reference<V>& ref, const run_options& opt, result_tensor<V>* out) {
  return run_format_in<K, V, FI, host_env>(p, ref, opt, out);
}

/// The table of runners of kernel K for value type V, one per format of
/// the kernel's order (nullptr where unsupported); instantiates exactly the
/// supported (kernel, format) pairs.
template <kernel_id K, class V, std::size_t F>
constexpr runner<V> runner_for() {
  if constexpr (unsupported_reason(K, F) == nullptr)
    return &run_format<K, V, F>;
  else
    return nullptr;
}
template <kernel_id K, class V, std::size_t... F>
constexpr std::array<runner<V>, sizeof...(F)> make_table(std::index_sequence<F...>) {
  return {runner_for<K, V, F>()...};
}

}  // namespace tlx

/// In a k_*.cpp file: defines tlx::table_<K>(V tag), the runners of kernel K
/// for value type V.
#define TLX_DEFINE_TABLE(K, V)                                                                          \
  namespace tlx {                                                                                      \
  std::span<const runner<V>> table_##K(const V*) {                                                     \
    static constexpr std::size_t nf =                                                                  \
        kernels[static_cast<int>(kernel_id::K)].order == 2 ? num_matrix_formats : num_tensor_formats;  \
    static constexpr auto t = make_table<kernel_id::K, V>(std::make_index_sequence<nf>{});             \
    return t;                                                                                          \
  }                                                                                                    \
  }
