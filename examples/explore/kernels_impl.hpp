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
                                       tl::csb<csb_block>, hash_rows, tl::dense_row_major>;
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

template <kernel_id K, class V, std::size_t FI>
format_result run_format(const problem<V>& p, const reference<V>& ref, const run_options& opt, result_tensor<V>* out) {
  using namespace tl::indices;
  constexpr kernel_info info = kernels[static_cast<int>(K)];
  constexpr bool matrix = info.order == 2;
  using F = std::tuple_element_t<FI, std::conditional_t<matrix, matrix_format_types, tensor_format_types>>;
  static_assert(unsupported_reason(K, FI) == nullptr, "tl-explore: this (kernel, format) pair is not supported");

  format_result r;
  r.format = std::string(format_name(info.order, FI));
  const auto& d = p.A.dims();

  // Conversion from the COO list: median of the packs (add: A and A^T);
  // the first one builds the operand.
  detail::phase(opt, "packing");
  detail::timings pack_t(opt), run_t(opt);
  auto A = pack_t([&] { return tl::pack<F>(p.A); });
  r.convert_ms = detail::time_reps(pack_t, [&] { A = tl::pack<F>(p.A); });
  r.packs = pack_t.runs();
  if constexpr (K == kernel_id::add) {
    detail::timings pack_at(opt);
    auto At = pack_at([&] { return tl::pack<F>(p.At); });
    r.convert_ms += detail::time_reps(pack_at, [&] { At = tl::pack<F>(p.At); });
    auto C = tl::pack<tl::csr>(coo_list<V>(std::vector<index_t>{d[0], d[1]}));
    detail::phase(opt, "running the kernel");
    r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, C(i, j), A(i, j) + At(i, j)); });
    r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(C));
    detail::capture_sparse(out, C);
  } else {
    detail::phase(opt, "running the kernel");
    if constexpr (K == kernel_id::spmv) {
      tl::tensor<V, tl::dense_vector, index_t> x(std::array<index_t, 1>{d[1]});
      std::copy(p.operands[0].data.begin(), p.operands[0].data.end(), x.values().begin());
      tl::tensor<V, tl::dense_vector, index_t> y(std::array<index_t, 1>{d[0]});
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, y(i), A(i, j) * x(j)); });
      r.max_abs_err = dense_error(ref, y.values().data(), y.values().size());
      detail::capture_dense(out, y);
    } else if constexpr (K == kernel_id::spmm) {
      auto B = detail::dense_from<tl::dense_row_major>(p.operands[0]);
      tl::tensor<V, tl::dense_row_major, index_t> C(std::array<index_t, 2>{d[0], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, C(i, k), A(i, j) * B(j, k)); });
      r.max_abs_err = dense_error(ref, C.values().data(), C.values().size());
      detail::capture_dense(out, C);
    } else if constexpr (K == kernel_id::spgemm) {
      auto C = tl::pack<tl::csr>(coo_list<V>(std::vector<index_t>{d[0], d[1]}));
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, C(i, j), A(i, k) * A(k, j)); });
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(C));
      detail::capture_sparse(out, C);
    } else if constexpr (K == kernel_id::sddmm) {
      auto U = detail::dense_from<tl::dense_row_major>(p.operands[0]);
      auto W = detail::dense_from<tl::dense_row_major>(p.operands[1]);
      auto C = tl::pack<tl::csr>(coo_list<V>(std::vector<index_t>{d[0], d[1]}));
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, C(i, j), A(i, j) * U(i, k) * W(j, k)); });
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(C));
      detail::capture_sparse(out, C);
    } else if constexpr (K == kernel_id::ttv) {
      tl::tensor<V, tl::dense_vector, index_t> c(std::array<index_t, 1>{d[2]});
      std::copy(p.operands[0].data.begin(), p.operands[0].data.end(), c.values().begin());
      tl::tensor<V, tl::dense_row_major, index_t> Y(std::array<index_t, 2>{d[0], d[1]});
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, Y(i, j), A(i, j, k) * c(k)); });
      r.max_abs_err = dense_error(ref, Y.values().data(), Y.values().size());
      detail::capture_dense(out, Y);
    } else if constexpr (K == kernel_id::ttm) {
      auto M = detail::dense_from<tl::dense_row_major>(p.operands[0]);
      tl::tensor<V, tl::dense_tensor<3>, index_t> Y(std::array<index_t, 3>{d[0], d[1], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, Y(i, j, l), A(i, j, k) * M(k, l)); });
      r.max_abs_err = dense_error(ref, Y.values().data(), Y.values().size());
      detail::capture_dense(out, Y);
    } else if constexpr (K == kernel_id::mttkrp) {
      auto M = detail::dense_from<tl::dense_row_major>(p.operands[0]);
      auto N = detail::dense_from<tl::dense_row_major>(p.operands[1]);
      tl::tensor<V, tl::dense_row_major, index_t> Y(std::array<index_t, 2>{d[0], p.operands[0].cols});
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, Y(i, l), A(i, j, k) * M(j, l) * N(k, l)); });
      r.max_abs_err = dense_error(ref, Y.values().data(), Y.values().size());
      detail::capture_dense(out, Y);
    } else if constexpr (K == kernel_id::innerprod) {
      tl::scalar<V> a;
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, a(), A(i, j, k) * A(i, j, k)); });
      const V v = a.value();
      r.max_abs_err = dense_error(ref, &v, 1);
      if (out != nullptr) {
        out->present = true;
        out->dense = true;
        out->dims.clear();
        out->values.assign(1, v);
      }
    } else if constexpr (K == kernel_id::plus) {
      auto C = tl::pack<tl::coo_tensor<3>>(coo_list<V>(std::vector<index_t>{d[0], d[1], d[2]}));
      r.kernel_ms = detail::time_reps(run_t, [&] { tl::compute(opt.ex, C(i, j, k), A(i, j, k) + A(i, j, k)); });
      r.max_abs_err = sparse_error(ref, tl::to_coordinate_list(C));
      detail::capture_sparse(out, C);
    }
  }
  r.runs = run_t.runs();
  r.gflops = r.kernel_ms > 0 ? ref.flops / (r.kernel_ms * 1e6) : 0.0;
  return r;
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
