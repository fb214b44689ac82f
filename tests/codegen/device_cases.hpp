// Statements in their device form (kernel::run_device, on a device
// launcher) against the same statements on the serial executor over the
// host tensors. The including file defines, in namespace tltest:
//  - dev_compute(out, e) and dev_compute_add(out, e): run on the launcher
//    under test;
//  - to_dev(t): t copied to where the launcher runs (format kept);
//  - to_host(t): a tensor on the launcher's side, readable on the host.
// Values are small integers, so sums are exact whatever the order of the
// chunks and of atomic adds: results must equal the serial ones exactly.
// TL_PART 0 (dense and scalar outputs, copies), 1 (sparse matrix and
// vector outputs, SpGEMM) and 2 (order-3 sparse outputs) split the cases
// between three translation units (all when undefined): each is one of
// the largest test translation units (clang under the sanitizers takes
// up to ~12 GB for one, so two of them is what a 24 GB machine compiles at
// once).
#pragma once

#include <algorithm>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
using tensorlev::compute;
using tensorlev::compute_add;
constexpr tensorlev::index_var<'r'> r{};

template <class T>
std::size_t same_values(const T& dev_result, std::span<const double> want, const std::string& what) {
  const auto back = to_host(dev_result);
  const auto got = back.values();
  return count_mismatches<double>(std::span<const double>(got.data(), got.size()),
                                  std::vector<double>(want.begin(), want.end()), what + " (device form vs serial)");
}
inline std::size_t same_scalar(double got, double want, const std::string& what) {
  if (got == want) return 0;
  ADD_FAILURE() << what << ": " << got << " vs serial " << want;
  return 1;
}

// Shapes with empty, single-row and single-column cases, and rows longer
// than a warp (the last: 120 rows of 90; it had 300 rows, which took a
// third of the sanitized device tests' run time and reached no other path).
constexpr std::array<std::array<int, 2>, 7> dev_shapes{{{0, 0}, {0, 5}, {1, 7}, {7, 1}, {5, 6}, {60, 41}, {120, 90}}};

// Every level's arrays (positions where the level has them, coordinates)
// and the values equal serial's, and the dense expansions agree.
template <class T, class W>
std::size_t same_sparse(const T& dev_result, const W& want, const std::string& what) {
  const auto got = tensorlev::to_owning(to_host(dev_result));
  std::size_t bad = count_mismatches<double>(std::span<const double>(to_dense(got)), to_dense(want),
                                             what + " (device form vs serial, dense)");
  const bool levels_equal = [&]<std::size_t... K>(std::index_sequence<K...>) {
    return ([&] {
      const auto& g = std::get<K>(got.levels());
      const auto& w = std::get<K>(want.levels());
      bool same = true;
      if constexpr (requires { g.pos(); }) same = same && std::ranges::equal(g.pos(), w.pos());
      if constexpr (requires { g.crd(); }) same = same && std::ranges::equal(g.crd(), w.crd());
      return same;
    }() && ...);
  }(std::make_index_sequence<W::num_levels>{});
  if (!levels_equal || !std::ranges::equal(got.values(), want.values())) {
    ADD_FAILURE() << what << ": the device form's arrays differ from serial (" << got.values().size() << " vs "
                  << want.values().size() << " entries)";
    ++bad;
  }
  return bad;
}

#if !defined(TL_PART) || TL_PART == 0
// Every output strategy of a matrix operand A in format F: located rows,
// scatter (transposed access: atomic adds), scalars, split terms with
// negation and constants, `+=`, a scalar operand.
template <class F>
std::size_t matrix_case(std::array<int, 2> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(dims, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{dims[1]}, 1.0, rng);
  auto z = random_operand<dense_vector>(std::array<int, 1>{dims[0]}, 0.5, rng);
  auto w = random_operand<dense_vector>(std::array<int, 1>{dims[0]}, 1.0, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + " fill " +
                           std::to_string(fill);
  const auto Ad = to_dev(A.t);
  const auto xd = to_dev(x.t);
  const auto zd = to_dev(z.t);
  const auto wd = to_dev(w.t);
  std::size_t bad = 0;

  tensor<double, dense_vector> y({dims[0]}), yt({dims[1]});
  auto yd = to_dev(y);
  auto ytd = to_dev(yt);
  compute(tensorlev::serial, y(i), A.t(i, j) * x.t(j));
  dev_compute(yd(i), Ad(i, j) * xd(j));
  bad += same_values(yd, y.values(), "y = A x, " + what);
  compute_add(tensorlev::serial, y(i), A.t(i, j) * x.t(j));
  dev_compute_add(yd(i), Ad(i, j) * xd(j));
  bad += same_values(yd, y.values(), "y += A x, " + what);
  compute(tensorlev::serial, y(i), A.t(i, j) * x.t(j) + z.t(i));
  dev_compute(yd(i), Ad(i, j) * xd(j) + zd(i));
  bad += same_values(yd, y.values(), "y = A x + z, " + what);
  // terms with different reductions under a negation: split into kernels
  compute(tensorlev::serial, y(i), -(A.t(i, j) * x.t(j) - 2.0 * z.t(i)) - w.t(i) * w.t(i));
  dev_compute(yd(i), -(Ad(i, j) * xd(j) - 2.0 * zd(i)) - wd(i) * wd(i));
  bad += same_values(yd, y.values(), "y = -(A x - 2 z) - w w, " + what);
  // transposed: every chunk adds into all of y^T (atomic adds)
  compute(tensorlev::serial, yt(j), A.t(i, j) * w.t(i));
  dev_compute(ytd(j), Ad(i, j) * wd(i));
  bad += same_values(ytd, yt.values(), "y^T = A^T w, " + what);
  compute_add(tensorlev::serial, yt(j), A.t(i, j) * z.t(i) * 3.0);
  dev_compute_add(ytd(j), Ad(i, j) * zd(i) * 3.0);
  bad += same_values(ytd, yt.values(), "y^T += 3 A^T z, " + what);
  // a scalar operand
  tensorlev::scalar<double> alpha;
  alpha.value() = -2;
  compute(tensorlev::serial, y(i), alpha() * A.t(i, j) * x.t(j));
  dev_compute(yd(i), alpha() * Ad(i, j) * xd(j));
  bad += same_values(yd, y.values(), "y = alpha A x, " + what);
  // scalars: a reduction over every chunk, = and +=
  tensorlev::scalar<double> s_want, s_got;
  compute(tensorlev::serial, s_want(), w.t(i) * A.t(i, j) * x.t(j));
  dev_compute(s_got(), wd(i) * Ad(i, j) * xd(j));
  bad += same_scalar(s_got.value(), s_want.value(), "w^T A x, " + what);
  compute_add(tensorlev::serial, s_want(), -A.t(i, j) * 2.0);
  dev_compute_add(s_got(), -Ad(i, j) * 2.0);
  bad += same_scalar(s_got.value(), s_want.value(), "+= -2 sum of A, " + what);
  return bad;
}

// Dense matrix outputs from two operands in F: a merged sum (rows, or
// scatter for column-major F), a difference with a transpose-free
// broadcast, SpMM into row-major C.
template <class F>
std::size_t matrix_out_case(std::array<int, 2> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(dims, fill, rng);
  auto B = random_operand<F>(dims, fill, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{dims[1], 3}, 1.0, rng);
  auto z = random_operand<dense_vector>(std::array<int, 1>{dims[1]}, 0.5, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]);
  const auto Ad = to_dev(A.t);
  const auto Bd = to_dev(B.t);
  const auto Dd = to_dev(D.t);
  const auto zd = to_dev(z.t);
  std::size_t bad = 0;
  tensor<double, dense_row_major> C({dims[0], dims[1]}), M({dims[0], 3});
  auto Cd = to_dev(C);
  auto Md = to_dev(M);
  compute(tensorlev::serial, C(i, j), A.t(i, j) + B.t(i, j));
  dev_compute(Cd(i, j), Ad(i, j) + Bd(i, j));
  bad += same_values(Cd, C.values(), "C = A + B, " + what);
  compute(tensorlev::serial, C(i, j), A.t(i, j) - B.t(i, j) * z.t(j));
  dev_compute(Cd(i, j), Ad(i, j) - Bd(i, j) * zd(j));
  bad += same_values(Cd, C.values(), "C = A - B z^T, " + what);
  compute_add(tensorlev::serial, C(i, j), A.t(i, j) * B.t(i, j));
  dev_compute_add(Cd(i, j), Ad(i, j) * Bd(i, j));
  bad += same_values(Cd, C.values(), "C += A .* B, " + what);
  compute(tensorlev::serial, M(i, k), A.t(i, j) * D.t(j, k));
  dev_compute(Md(i, k), Ad(i, j) * Dd(j, k));
  bad += same_values(Md, M.values(), "M = A D, " + what);
  // a column-major output: chunks of a row-major operand's rows scatter
  tensor<double, dense_col_major> Cc({dims[0], dims[1]});
  auto Ccd = to_dev(Cc);
  compute(tensorlev::serial, Cc(i, j), A.t(i, j) - B.t(i, j));
  dev_compute(Ccd(i, j), Ad(i, j) - Bd(i, j));
  bad += same_values(Ccd, Cc.values(), "column-major C = A - B, " + what);
  if constexpr (concordant_pair<F, dcsr>) {
    // against a DCSR operand: a merged outer loop for sparse-outer F (DCSR,
    // COO), cut by coordinate
    auto H = random_operand<dcsr>(dims, fill, rng);
    const auto Hd = to_dev(H.t);
    compute(tensorlev::serial, C(i, j), A.t(i, j) - 2.0 * H.t(i, j));
    dev_compute(Cd(i, j), Ad(i, j) - 2.0 * Hd(i, j));
    bad += same_values(Cd, C.values(), "C = A - 2 H (DCSR H), " + what);
  }
  return bad;
}

// Order-3 operands: MTTKRP into a dense matrix, TTV, an inner product.
template <class F>
std::size_t order3_case(std::array<int, 3> dims, double fill, std::mt19937_64& rng) {
  auto B = random_operand<F>(dims, fill, rng);
  auto C = random_operand<dense_row_major>(std::array<int, 2>{dims[1], 4}, 1.0, rng);
  auto D = random_operand<dense_row_major>(std::array<int, 2>{dims[2], 4}, 1.0, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{dims[2]}, 1.0, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                           std::to_string(dims[2]);
  const auto Bd = to_dev(B.t);
  const auto Cd = to_dev(C.t);
  const auto Dd = to_dev(D.t);
  const auto xd = to_dev(x.t);
  std::size_t bad = 0;
  tensor<double, dense_row_major> M({dims[0], 4}), Y({dims[0], dims[1]});
  auto Md = to_dev(M);
  auto Yd = to_dev(Y);
  compute(tensorlev::serial, M(i, r), B.t(i, k, l) * C.t(k, r) * D.t(l, r));
  dev_compute(Md(i, r), Bd(i, k, l) * Cd(k, r) * Dd(l, r));
  bad += same_values(Md, M.values(), "MTTKRP, " + what);
  compute(tensorlev::serial, Y(i, j), B.t(i, j, k) * x.t(k));
  dev_compute(Yd(i, j), Bd(i, j, k) * xd(k));
  bad += same_values(Yd, Y.values(), "TTV, " + what);
  // an order-3 dense output
  tensor<double, dense_tensor<3>> Z({dims[0], dims[1], dims[2]});
  auto Zd = to_dev(Z);
  compute(tensorlev::serial, Z(i, j, k), B.t(i, j, k) * x.t(k) + B.t(i, j, k));
  dev_compute(Zd(i, j, k), Bd(i, j, k) * xd(k) + Bd(i, j, k));
  bad += same_values(Zd, Z.values(), "Z = B x + B, " + what);
  tensorlev::scalar<double> s_want, s_got;
  compute(tensorlev::serial, s_want(), B.t(i, j, k) * B.t(i, j, k));
  dev_compute(s_got(), Bd(i, j, k) * Bd(i, j, k));
  bad += same_scalar(s_got.value(), s_want.value(), "<B, B>, " + what);
  return bad;
}

#endif  // part 0

#if !defined(TL_PART) || TL_PART == 1
// CSR outputs assembled where the launcher runs (count, scan, fill) from
// row-major operands in F: a union (A + B), an intersection (A .* B), a
// negation, a column broadcast, a DCSR operand, `+=` (old + e), SDDMM (a
// reduction under the appended level), a sparse vector (y = A x's rows
// with entries). Every array must equal the serial result's exactly, and
// the dense expansions must agree.
template <class F>
std::size_t sparse_out_case(std::array<int, 2> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(dims, fill, rng);
  auto B = random_operand<F>(dims, fill, rng);
  auto H = random_operand<dcsr>(dims, fill, rng);
  auto z = random_operand<dense_vector>(std::array<int, 1>{dims[1]}, 0.5, rng);
  auto X = random_operand<dense_row_major>(std::array<int, 2>{dims[0], 3}, 1.0, rng);
  auto Y = random_operand<dense_row_major>(std::array<int, 2>{dims[1], 3}, 1.0, rng);
  auto v = random_operand<sparse_vector>(std::array<int, 1>{dims[1]}, fill, rng);
  auto u = random_operand<sparse_vector>(std::array<int, 1>{dims[1]}, fill, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + " fill " +
                           std::to_string(fill);
  const auto Ad = to_dev(A.t);
  const auto Bd = to_dev(B.t);
  const auto Hd = to_dev(H.t);
  const auto zd = to_dev(z.t);
  const auto Xd = to_dev(X.t);
  const auto Yd = to_dev(Y.t);
  const auto vd = to_dev(v.t);
  const auto ud = to_dev(u.t);
  const auto empty = tensorlev::coordinate_list<double, int>({dims[0], dims[1]});
  std::size_t bad = 0;
  // Each statement into CSR (count, scan, fill), DCSR and COO (CSR's shape,
  // then compacted rows).
  auto check = [&](auto&& serial_stmt, auto&& dev_stmt, const std::string& name) {
    for_each_format<std::tuple<csr, dcsr, coo>>([&]<class G>(std::type_identity<G>) {
      tensor<double, G> C = tensorlev::pack<G>(empty);
      auto Cd = to_dev(C);
      serial_stmt(C);
      dev_stmt(Cd);
      bad += same_sparse(Cd, C, name + " into " + fname<G>() + ", " + what);
    });
  };
  check([&](auto& C) { compute(tensorlev::serial, C(i, j), A.t(i, j) + B.t(i, j)); },
        [&](auto& C) { dev_compute(C(i, j), Ad(i, j) + Bd(i, j)); }, "C = A + B");
  check([&](auto& C) { compute(tensorlev::serial, C(i, j), A.t(i, j) * B.t(i, j)); },
        [&](auto& C) { dev_compute(C(i, j), Ad(i, j) * Bd(i, j)); }, "C = A .* B");
  check([&](auto& C) { compute(tensorlev::serial, C(i, j), -A.t(i, j)); },
        [&](auto& C) { dev_compute(C(i, j), -Ad(i, j)); }, "C = -A");
  check([&](auto& C) { compute(tensorlev::serial, C(i, j), A.t(i, j) * z.t(j) - 2.0 * H.t(i, j)); },
        [&](auto& C) { dev_compute(C(i, j), Ad(i, j) * zd(j) - 2.0 * Hd(i, j)); }, "C = A z^T - 2 H (DCSR H)");
  check(
      [&](auto& C) {
        compute(tensorlev::serial, C(i, j), B.t(i, j));
        compute_add(tensorlev::serial, C(i, j), A.t(i, j) - H.t(i, j));
      },
      [&](auto& C) {
        dev_compute(C(i, j), Bd(i, j));
        dev_compute_add(C(i, j), Ad(i, j) - Hd(i, j));
      },
      "C = B; C += A - H");
  check(
      [&](auto& C) {
        compute(tensorlev::serial, C(i, j), A.t(i, j) * X.t(i, k) * Y.t(j, k));
        compute_add(tensorlev::serial, C(i, j), B.t(i, j) * X.t(i, k) * Y.t(j, k));
      },
      [&](auto& C) {
        dev_compute(C(i, j), Ad(i, j) * Xd(i, k) * Yd(j, k));
        dev_compute_add(C(i, j), Bd(i, j) * Xd(i, k) * Yd(j, k));
      },
      "SDDMM; C += SDDMM of B (a reduction under +=)");
  {
    auto w = tensorlev::pack<sparse_vector>(tensorlev::coordinate_list<double, int>({dims[1]}));
    auto wd = to_dev(w);
    compute(tensorlev::serial, w(j), v.t(j) - u.t(j) * 3.0);
    dev_compute(wd(j), vd(j) - ud(j) * 3.0);
    bad += same_sparse(wd, w, "w = v - 3 u (sparse vectors), " + what);
  }
  return bad;
}

// Column-major sparse outputs: CSC (count, scan, fill over columns), and
// DCSC and column-major COO (CSC's shape, then compacted columns), from CSC
// operands, with = and +=.
struct dcsc_out : tensorlev::format<tensorlev::levels<tensorlev::compressed<>, tensorlev::compressed<>>,
                                    tensorlev::modes<1, 0>> {
  static constexpr std::string_view name = "DCSC";
};
struct coo_col_out
    : tensorlev::format<tensorlev::levels<tensorlev::compressed_nonunique, tensorlev::singleton<>>,
                        tensorlev::modes<1, 0>> {
  static constexpr std::string_view name = "COO column-major";
};
inline std::size_t column_major_out_case(std::array<int, 2> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<csc>(dims, fill, rng);
  auto B = random_operand<csc>(dims, fill, rng);
  const auto Ad = to_dev(A.t);
  const auto Bd = to_dev(B.t);
  const auto empty = tensorlev::coordinate_list<double, int>({dims[0], dims[1]});
  std::size_t bad = 0;
  for_each_format<std::tuple<csc, dcsc_out, coo_col_out>>([&]<class G>(std::type_identity<G>) {
    tensor<double, G> C = tensorlev::pack<G>(empty);
    auto Cd = to_dev(C);
    compute(tensorlev::serial, C(i, j), A.t(i, j) - 2.0 * B.t(i, j));
    compute_add(tensorlev::serial, C(i, j), A.t(i, j) * B.t(i, j));
    dev_compute(Cd(i, j), Ad(i, j) - 2.0 * Bd(i, j));
    dev_compute_add(Cd(i, j), Ad(i, j) * Bd(i, j));
    bad += same_sparse(Cd, C,
                       "C = A - 2B; C += A .* B into " + fname<G>() + ", CSC " + std::to_string(dims[0]) + "x" +
                           std::to_string(dims[1]) + " fill " + std::to_string(fill));
  });
  return bad;
}

// SpGEMM (a workspace over the reduction k) assembled where the launcher
// runs, with an accumulator per row sized by the row's products: hashed
// rows (few products against a long row), dense rows (many), empty rows,
// and a sparse vector result (w = v A: one row). A in FA, B in FB; into
// CSR, DCSR and COO, with = and += (through a temporary), and a sum with a
// sparse matrix (split terms).
template <class FA, class FB>
std::size_t spgemm_case(std::array<int, 3> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<FA>(std::array<int, 2>{dims[0], dims[1]}, fill, rng);
  auto B = random_operand<FB>(std::array<int, 2>{dims[1], dims[2]}, fill, rng);
  auto H = random_operand<csr>(std::array<int, 2>{dims[0], dims[2]}, fill, rng);
  auto v = random_operand<sparse_vector>(std::array<int, 1>{dims[0]}, 0.5, rng);
  const std::string what = fname<FA>() + " x " + fname<FB>() + " " + std::to_string(dims[0]) + "x" +
                           std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " fill " + std::to_string(fill);
  const auto Ad = to_dev(A.t);
  const auto Bd = to_dev(B.t);
  const auto Hd = to_dev(H.t);
  const auto vd = to_dev(v.t);
  const auto empty = tensorlev::coordinate_list<double, int>({dims[0], dims[2]});
  std::size_t bad = 0;
  for_each_format<std::tuple<csr, dcsr, coo>>([&]<class G>(std::type_identity<G>) {
    tensor<double, G> C = tensorlev::pack<G>(empty);
    auto Cd = to_dev(C);
    compute(tensorlev::serial, C(i, j), A.t(i, k) * B.t(k, j));
    dev_compute(Cd(i, j), Ad(i, k) * Bd(k, j));
    bad += same_sparse(Cd, C, "C = A B into " + fname<G>() + ", " + what);
    compute_add(tensorlev::serial, C(i, j), -2.0 * A.t(i, k) * B.t(k, j));
    dev_compute_add(Cd(i, j), -2.0 * Ad(i, k) * Bd(k, j));
    bad += same_sparse(Cd, C, "C += -2 A B into " + fname<G>() + ", " + what);
  });
  {
    // Unsorted rows (csr_unsorted): the device keeps its accumulators'
    // slot order, serial the first-reached order; the same values, row
    // bounds and set of columns in each row.
    tensor<double, tensorlev::csr_unsorted> C = tensorlev::pack<tensorlev::csr_unsorted>(empty);
    auto Cd = to_dev(C);
    compute(tensorlev::serial, C(i, j), A.t(i, k) * B.t(k, j));
    dev_compute(Cd(i, j), Ad(i, k) * Bd(k, j));
    const auto got = tensorlev::to_owning(to_host(Cd));
    const std::string u = "C = A B into unsorted rows, " + what;
    bad += count_mismatches<double>(std::span<const double>(to_dense(got)), to_dense(C), u);
    tensorlev::validate(got);
    const auto& gp = got.template level<1>().pos();
    const auto& wp = C.template level<1>().pos();
    if (!std::ranges::equal(gp, wp)) {
      ++bad, ADD_FAILURE() << u << ": row bounds differ";
    } else {
      for (std::size_t r = 0; r + 1 < gp.size(); ++r) {
        std::vector<int> g(got.template level<1>().crd().begin() + gp[r], got.template level<1>().crd().begin() + gp[r + 1]);
        std::vector<int> w(C.template level<1>().crd().begin() + wp[r], C.template level<1>().crd().begin() + wp[r + 1]);
        std::ranges::sort(g), std::ranges::sort(w);
        if (g != w) ++bad, ADD_FAILURE() << u << ": row " << r << " holds other columns";
      }
    }
  }
  {
    tensor<double, csr> C = tensorlev::pack<csr>(empty);
    auto Cd = to_dev(C);
    compute(tensorlev::serial, C(i, j), A.t(i, k) * B.t(k, j) - H.t(i, j));
    dev_compute(Cd(i, j), Ad(i, k) * Bd(k, j) - Hd(i, j));
    bad += same_sparse(Cd, C, "C = A B - H, " + what);
  }
  {
    auto w = tensorlev::pack<sparse_vector>(tensorlev::coordinate_list<double, int>({dims[1]}));
    auto wd = to_dev(w);
    compute(tensorlev::serial, w(k), v.t(i) * A.t(i, k));
    dev_compute(wd(k), vd(i) * Ad(i, k));
    bad += same_sparse(wd, w, "w = v A (sparse vector), " + what);
  }
  return bad;
}

#endif  // part 1

#if !defined(TL_PART) || TL_PART == 2
// Order-3 sparse outputs assembled where the launcher runs (chunked count,
// scan and fill): CSF, COO (a non-unique compressed level and singletons)
// and a dense-prefix CSF, from operands in F (union, intersection,
// negation) and, for COO operands, the other expression shapes of
// sparse_out_case (a broadcast vector and a difference, `+=`, a reduction
// under the last level) and a broadcast matrix.
struct dense_csf_out : tensorlev::format<tensorlev::levels<tensorlev::dense<>, tensorlev::compressed<>,
                                                           tensorlev::compressed<>>> {
  static constexpr std::string_view name = "dense-CSF";
};
template <class F>
std::size_t order3_sparse_out_case(std::array<int, 3> dims, double fill, std::mt19937_64& rng) {
  auto A = random_operand<F>(dims, fill, rng);
  auto B = random_operand<F>(dims, fill, rng);
  auto H = random_operand<csf>(dims, fill, rng);
  auto x = random_operand<dense_vector>(std::array<int, 1>{dims[2]}, 0.5, rng);
  auto W = random_operand<dense_row_major>(std::array<int, 2>{dims[0], dims[1]}, 0.5, rng);
  auto X = random_operand<dense_row_major>(std::array<int, 2>{dims[0], 3}, 1.0, rng);
  auto Y = random_operand<dense_row_major>(std::array<int, 2>{dims[1], 3}, 1.0, rng);
  const std::string what = fname<F>() + " " + std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                           std::to_string(dims[2]) + " fill " + std::to_string(fill);
  const auto Ad = to_dev(A.t);
  const auto Bd = to_dev(B.t);
  const auto Hd = to_dev(H.t);
  const auto xd = to_dev(x.t);
  const auto Wd = to_dev(W.t);
  const auto Xd = to_dev(X.t);
  const auto Yd = to_dev(Y.t);
  const auto empty = tensorlev::coordinate_list<double, int>({dims[0], dims[1], dims[2]});
  std::size_t bad = 0;
  auto check = [&](auto&& serial_stmt, auto&& dev_stmt, const std::string& name) {
    for_each_format<std::tuple<csf, coo_tensor<3>, dense_csf_out>>([&]<class G>(std::type_identity<G>) {
      tensor<double, G> Z = tensorlev::pack<G>(empty);
      auto Zd = to_dev(Z);
      serial_stmt(Z);
      dev_stmt(Zd);
      bad += same_sparse(Zd, Z, name + " into " + fname<G>() + ", " + what);
    });
  };
  check([&](auto& Z) { compute(tensorlev::serial, Z(i, j, k), A.t(i, j, k) + B.t(i, j, k)); },
        [&](auto& Z) { dev_compute(Z(i, j, k), Ad(i, j, k) + Bd(i, j, k)); }, "Z = A + B");
  check([&](auto& Z) { compute(tensorlev::serial, Z(i, j, k), A.t(i, j, k) * B.t(i, j, k)); },
        [&](auto& Z) { dev_compute(Z(i, j, k), Ad(i, j, k) * Bd(i, j, k)); }, "Z = A .* B");
  check([&](auto& Z) { compute(tensorlev::serial, Z(i, j, k), -A.t(i, j, k)); },
        [&](auto& Z) { dev_compute(Z(i, j, k), -Ad(i, j, k)); }, "Z = -A");
  // The other shapes from COO operands (beside CSF H), which loop by
  // segments of their non-unique first level: each shape once, not once per
  // operand format, since the output's assembly is what they test and an
  // order-3 device-case translation unit is already one of the largest
  // (docs/design.md).
  if constexpr (std::is_same_v<F, coo_tensor<3>>) {
    check([&](auto& Z) { compute(tensorlev::serial, Z(i, j, k), A.t(i, j, k) * x.t(k) - 2.0 * H.t(i, j, k)); },
          [&](auto& Z) { dev_compute(Z(i, j, k), Ad(i, j, k) * xd(k) - 2.0 * Hd(i, j, k)); },
          "Z = A x_k - 2 H (CSF H)");
    check([&](auto& Z) { compute(tensorlev::serial, Z(i, j, k), A.t(i, j, k) * W.t(i, j)); },
          [&](auto& Z) { dev_compute(Z(i, j, k), Ad(i, j, k) * Wd(i, j)); }, "Z = A .* W_ij (broadcast matrix)");
    check(
        [&](auto& Z) {
          compute(tensorlev::serial, Z(i, j, k), B.t(i, j, k));
          compute_add(tensorlev::serial, Z(i, j, k), A.t(i, j, k) - H.t(i, j, k));
        },
        [&](auto& Z) {
          dev_compute(Z(i, j, k), Bd(i, j, k));
          dev_compute_add(Z(i, j, k), Ad(i, j, k) - Hd(i, j, k));
        },
        "Z = B; Z += A - H");
    check(
        [&](auto& Z) {
          compute(tensorlev::serial, Z(i, j, k), A.t(i, j, k) * X.t(i, r) * Y.t(j, r));
          compute_add(tensorlev::serial, Z(i, j, k), B.t(i, j, k) * X.t(i, r) * Y.t(j, r));
        },
        [&](auto& Z) {
          dev_compute(Z(i, j, k), Ad(i, j, k) * Xd(i, r) * Yd(j, r));
          dev_compute_add(Z(i, j, k), Bd(i, j, k) * Xd(i, r) * Yd(j, r));
        },
        "Z = A .* (X Y^T)_ij summed over r; Z += the same of B");
  }
  return bad;
}

#endif  // part 2

#ifdef TL_DEVICE_API_SUBSET
// The launcher's calls into the execution space (upload, for_each, sum,
// alloc, scans, to_space) on a few formats, in parts 0, 1 and 2: what
// scripts/run-kokkos4-tests.sh compiles against another Kokkos and
// scripts/check-kokkos-cuda.sh with nvcc for Kokkos::Cuda, where the
// question is whether that Kokkos' API and back end serve the launcher,
// not the formats. Every format's cases run against the README's Kokkos;
// every format's device code goes through nvcc and hipcc in
// tests/device/generated_kernels.cu.
using device_matrix_formats = std::tuple<csr, coo, dense_row_major>;
using device_pair_formats = std::tuple<csr, dense_col_major>;
using device_order3_formats = std::tuple<csf, dense_tensor<3>>;
using device_copy_matrix_formats = std::tuple<csr, coo, bcsr<2>>;
using device_copy_order3_formats = std::tuple<csf>;
#else
using device_matrix_formats =
    std::tuple<csr, coo, coo_aos, csc, dcsr, dense_row_major, dense_col_major, hash_rows, ell, dia, bcsr<2>, sell<4>,
               grouped_rows<3>>;
using device_pair_formats = std::tuple<csr, coo, csc, dcsr, dense_row_major, dense_col_major>;
using device_order3_formats = std::tuple<csf, coo_tensor<3>, dense_tensor<3>, mode_generic>;
using device_copy_matrix_formats =
    decltype(std::tuple_cat(std::declval<mode_matrix_formats>(), std::declval<derived_matrix_formats>()));
using device_copy_order3_formats = mode_order3_formats;
#endif

#if !defined(TL_PART) || TL_PART == 0
TEST(DeviceForm, EveryOutputStrategyOverMatrixFormats) {
  std::mt19937_64 rng(1701);
  std::size_t bad = 0;
  for_each_format<device_matrix_formats>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : dev_shapes)
      for (double fill : {0.0, 0.1, 0.6}) bad += matrix_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

TEST(DeviceForm, DenseMatrixOutputs) {
  std::mt19937_64 rng(1702);
  std::size_t bad = 0;
  for_each_format<device_pair_formats>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : dev_shapes)
      for (double fill : {0.0, 0.2}) bad += matrix_out_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

TEST(DeviceForm, Order3Operands) {
  std::mt19937_64 rng(1703);
  std::size_t bad = 0;
  for_each_format<device_order3_formats>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 1, 1}, std::array<int, 3>{1, 6, 5},
                          std::array<int, 3>{9, 1, 4}, std::array<int, 3>{20, 7, 6}})
      for (double fill : {0.0, 0.1, 0.5}) bad += order3_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

// A COO matrix with one long row among empty ones: the device chunks cut
// its row range arithmetically and move each cut to the start of a row, so
// no row is split between two chunks (which would race on y(i)).
TEST(DeviceForm, CooRowsAreNeverSplit) {
  tensorlev::coordinate_list<double, int> list({50, 400});
  for (int c = 0; c < 400; ++c) list.push_back(std::array<int, 2>{7, c}, 1.0);
  for (int row : {0, 8, 49}) list.push_back(std::array<int, 2>{row, 3}, 2.0);
  const auto A = tensorlev::pack<coo>(list);
  tensor<double, dense_vector> x({400}), y({50});
  for (auto& v : x.values()) v = 1;
  compute(tensorlev::serial, y(i), A(i, j) * x(j));
  const auto Ad = to_dev(A);
  const auto xd = to_dev(x);
  auto yd = to_dev(tensor<double, dense_vector>({50}));
  dev_compute(yd(i), Ad(i, j) * xd(j));
  EXPECT_EQ(same_values(yd, y.values(), "COO, one long row"), 0u);
}

// Tensors copied to the launcher's side and back keep format and content.
TEST(DeviceForm, CopiesKeepTheFormat) {
  std::mt19937_64 rng(1704);
  std::size_t bad = 0;
  auto check = [&]<class F, std::size_t N>(std::type_identity<F>, std::array<int, N> dims) {
    auto A = random_operand<F>(dims, 0.3, rng);
    const auto back = to_host(to_dev(A.t));
    static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(back)>::format_type, F>);
    const auto owned = tensorlev::to_owning(back);
    bad += count_mismatches<double>(std::span<const double>(to_dense(owned)), A.d, "round trip of " + fname<F>());
    bad += count_mismatches<double>(owned.values(), std::vector<double>(A.t.values().begin(), A.t.values().end()),
                                    "stored values of " + fname<F>());
  };
  for_each_format<device_copy_matrix_formats>([&]<class F>(std::type_identity<F> f) { check(f, std::array<int, 2>{9, 7}); });
  for_each_format<device_copy_order3_formats>([&]<class F>(std::type_identity<F> f) { check(f, std::array<int, 3>{4, 5, 3}); });
  EXPECT_EQ(bad, 0u);
}

#endif  // part 0

#if !defined(TL_PART) || TL_PART == 1
TEST(DeviceForm, ColumnMajorSparseOutputs) {
  std::mt19937_64 rng(1706);
  std::size_t bad = 0;
  for (const auto& d : dev_shapes)
    for (double fill : {0.0, 0.1, 0.6}) bad += column_major_out_case(d, fill, rng);
  EXPECT_EQ(bad, 0u);
}

// Row accumulators of both kinds (see output/workspace.hpp): hashed where a
// row's products are few for its length (60x41x70 and 8x50x1500 at fill
// 0.05: about 190 products in rows of 1500, 512 slots), dense where they
// are not (fill 0.5). The widest shape has 8 rows: 30 took two thirds of
// this test's time under the sanitizers for the same two kinds.
TEST(DeviceForm, SpGEMMWithRowAccumulators) {
  std::mt19937_64 rng(1707);
  std::size_t bad = 0;
  constexpr std::array<std::array<int, 3>, 8> shapes{
      {{0, 0, 0}, {0, 3, 5}, {1, 1, 1}, {1, 7, 1}, {7, 1, 9}, {5, 6, 4}, {60, 41, 70}, {8, 50, 1500}}};
  auto run = [&]<class FA, class FB>(std::type_identity<FA>, std::type_identity<FB>) {
    for (const auto& d : shapes)
      for (double fill : {0.0, 0.05, 0.5}) bad += spgemm_case<FA, FB>(d, fill, rng);
  };
  run(std::type_identity<csr>{}, std::type_identity<csr>{});
#ifndef TL_DEVICE_API_SUBSET
  run(std::type_identity<dcsr>{}, std::type_identity<csr>{});
  run(std::type_identity<coo>{}, std::type_identity<csr>{});
  run(std::type_identity<csr>{}, std::type_identity<dcsr>{});
#endif
  EXPECT_EQ(bad, 0u);
}

TEST(DeviceForm, SparseOutputsAssembledThere) {
  std::mt19937_64 rng(1705);
  std::size_t bad = 0;
#ifdef TL_DEVICE_API_SUBSET
  using formats = std::tuple<csr>;
#else
  using formats = std::tuple<csr, coo, dcsr, dense_row_major>;
#endif
  for_each_format<formats>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : dev_shapes)
      for (double fill : {0.0, 0.1, 0.6}) bad += sparse_out_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

#endif  // part 1

#if !defined(TL_PART) || TL_PART == 2
TEST(DeviceForm, Order3SparseOutputsAssembledThere) {
  std::mt19937_64 rng(1707);
  std::size_t bad = 0;
#ifdef TL_DEVICE_API_SUBSET
  using formats = std::tuple<csf>;
#else
  using formats = std::tuple<csf, coo_tensor<3>, dense_tensor<3>>;
#endif
  for_each_format<formats>([&]<class F>(std::type_identity<F>) {
    for (const auto& d : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{0, 4, 3}, std::array<int, 3>{5, 0, 3},
                          std::array<int, 3>{4, 3, 0}, std::array<int, 3>{1, 1, 1}, std::array<int, 3>{1, 6, 5},
                          std::array<int, 3>{9, 1, 4}, std::array<int, 3>{20, 7, 6}, std::array<int, 3>{40, 12, 40}})
      for (double fill : {0.0, 0.1, 0.5}) bad += order3_sparse_out_case<F>(d, fill, rng);
  });
  EXPECT_EQ(bad, 0u);
}

#endif  // part 2

}  // namespace
