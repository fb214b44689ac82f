// Sparse outputs: add, SpGEMM and SDDMM.
//
// With A read from a Matrix Market file (square):
//   S(i,j) = A(i,j) + T(i,j)                T = A transposed, CSR result (appended row by row)
//   C(i,j) = A(i,k) * A(k,j)                SpGEMM, CSR result (Gustavson workspace)
//   C(i,j) = A(i,k) * A(k,j), precompute(j) the same schedule asked for explicitly
//   H(i,j) = A(i,j) + T(i,j)                into hash rows (a symbolic pass, then inserts)
//   K(i,j) = A(i,j) * U(i,r) * V(j,r)       SDDMM with dense U, V, CSR result
// Each result is checked component by component against a dense reference
// computed by plain loops over the coordinate list.
//
//   sparse_algebra [matrix.mtx]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace {

/// Rows kept in hash tables: a format composed from two level types.
struct hash_rows : format<levels<dense<>, hashed<>>> {
  static constexpr std::string_view name = "hash rows";
};

// Largest |t - ref| over all components (t's stored ones, the rest zero).
template <class T>
double max_diff(const T& t, const std::vector<double>& ref) {
  std::vector<double> d(ref.size(), 0.0);
  const auto n = static_cast<std::size_t>(t.dimension(1));
  for_each_component(t, [&](const auto& x, const double& v) {
    d[static_cast<std::size_t>(x[0]) * n + static_cast<std::size_t>(x[1])] += v;
  });
  double m = 0;
  for (std::size_t q = 0; q < ref.size(); ++q) m = std::max(m, std::abs(d[q] - ref[q]));
  return m;
}

bool report(const char* what, std::size_t stored, double diff) {
  const bool ok = diff <= 1e-9;
  std::printf("  %-44s %9zu stored  max |diff| %.2e  %s\n", what, stored, diff, ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "examples/data/jagmesh7.mtx";
  const auto list = io::read_matrix_market<double, int>(path);
  const int n = list.dims()[0];
  if (list.dims()[1] != n) throw shape_error(path + ": the matrix is not square");
  coordinate_list<double, int> tlist({n, n});
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto c = list.coords(e);
    // Distinct values so that A + A^T is not just 2A for symmetric input.
    tlist.push_back({c[1], c[0]}, list.value(e) * (1.0 + static_cast<double>(c[0] % 7)));
  }
  const auto A = pack<csr>(list);
  const auto T = pack<csr>(tlist);
  const auto N = static_cast<std::size_t>(n);

  // Dense references from the coordinate lists.
  std::vector<double> a(N * N, 0.0), t(N * N, 0.0);
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto c = list.coords(e);
    a[static_cast<std::size_t>(c[0]) * N + static_cast<std::size_t>(c[1])] += list.value(e);
  }
  for (std::size_t e = 0; e < tlist.size(); ++e) {
    const auto c = tlist.coords(e);
    t[static_cast<std::size_t>(c[0]) * N + static_cast<std::size_t>(c[1])] += tlist.value(e);
  }
  std::vector<double> sum(N * N), prod(N * N, 0.0), sddmm(N * N, 0.0);
  for (std::size_t q = 0; q < N * N; ++q) sum[q] = a[q] + t[q];
  if (list.size() > 50000) throw error("sparse_algebra: the reference SpGEMM is quadratic in the entries; use a smaller matrix");
  for (std::size_t e = 0; e < list.size(); ++e) {  // A*A: for each entry (r,k), every entry (k,j)
    const auto c = list.coords(e);
    const auto r = static_cast<std::size_t>(c[0]), k = static_cast<std::size_t>(c[1]);
    for (std::size_t f = 0; f < list.size(); ++f) {
      const auto d = list.coords(f);
      if (static_cast<std::size_t>(d[0]) == k) prod[r * N + static_cast<std::size_t>(d[1])] += list.value(e) * list.value(f);
    }
  }
  const int rank = 8;
  tensor<double, dense_row_major> U({n, rank}), V({n, rank});
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < rank; ++c) {
      U.values()[static_cast<std::size_t>(r * rank + c)] = 1.0 + (r + 2 * c) % 5;
      V.values()[static_cast<std::size_t>(r * rank + c)] = 1.0 - (3 * r + c) % 4;
    }
  for (std::size_t r = 0; r < N; ++r)
    for (std::size_t c = 0; c < N; ++c) {
      if (a[r * N + c] == 0.0) continue;
      double dotp = 0;
      for (std::size_t k = 0; k < static_cast<std::size_t>(rank); ++k)
        dotp += U.values()[r * rank + k] * V.values()[c * rank + k];
      sddmm[r * N + c] = a[r * N + c] * dotp;
    }

  std::printf("%s: %d x %d, %zu stored\n", path.c_str(), n, n, A.stored());
  const coordinate_list<double, int> empty({n, n});
  bool ok = true;

  auto S = pack<csr>(empty);
  S(i, j) = A(i, j) + T(i, j);
  ok &= report("S = A + A^T          (CSR, appended)", S.stored(), max_diff(S, sum));

  auto H = pack<hash_rows>(empty);
  H(i, j) = A(i, j) + T(i, j);
  ok &= report("H = A + A^T          (hash rows, inserted)", H.stored(), max_diff(H, sum));

  auto C = pack<csr>(empty);
  C(i, j) = A(i, k) * A(k, j);
  ok &= report("C = A * A            (CSR, workspace)", C.stored(), max_diff(C, prod));

  auto C2 = pack<csr>(empty);
  compute(C2(i, j), A(i, k) * A(k, j), precompute(j));
  ok &= report("C = A * A, precompute(j)", C2.stored(), max_diff(C2, prod));

  auto D = pack<dcsr>(empty);
  D(i, j) = A(i, k) * A(k, j);
  ok &= report("C = A * A            (DCSR, sorted and packed)", D.stored(), max_diff(D, prod));

  auto K = pack<csr>(empty);
  K(i, j) = A(i, j) * U(i, k) * V(j, k);
  ok &= report("K = A .* (U V^T)     (SDDMM, CSR)", K.stored(), max_diff(K, sddmm));

  std::printf(ok ? "all results match the reference\n" : "some results differ from the reference\n");
  return ok ? 0 : 1;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "sparse_algebra: %s\n", ex.what());
  return 2;
}
