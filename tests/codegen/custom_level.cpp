// The design test: a level type defined only in this file takes part in
// SpMV, sums and element-wise products, into dense and sparse outputs, with
// no change to any generator header. It is a fixed-width padded level
// (ELL rows as one level): parent position p owns positions p*W .. p*W+W-1,
// in coordinate order, and unused slots hold -1 and report "not found".
// It is ordered and unique but neither full, compact, locatable nor
// always-found, and it has no assembly capability: tensors are built from
// its arrays directly. A second one (reversed rows) is locatable but not
// contiguous, in the hoisted MTTKRP.
#include <algorithm>

#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

template <class I>
class padded_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "padded";
  static constexpr bool is_full = false;
  static constexpr bool is_ordered = true;
  static constexpr bool is_unique = true;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = false;
  static constexpr bool always_found = false;

  padded_level(I n, I w, std::vector<I> crd) : n_(n), w_(w), crd_(std::move(crd)) {}
  [[nodiscard]] I dimension() const noexcept { return n_; }
  [[nodiscard]] bounds<I> pos_bounds(I p) const noexcept { return {p * w_, (p + 1) * w_}; }
  [[nodiscard]] coordinate<I> pos_access(I q, ancestors<I>) const noexcept { return {crd_[q], crd_[q] != I(-1)}; }

 private:
  I n_, w_;
  std::vector<I> crd_;
};

struct padded {
  template <class I>
  using level = padded_level<I>;
  [[maybe_unused]] static constexpr std::string_view name = "padded";
};
struct padded_rows : format<levels<dense<>, padded>> {
  [[maybe_unused]] static constexpr std::string_view name = "padded rows";
};

static_assert(level<padded_level<int>> && pos_iterable_level<padded_level<int>>);
static_assert(!locatable_level<padded_level<int>> && !appendable_level<padded_level<int>> &&
              !always_found_level<padded_level<int>>);

// Padded copy of a CSR matrix, with `extra` empty slots per row.
tensor<double, padded_rows> to_padded(const tensor<double, csr>& A, int extra) {
  const int m = A.dimension(0);
  const auto& pos = A.level<1>().pos();
  const auto& crd = A.level<1>().crd();
  int w = extra;
  for (int r = 0; r < m; ++r) w = std::max(w, pos[r + 1] - pos[r] + extra);
  w = std::max(w, 1);
  std::vector<int> pc(static_cast<std::size_t>(m * w), -1);
  std::vector<double> pv(pc.size(), 0.0);
  for (int r = 0; r < m; ++r)
    for (int q = pos[r]; q < pos[r + 1]; ++q) {
      pc[r * w + (q - pos[r])] = crd[q];
      pv[r * w + (q - pos[r])] = A.values()[q];
    }
  return tensor<double, padded_rows>(A.dims(), {dense_level<int>(m), padded_level<int>(A.dimension(1), w, pc)},
                                     std::move(pv));
}

TEST(CodegenCustomLevel, SpMVSumProductWithAPaddedLevel) {
  std::mt19937_64 rng(60);
  std::size_t bad = 0, cases = 0;
  for (int m = 0; m <= 4; ++m)
    for (int n = 0; n <= 5; ++n)
      for (double f : {0.0, 0.3, 0.7, 1.0})
        for (int extra : {0, 2}) {
          auto A = random_operand<csr>(std::array<int, 2>{m, n}, f, rng);
          const auto P = to_padded(A.t, extra);
          ASSERT_EQ(to_dense(P), A.d);
          auto x = random_operand<sparse_vector>(std::array<int, 1>{n}, 0.5, rng);
          auto B = random_operand<csr>(std::array<int, 2>{m, n}, 0.5, rng);
          const std::string tag = std::to_string(m) + "x" + std::to_string(n);
          {  // SpMV with a sparse x: the padded level is merged with x's
            std::vector<double> ref(static_cast<std::size_t>(m), 0.0);
            for (int r = 0; r < m; ++r)
              for (int c = 0; c < n; ++c) ref[r] += A.d[r * n + c] * x.d[c];
            tensor<double, dense_vector> y({m});
            y(i) = P(i, j) * x.t(j);
            bad += count_mismatches<double>(y.values(), ref, "padded SpMV " + tag);
          }
          std::vector<double> sum(A.d.size()), prod(A.d.size());
          for (std::size_t e = 0; e < sum.size(); ++e) sum[e] = A.d[e] + B.d[e], prod[e] = A.d[e] * B.d[e];
          {  // sums and products into a dense output
            tensor<double, dense_row_major> C({m, n});
            C(i, j) = P(i, j) + B.t(i, j);
            bad += count_mismatches<double>(C.values(), sum, "padded + CSR " + tag);
            C(i, j) = B.t(i, j) * P(i, j);
            bad += count_mismatches<double>(C.values(), prod, "CSR * padded " + tag);
          }
          {  // and into CSR (appended in loop order)
            tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({m, n}));
            C(i, j) = P(i, j) + B.t(i, j);
            bad += mismatches(C, sum, "padded + CSR -> CSR " + tag);
            C(i, j) = P(i, j) * B.t(i, j);
            bad += mismatches(C, prod, "padded * CSR -> CSR " + tag);
          }
          ++cases;
        }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(cases, 5u * 6u * 4u * 2u);
}

// A dense level stored back to front: locatable, full and always found,
// but not contiguous (coordinate i at position p*n + n-1-i). As the factor
// matrices' second level in MTTKRP it binds the hoisted variable r: the
// hoisted sub-nest (kernel::hoisted, at_v_next) must locate each r, not
// step positions by one.
template <class I>
class reversed_level {
 public:
  using index_type = I;
  static constexpr std::string_view name = "reversed";
  static constexpr bool is_full = true;
  static constexpr bool is_ordered = false;
  static constexpr bool is_unique = true;
  static constexpr bool is_branchless = false;
  static constexpr bool is_compact = true;
  static constexpr bool always_found = true;
  static constexpr bool needs_ancestors = false;

  explicit reversed_level(I n) : n_(n) {}
  [[nodiscard]] I dimension() const noexcept { return n_; }
  [[nodiscard]] bounds<I> coord_bounds(ancestors<I>) const noexcept { return {I(0), n_}; }
  [[nodiscard]] located<I> coord_access(I p, ancestors<I>, I i) const noexcept { return {p * n_ + (n_ - 1 - i), true}; }
  [[nodiscard]] located<I> locate(I p, ancestors<I>, I i) const noexcept { return {p * n_ + (n_ - 1 - i), true}; }

 private:
  I n_;
};
struct reversed {
  template <class I>
  using level = reversed_level<I>;
  [[maybe_unused]] static constexpr std::string_view name = "reversed";
};
struct reversed_rows : format<levels<dense<>, reversed>> {
  [[maybe_unused]] static constexpr std::string_view name = "reversed rows";
};
static_assert(locatable_level<reversed_level<int>> && always_found_level<reversed_level<int>>);
// MTTKRP over them hoists C(k, r) out of loop l, with r bound through the reversed level.
constexpr tensorlev::index_var<'r'> r_{};
static_assert(tensorlev::cg::make_order(
                  tensorlev::cg::describe<decltype(std::declval<tensor<double, dense_row_major>&>()(i, r_)),
                                          decltype(std::declval<const tensor<double, csf>&>()(i, k, l) *
                                                   std::declval<const tensor<double, reversed_rows>&>()(k, r_) *
                                                   std::declval<const tensor<double, reversed_rows>&>()(l, r_)),
                                          false>(),
                  0)
                  .hoist == 2);

// A dense m x n matrix (row-major values d) with its rows stored back to front.
tensor<double, reversed_rows> to_reversed(int m, int n, const std::vector<double>& d) {
  std::vector<double> v(d.size());
  for (int a = 0; a < m; ++a)
    for (int b = 0; b < n; ++b) v[static_cast<std::size_t>(a * n + (n - 1 - b))] = d[static_cast<std::size_t>(a * n + b)];
  return tensor<double, reversed_rows>({m, n}, {dense_level<int>(m), reversed_level<int>(n)}, std::move(v));
}

TEST(CodegenCustomLevel, HoistedMttkrpThroughALevelThatIsNotContiguous) {
  constexpr auto r = r_;
  std::mt19937_64 rng(62);
  std::size_t bad = 0, cases = 0;
  // R = 3 runs the general hoisted loops; 8 and 16 the constant widths
  // (TENSORLEV_HOIST_SPECIALIZE, GCC by default).
  for (int R : {3, 8, 16})
    for (const std::array<int, 3> dims : {std::array<int, 3>{4, 5, 6}, std::array<int, 3>{1, 1, 1},
                                          std::array<int, 3>{3, 0, 2}, std::array<int, 3>{6, 3, 7}})
      for (double f : {0.2, 0.6}) {
        auto B = random_operand<csf>(dims, f, rng);
        auto C = random_operand<dense_row_major>(std::array<int, 2>{dims[1], R}, 1.0, rng);
        auto D = random_operand<dense_row_major>(std::array<int, 2>{dims[2], R}, 1.0, rng);
        const auto Cr = to_reversed(dims[1], R, C.d);
        const auto Dr = to_reversed(dims[2], R, D.d);
        std::vector<double> ref = mttkrp_reference(dims, R, B.d, C.d, D.d);
        const std::string tag = "R " + std::to_string(R) + " " + std::to_string(dims[0]) + "x" +
                                std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + " fill " + std::to_string(f);
        tensor<double, dense_row_major> A({dims[0], R});
        A(i, r) = B.t(i, k, l) * Cr(k, r) * Dr(l, r);
        bad += count_mismatches<double>(A.values(), ref, "A = B C D, C and D reversed, " + tag);
        A(i, r) += B.t(i, k, l) * C.t(k, r) * Dr(l, r);
        for (double& e : ref) e *= 2.0;
        bad += count_mismatches<double>(A.values(), ref, "A += B C D, D reversed, " + tag);
        ++cases;
      }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(cases, 3u * 4u * 2u);
}

TEST(CodegenCustomLevel, LoopNestPrintsTheLevelAsCalls) {
  std::mt19937_64 rng(61);
  auto A = random_operand<csr>(std::array<int, 2>{3, 3}, 0.5, rng);
  const auto P = to_padded(A.t, 1);
  tensor<double, dense_vector> x({3}), y({3});
  const std::string s = loop_nest(y(i), P(i, j) * x(j), {"y", "P", "x"});
  EXPECT_NE(s.find("P2.pos_bounds(pP1).begin"), std::string::npos) << s;
  EXPECT_NE(s.find("P2.pos_access(pP2).coord"), std::string::npos) << s;
}

}  // namespace
