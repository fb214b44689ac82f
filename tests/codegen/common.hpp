#pragma once
// Support for the code generator's tests: random tensors in any format with
// their dense row-major references, and iteration over format lists.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "../support/format_lists.hpp"
#include "../support/reference.hpp"
#include "tensorlev/execution.hpp"
#include "tensorlev/tensorlev.hpp"

namespace tltest {

/// A packed tensor and its dense row-major expansion.
template <class F, class V = double, class I = int>
struct operand {
  tensor<V, F, I> t;
  std::vector<V> d;
};

/// Random operand of format F with about `fill` (0..1) of its components
/// nonzero, duplicates included in the input list.
template <class F, class V = double, class I = int, std::size_t N = F::order>
operand<F, V, I> random_operand(const std::array<I, N>& dims, double fill, std::mt19937_64& rng) {
  const std::size_t total = dense_size(dims);
  const auto nnz = static_cast<std::size_t>(std::llround(fill * static_cast<double>(total)));
  auto c = make_case<V, I, N>(dims, nnz, nnz / 3, rng);
  return {pack<F>(c.list), std::move(c.dense)};
}

/// Calls f(type_identity<F>{}) for every F in the tuple.
template <class Tuple, class Fn>
void for_each_format(Fn&& f) {
  std::apply([&](auto... x) { (f(std::type_identity<decltype(x)>{}), ...); }, Tuple{});
}

/// Matrix formats whose levels all encode one logical dimension each.
using mode_matrix_formats =
    std::tuple<dense_row_major, dense_col_major, coo, coo_aos, csr, csc, dcsr, hash_rows, hashed_csr>;
/// Matrix formats with derived level maps (private loop variables).
using derived_matrix_formats =
    std::tuple<ell, sell<3>, sell_sigma<3, 6>, dia, blocked_dia<3>, bcsr<2>, bcsr<3>, grouped_rows<3>, csb<2>>;
using mode_order3_formats = std::tuple<dense_tensor<3>, dense_tensor_col_major<3>, coo_tensor<3>, coo_aos_tensor<3>,
                                       csf, mode_generic, dense_sparse_sparse, dense_dense_hashed>;

/// Whether format F stores its first level along dimension 1 (column-major).
template <class F>
constexpr bool column_major = F::maps[0].dim == 1;
/// Whether every level of F is dense (random access: no order constraint).
template <class F>
constexpr bool all_dense = std::is_same_v<F, dense_row_major> || std::is_same_v<F, dense_col_major>;
/// Whether an element-wise statement over FA and FB has a concordant order.
template <class FA, class FB>
constexpr bool concordant_pair = column_major<FA> == column_major<FB> || all_dense<FA> || all_dense<FB>;

/// Compares values with a dense reference (values are small integers, so
/// every sum is exact in double).
template <class V>
std::size_t count_mismatches(std::span<const V> got, const std::vector<V>& ref, const std::string& what) {
  if (got.size() != ref.size()) {
    ADD_FAILURE() << what << ": size " << got.size() << " vs " << ref.size();
    return 1;
  }
  std::size_t bad = 0;
  for (std::size_t x = 0; x < ref.size(); ++x)
    if (got[x] != ref[x]) {
      if (bad < 3) ADD_FAILURE() << what << ": component " << x << " is " << got[x] << ", expected " << ref[x];
      ++bad;
    }
  return bad;
}

/// Mode-0 MTTKRP over dense row-major references: A(i, r) = sum over k, l
/// of B(i, k, l) * C(k, r) * D(l, r), with B of extents dims and rank R.
inline std::vector<double> mttkrp_reference(const std::array<int, 3>& dims, int R, const std::vector<double>& B,
                                            const std::vector<double>& C, const std::vector<double>& D) {
  std::vector<double> A(static_cast<std::size_t>(dims[0] * R), 0.0);
  for (int a = 0; a < dims[0]; ++a)
    for (int b = 0; b < dims[1]; ++b)
      for (int c = 0; c < dims[2]; ++c)
        for (int x = 0; x < R; ++x)
          A[static_cast<std::size_t>(a * R + x)] += B[static_cast<std::size_t>((a * dims[1] + b) * dims[2] + c)] *
                                                    C[static_cast<std::size_t>(b * R + x)] *
                                                    D[static_cast<std::size_t>(c * R + x)];
  return A;
}

/// Which components a tensor stores (its structure, explicit zeros included).
template <class V, class F, class I>
std::vector<char> stored_pattern(const tensor<V, F, I>& t) {
  std::vector<char> p(dense_size(t.dims()), 0);
  for_each_component(t, [&](const auto& x, const V&) { p[linear(t.dims(), std::span<const I>(x))] = 1; });
  return p;
}

template <class F>
std::string fname() {
  return std::string(F::name);
}

/// `out = e` (or `+=` when add) serially (chunks 0), or on an executor that
/// runs loop 0 in that many chunks without threads.
template <class Out, class E>
void run_in_chunks(std::size_t chunks, bool add, const Out& out, const E& e) {
  if (chunks == 0) {
    if (add)
      compute_add(out, e, tensorlev::loop_order<>{});
    else
      compute(out, e, tensorlev::loop_order<>{});
  } else {
    const tensorlev::executor ex{tensorlev::chunked_serial_executor(chunks)};
    if (add)
      compute_add(ex, out, e);
    else
      compute(ex, out, e);
  }
}

}  // namespace tltest
