// tl-explore: reference results computed by plain loops over the COO
// coordinate list, written by hand and independent of tensorlev's generated
// kernels and formats. Also the comparison of a result with the reference.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "explore.hpp"

namespace tlx {

namespace {

template <class V>
double magnitude(const V& v) {
  return static_cast<double>(std::abs(v));
}

template <class V>
void finish_dense(reference<V>& ref) {
  for (const V& v : ref.dense) ref.max_abs = std::max(ref.max_abs, magnitude(v));
}
template <class V>
void finish_sparse(reference<V>& ref) {
  for (const auto& e : ref.entries) ref.max_abs = std::max(ref.max_abs, magnitude(e.second));
}

inline std::size_t uz(index_t v) { return static_cast<std::size_t>(v); }

}  // namespace

template <class V>
reference<V> compute_reference(kernel_id k, const problem<V>& p) {
  reference<V> ref;
  const coo_list<V>& A = p.A;
  const std::size_t n = A.size();
  const auto& dims = A.dims();
  auto dense_result = [&](std::vector<std::uint64_t> d) {
    std::size_t size = 1;
    for (auto x : d) size *= static_cast<std::size_t>(x);
    ref.dims = std::move(d);
    ref.dense.assign(size, V{});
  };
  switch (k) {
    case kernel_id::spmv: {  // y(i) += A(i,j) x(j)
      const auto& x = p.operands[0].data;
      dense_result({uz(dims[0])});
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        ref.dense[uz(c[0])] += A.value(e) * x[uz(c[1])];
      }
      ref.flops = 2.0 * static_cast<double>(n);
      break;
    }
    case kernel_id::spmm: {  // C(i,k) += A(i,j) B(j,k)
      const auto& B = p.operands[0];
      const std::size_t nc = uz(B.cols);
      dense_result({uz(dims[0]), nc});
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        const V a = A.value(e);
        V* row = ref.dense.data() + uz(c[0]) * nc;
        const V* brow = B.data.data() + uz(c[1]) * nc;
        for (std::size_t q = 0; q < nc; ++q) row[q] += a * brow[q];
      }
      ref.flops = 2.0 * static_cast<double>(n) * static_cast<double>(nc);
      break;
    }
    case kernel_id::add: {  // C(i,j) = A(i,j) + A(j,i)
      ref.sparse = true;
      ref.dims = {uz(dims[0]), uz(dims[1])};
      const std::uint64_t nc = uz(dims[1]);
      ref.entries.reserve(2 * n);
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        ref.entries[uz(c[0]) * nc + uz(c[1])] += A.value(e);
        ref.entries[uz(c[1]) * nc + uz(c[0])] += A.value(e);
      }
      ref.flops = static_cast<double>(ref.entries.size());  // one addition per stored result entry (upper bound)
      break;
    }
    case kernel_id::spgemm: {  // C(i,j) += A(i,k) A(k,j)
      ref.sparse = true;
      ref.dims = {uz(dims[0]), uz(dims[1])};
      const std::uint64_t nc = uz(dims[1]);
      // Row lists of A by a counting pass (entries grouped by row).
      std::vector<std::size_t> start(uz(dims[0]) + 1, 0);
      for (std::size_t e = 0; e < n; ++e) ++start[uz(A.coords(e)[0]) + 1];
      for (std::size_t r = 0; r < uz(dims[0]); ++r) start[r + 1] += start[r];
      std::vector<std::size_t> fill(start.begin(), start.end() - 1), by_row(n);
      for (std::size_t e = 0; e < n; ++e) by_row[fill[uz(A.coords(e)[0])]++] = e;
      double madds = 0;
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        const V a = A.value(e);
        const std::size_t r = uz(c[1]);
        for (std::size_t q = start[r]; q < start[r + 1]; ++q) {
          const std::size_t f = by_row[q];
          ref.entries[uz(c[0]) * nc + uz(A.coords(f)[1])] += a * A.value(f);
        }
        madds += static_cast<double>(start[r + 1] - start[r]);
      }
      ref.flops = 2.0 * madds;
      break;
    }
    case kernel_id::sddmm: {  // C(i,j) = A(i,j) * sum_k U(i,k) V(j,k)
      ref.sparse = true;
      ref.dims = {uz(dims[0]), uz(dims[1])};
      const std::uint64_t nc = uz(dims[1]);
      const auto& U = p.operands[0];
      const auto& W = p.operands[1];
      const std::size_t R = uz(U.cols);
      ref.entries.reserve(n);
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        V dot{};
        for (std::size_t q = 0; q < R; ++q) dot += U.data[uz(c[0]) * R + q] * W.data[uz(c[1]) * R + q];
        ref.entries[uz(c[0]) * nc + uz(c[1])] += A.value(e) * dot;
      }
      ref.flops = static_cast<double>(n) * (2.0 * static_cast<double>(R) + 1.0);
      break;
    }
    case kernel_id::ttv: {  // Y(i,j) += B(i,j,k) c(k)
      const auto& cv = p.operands[0].data;
      dense_result({uz(dims[0]), uz(dims[1])});
      const std::size_t J = uz(dims[1]);
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        ref.dense[uz(c[0]) * J + uz(c[1])] += A.value(e) * cv[uz(c[2])];
      }
      ref.flops = 2.0 * static_cast<double>(n);
      break;
    }
    case kernel_id::ttm: {  // Y(i,j,l) += B(i,j,k) M(k,l)
      const auto& M = p.operands[0];
      const std::size_t L = uz(M.cols), J = uz(dims[1]);
      dense_result({uz(dims[0]), J, L});
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        const V a = A.value(e);
        V* out = ref.dense.data() + (uz(c[0]) * J + uz(c[1])) * L;
        const V* m = M.data.data() + uz(c[2]) * L;
        for (std::size_t q = 0; q < L; ++q) out[q] += a * m[q];
      }
      ref.flops = 2.0 * static_cast<double>(n) * static_cast<double>(L);
      break;
    }
    case kernel_id::mttkrp: {  // Y(i,l) += B(i,j,k) M(j,l) N(k,l)
      const auto& M = p.operands[0];
      const auto& N = p.operands[1];
      const std::size_t R = uz(M.cols);
      dense_result({uz(dims[0]), R});
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        const V a = A.value(e);
        V* out = ref.dense.data() + uz(c[0]) * R;
        const V* m = M.data.data() + uz(c[1]) * R;
        const V* q = N.data.data() + uz(c[2]) * R;
        for (std::size_t r = 0; r < R; ++r) out[r] += a * m[r] * q[r];
      }
      ref.flops = 3.0 * static_cast<double>(n) * static_cast<double>(R);
      break;
    }
    case kernel_id::innerprod: {  // a = sum B(i,j,k)^2 (duplicates combined first)
      std::unordered_map<std::uint64_t, V> combined;
      combined.reserve(n);
      const std::uint64_t J = uz(dims[1]), K = uz(dims[2]);
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        combined[(uz(c[0]) * J + uz(c[1])) * K + uz(c[2])] += A.value(e);
      }
      V sum{};
      for (const auto& kv : combined) sum += kv.second * kv.second;
      ref.dims = {};
      ref.dense.assign(1, sum);
      ref.flops = 2.0 * static_cast<double>(n);
      break;
    }
    case kernel_id::plus: {  // C(i,j,k) = 2 B(i,j,k)
      ref.sparse = true;
      ref.dims = {uz(dims[0]), uz(dims[1]), uz(dims[2])};
      const std::uint64_t J = uz(dims[1]), K = uz(dims[2]);
      ref.entries.reserve(n);
      for (std::size_t e = 0; e < n; ++e) {
        const auto c = A.coords(e);
        V& r = ref.entries[(uz(c[0]) * J + uz(c[1])) * K + uz(c[2])];
        r += A.value(e);
        r += A.value(e);
      }
      ref.flops = static_cast<double>(n);  // one addition per stored entry
      break;
    }
  }
  if (ref.sparse)
    finish_sparse(ref);
  else
    finish_dense(ref);
  return ref;
}

template <class V>
double dense_error(const reference<V>& ref, const V* got, std::size_t n) {
  if (ref.sparse || n != ref.dense.size()) return HUGE_VAL;
  double err = 0;
  for (std::size_t x = 0; x < n; ++x) {
    const double d = magnitude(got[x] - ref.dense[x]);
    if (std::isnan(d)) return d;
    err = std::max(err, d);
  }
  return err;
}

template <class V>
double sparse_error(const reference<V>& ref, const coo_list<V>& got) {
  if (!ref.sparse || got.order() != ref.dims.size()) return HUGE_VAL;
  for (std::size_t d = 0; d < ref.dims.size(); ++d)
    if (static_cast<std::uint64_t>(got.dims()[d]) != ref.dims[d]) return HUGE_VAL;
  auto linear = [&](std::size_t e) {
    const auto c = got.coords(e);
    std::uint64_t lin = 0;
    for (std::size_t d = 0; d < c.size(); ++d) lin = lin * ref.dims[d] + static_cast<std::uint64_t>(c[d]);
    return lin;
  };
  // Every result here comes out in row-major order without repeats: then
  // each entry is compared where it stands, without copying the reference
  // (a result may hold millions of explicit zeros: dense, DIA, ELL).
  {
    double err = 0;
    std::size_t matched = 0;
    bool ordered = true;
    for (std::size_t e = 0; e < got.size(); ++e) {
      const std::uint64_t lin = linear(e);
      if (e > 0 && lin <= linear(e - 1)) {
        ordered = false;
        break;
      }
      const auto it = ref.entries.find(lin);
      const double d = magnitude(got.value(e) - (it == ref.entries.end() ? V{} : it->second));
      if (std::isnan(d)) return d;
      err = std::max(err, d);
      matched += it != ref.entries.end();
    }
    if (ordered) {
      if (matched < ref.entries.size()) {  // reference entries the result lacks count in full
        std::vector<std::uint64_t> lins(got.size());
        for (std::size_t e = 0; e < got.size(); ++e) lins[e] = linear(e);
        for (const auto& kv : ref.entries)
          if (!std::binary_search(lins.begin(), lins.end(), kv.first)) {
            const double d = magnitude(kv.second);
            if (std::isnan(d)) return d;
            err = std::max(err, d);
          }
      }
      return err;
    }
  }
  std::unordered_map<std::uint64_t, V> diff = ref.entries;
  for (std::size_t e = 0; e < got.size(); ++e) diff[linear(e)] -= got.value(e);
  double err = 0;
  for (const auto& kv : diff) {
    const double d = magnitude(kv.second);
    if (std::isnan(d)) return d;
    err = std::max(err, d);
  }
  return err;
}

template reference<double> compute_reference(kernel_id, const problem<double>&);
template reference<cplx> compute_reference(kernel_id, const problem<cplx>&);
template double dense_error(const reference<double>&, const double*, std::size_t);
template double dense_error(const reference<cplx>&, const cplx*, std::size_t);
template double sparse_error(const reference<double>&, const coo_list<double>&);
template double sparse_error(const reference<cplx>&, const coo_list<cplx>&);

}  // namespace tlx
