#pragma once
/// @file dist/einsum_leaf.hpp
/// A binary contraction as matrix products (no MPI here): the local leaf of
/// the distributed einsum, as Deinsum runs its steps (transpose, then
/// BLAS). `contract_pair` (einsum.hpp) is its reference.
///
///     auto c = contract_gemm(a, b, out, extent, gemm);   // gemm(m, k, n, A, B, C): C += A B, row-major
///
/// The indices of a and b fall into five classes: batch (in a, b and the
/// output: a KRP's), m (a and the output), n (b and the output), k (a and b,
/// not the output: contracted), and summed in one operand only. The
/// operand's own summed indices are summed out first (one pass over it);
/// then a is laid out as [batch, m, k] and b as [batch, k, n] (row-major
/// copies: one pass each), `gemm` runs once per batch entry into
/// [batch, m, n], and that is laid out in the output's order. The copies
/// are skipped where an operand already has its layout. With no
/// contracted index (a KRP, an outer product) it is `contract_pair`'s loop
/// (3x faster on MTTKRP's KRP than 32 outer products and a permute). Where
/// m or n is empty the product is a matrix-vector or dot product and
/// `gemm` gets extents of 1.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "einsum.hpp"

namespace tensorlev::dist {

/// t with its dimensions in the order `order` (index numbers, a
/// permutation of t.idx): a row-major copy, or t itself when the order is
/// already t's.
template <class V>
dense_operand<V> permute_operand(const dense_operand<V>& t, const std::vector<int>& order) {
  if (t.idx.size() != t.ext.size() || static_cast<long long>(t.data.size()) != t.size())
    throw shape_error("permute_operand: t's indices, extents and values disagree");
  if (order == t.idx) return t;
  if (order.size() != t.idx.size()) throw shape_error("permute_operand: the order must list each of t's indices once");
  for (std::size_t q = 0; q < order.size(); ++q)
    if (std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(q), order[q]) != order.begin() + static_cast<std::ptrdiff_t>(q))
      throw shape_error("permute_operand: the order lists an index twice");
  const auto src = detail::einsum_strides(t);
  dense_operand<V> r;
  r.idx = order;
  for (const int v : order) {
    const auto it = std::find(t.idx.begin(), t.idx.end(), v);
    if (it == t.idx.end()) throw shape_error("permute_operand: the order names an index t does not have");
    r.ext.push_back(t.ext[static_cast<std::size_t>(it - t.idx.begin())]);
  }
  r.data.resize(static_cast<std::size_t>(r.size()));
  if (r.data.empty()) return r;
  // Odometer over r's dimensions, the last fastest; the innermost one as a
  // strided run.
  const std::size_t n = order.size();  // at least 1: a 0-dimensional t has its own order
  std::vector<long long> x(n, 0), stride(n);
  for (std::size_t d = 0; d < n; ++d) stride[d] = src[static_cast<std::size_t>(order[d])];
  const long long inner = r.ext[n - 1], inner_stride = stride[n - 1];
  long long from = 0;
  for (long long at = 0; at < r.size(); at += inner) {
    for (long long q = 0; q < inner; ++q) r.data[static_cast<std::size_t>(at + q)] = t.data[static_cast<std::size_t>(from + q * inner_stride)];
    for (std::size_t d = n - 1; d-- > 0;) {
      if (++x[d] < r.ext[d]) {
        from += stride[d];
        break;
      }
      from -= stride[d] * (r.ext[d] - 1);
      x[d] = 0;
    }
  }
  return r;
}

namespace detail {
// C (m x n) += A (m x k) B (k x n), row-major: the leaf when no BLAS is given.
template <class V>
void gemm_loops(long long m, long long k, long long n, const V* a, const V* b, V* c) {
  for (long long i = 0; i < m; ++i)
    for (long long p = 0; p < k; ++p) {
      const V x = a[i * k + p];
      for (long long j = 0; j < n; ++j) c[i * n + j] += x * b[p * n + j];
    }
}
}  // namespace detail

/// The contraction of a and b into `out` (see the file's comment), with
/// `gemm(m, k, n, A, B, C)` for C += A B (row-major); the default is a
/// plain loop.
template <class V, class Gemm>
dense_operand<V> contract_gemm(const dense_operand<V>& a, const dense_operand<V>& b, const std::vector<int>& out,
                               std::span<const long long> extent, Gemm&& gemm) {
  detail::check_operand(a, extent, "contract_gemm: operand a");
  detail::check_operand(b, extent, "contract_gemm: operand b");
  std::uint32_t ma = 0, mb = 0, mo = 0;
  for (const int v : a.idx) ma |= std::uint32_t{1} << v;
  for (const int v : b.idx) mb |= std::uint32_t{1} << v;
  for (const int v : out) {
    if (v < 0 || v >= static_cast<int>(max_einsum_indices) || (((ma | mb) >> v) & 1U) == 0)
      throw shape_error("contract_gemm: an output index neither operand has");
    mo |= std::uint32_t{1} << v;
  }
  auto list = [](std::uint32_t m) {
    std::vector<int> v;
    for (std::size_t q = 0; q < max_einsum_indices; ++q)
      if ((m >> q) & 1U) v.push_back(static_cast<int>(q));
    return v;
  };
  auto cat = [](std::vector<int> x, const std::vector<int>& y) {
    x.insert(x.end(), y.begin(), y.end());
    return x;
  };
  const std::vector<int> batch = list(ma & mb & mo), mi = list(ma & ~mb & mo), ni = list(mb & ~ma & mo),
                         ki = list(ma & mb & ~mo);
  // Nothing contracted: an outer product per batch entry (a KRP), one
  // multiply per output entry; the loop in the output's index order beats
  // outer products through gemm and the permute of their result.
  if (ki.empty()) return contract_pair(a, b, out, extent);
  // Each operand in its layout: itself where it already is, else with its
  // own summed indices summed out and its dimensions reordered
  // (contract_pair with a scalar one), else reordered.
  const dense_operand<V> one{{}, {}, {V{1}}};
  auto laid_out = [&](const dense_operand<V>& t, const std::vector<int>& layout, dense_operand<V>& copy,
                      const char* what) -> const dense_operand<V>& {
    detail::check_operand(t, extent, what);
    if (t.idx == layout) return t;
    copy = layout.size() < t.idx.size() ? contract_pair(t, one, layout, extent) : permute_operand(t, layout);
    return copy;
  };
  dense_operand<V> ca, cb;
  const dense_operand<V>& A = laid_out(a, cat(cat(batch, mi), ki), ca, "contract_gemm: operand a");
  const dense_operand<V>& B = laid_out(b, cat(cat(batch, ki), ni), cb, "contract_gemm: operand b");
  auto prod = [&](const std::vector<int>& v) {
    long long p = 1;
    for (const int q : v) p *= extent[static_cast<std::size_t>(q)];
    return p;
  };
  const long long nb = prod(batch), m = prod(mi), n = prod(ni), k = prod(ki);
  dense_operand<V> C;
  C.idx = cat(cat(batch, mi), ni);
  for (const int v : C.idx) C.ext.push_back(extent[static_cast<std::size_t>(v)]);
  C.data.assign(static_cast<std::size_t>(C.size()), V{});
  if (k > 0)
    for (long long t = 0; t < nb && m > 0 && n > 0; ++t)
      gemm(m, k, n, A.data.data() + t * m * k, B.data.data() + t * k * n, C.data.data() + t * m * n);
  if (C.idx == out) return C;
  return permute_operand(C, out);
}

template <class V>
dense_operand<V> contract_gemm(const dense_operand<V>& a, const dense_operand<V>& b, const std::vector<int>& out,
                               std::span<const long long> extent) {
  return contract_gemm(a, b, out, extent, [](long long m, long long k, long long n, const V* x, const V* y, V* z) {
    detail::gemm_loops(m, k, n, x, y, z);
  });
}

/// A sparse operand: its nonzeros' coordinates (row-major, one row of
/// idx.size() per nonzero, 0-based within ext) and values. The local block
/// of a sparse einsum input.
template <class V>
struct sparse_operand {
  std::vector<int> idx;
  std::vector<long long> ext;
  std::vector<long long> coords;
  std::vector<V> vals;
  [[nodiscard]] std::size_t nnz() const noexcept { return vals.size(); }
};

/// The contraction of sparse a with dense b into `out` (indices from a or
/// b; extents `extent[v]`): for each nonzero of a, a strided loop over b's
/// indices a lacks, adding value times b's entry into out's; a's indices
/// outside the output are summed by the nonzeros themselves, b's own
/// (neither a's nor the output's) once beforehand. O(nnz x the product of
/// the extents of b's indices a lacks that the output keeps): SpMV, SpMM, TTM,
/// TTV and MTTKRP's TDOT are all this shape.
template <class V>
dense_operand<V> contract_sparse(const sparse_operand<V>& a, const dense_operand<V>& b_in, const std::vector<int>& out,
                                 std::span<const long long> extent) {
  const std::size_t n = a.idx.size();
  if (a.ext.size() != n || a.coords.size() != a.vals.size() * n)
    throw shape_error("contract_sparse: operand a's indices, extents, coordinates and values disagree");
  for (std::size_t d = 0; d < n; ++d)
    if (a.idx[d] < 0 || static_cast<std::size_t>(a.idx[d]) >= extent.size() ||
        a.ext[d] != extent[static_cast<std::size_t>(a.idx[d])])
      throw shape_error("contract_sparse: operand a's dimension " + std::to_string(d) + " does not have its index's extent");
  detail::check_operand(b_in, extent, "contract_sparse: operand b");
  for (std::size_t e = 0; e < a.nnz(); ++e)
    for (std::size_t d = 0; d < n; ++d)
      if (a.coords[e * n + d] < 0 || a.coords[e * n + d] >= a.ext[d])
        throw shape_error("contract_sparse: nonzero " + std::to_string(e) + "'s coordinate " + std::to_string(d) +
                          " is outside its extent");
  std::uint32_t ma = 0, mb = 0, mo = 0;
  for (const int v : a.idx) ma |= std::uint32_t{1} << v;
  for (const int v : b_in.idx) mb |= std::uint32_t{1} << v;
  dense_operand<V> c = detail::zero_output<V>(ma | mb, out, extent, "contract_sparse");
  for (const int v : out) mo |= std::uint32_t{1} << v;
  // b's own summed indices (in b only, not the output) summed out once,
  // not once per nonzero.
  dense_operand<V> summed_b;
  if ((mb & ~ma & ~mo) != 0) {
    std::vector<int> keep;
    for (const int v : b_in.idx)
      if (((ma | mo) >> v) & 1U) keep.push_back(v);
    summed_b = contract_pair(b_in, dense_operand<V>{{}, {}, {V{1}}}, keep, extent);
  }
  const dense_operand<V>& b = (mb & ~ma & ~mo) != 0 ? summed_b : b_in;
  const auto sb = detail::einsum_strides(b), sc = detail::einsum_strides(c);
  std::vector<int> free;  // b's indices a lacks: the inner loop
  for (const int v : b.idx)
    if (((ma >> v) & 1U) == 0) free.push_back(v);
  long long inner = 1;
  for (const int v : free) inner *= extent[static_cast<std::size_t>(v)];
  if (inner == 0 || c.data.empty()) return c;
  std::vector<long long> x(free.size());
  for (std::size_t e = 0; e < a.nnz(); ++e) {
    long long ob = 0, oc = 0;
    for (std::size_t d = 0; d < n; ++d) {
      const long long q = a.coords[e * n + d];
      ob += q * sb[static_cast<std::size_t>(a.idx[d])];
      oc += q * sc[static_cast<std::size_t>(a.idx[d])];
    }
    const V val = a.vals[e];
    std::fill(x.begin(), x.end(), 0);
    for (long long t = 0; t < inner; ++t) {
      c.data[static_cast<std::size_t>(oc)] += val * b.data[static_cast<std::size_t>(ob)];
      for (std::size_t q = free.size(); q-- > 0;) {  // odometer, the last index fastest
        const auto v = static_cast<std::size_t>(free[q]);
        if (++x[q] < extent[v]) {
          ob += sb[v], oc += sc[v];
          break;
        }
        ob -= sb[v] * (extent[v] - 1), oc -= sc[v] * (extent[v] - 1);
        x[q] = 0;
      }
    }
  }
  return c;
}

/// a as a dense operand (duplicates added).
template <class V>
dense_operand<V> densify(const sparse_operand<V>& a) {
  dense_operand<V> t{a.idx, a.ext, {}};
  t.data.assign(static_cast<std::size_t>(t.size()), V{});
  const std::size_t n = a.idx.size();
  for (std::size_t e = 0; e < a.nnz(); ++e) {
    long long at = 0;
    for (std::size_t d = 0; d < n; ++d) {
      const long long q = a.coords[e * n + d];
      if (q < 0 || q >= a.ext[d]) throw shape_error("densify: a coordinate is outside its extent");
      at = at * a.ext[d] + q;
    }
    t.data[static_cast<std::size_t>(at)] += a.vals[e];
  }
  return t;
}

}  // namespace tensorlev::dist
