// Adversarial test-only levels: they prove that pack, iteration and
// conversion assume nothing beyond the level concepts. Neither level is
// default constructible, one is unordered (stores each parent's children in
// decreasing order), the other reports found = false for absent
// coordinates under coordinate value iteration.
#include <gtest/gtest.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "../support/reference.hpp"

using namespace tensorlev;

namespace {

// Position iteration, locate and insert; unordered (each parent's children
// are stored in decreasing coordinate order: coordinate i at slot N-1-i of
// the parent's segment, empty slots hold -1); not default constructible;
// not copy-assignable.
template <class I>
class reversed_level {
 public:
  using index_type = I;
  [[maybe_unused]] static constexpr std::string_view name = "reversed";
  static constexpr bool is_full = false, is_ordered = false, is_unique = true, is_branchless = false,
                        is_compact = false;
  reversed_level() = delete;
  explicit reversed_level(const level_shape<I>& s) : n_(s.extent) {}
  reversed_level(const reversed_level&) = default;
  reversed_level(reversed_level&&) noexcept = default;
  reversed_level& operator=(const reversed_level&) = delete;
  reversed_level& operator=(reversed_level&&) noexcept = default;

  I dimension() const { return n_; }
  bounds<I> pos_bounds(I ppos) const { return {ppos * n_, (ppos + 1) * n_}; }
  coordinate<I> pos_access(I p, ancestors<I>) const { return {crd_[p], crd_[p] >= 0}; }
  located<I> locate(I ppos, ancestors<I>, I i) const {
    const I p = ppos * n_ + (n_ - 1 - i);
    return {p, crd_[p] == i};
  }
  I size(I parent_size) const { return parent_size * n_; }
  void insert_init(I, I sz) { crd_.assign(static_cast<std::size_t>(sz), I(-1)); }
  void insert_coord(I p, I i) { crd_[p] = i; }
  void insert_finalize(I, I) {}
  std::size_t bytes() const { return crd_.capacity() * sizeof(I); }

 private:
  I n_;
  std::vector<I> crd_;
};
struct reversed {
  template <class J>
  using level = reversed_level<J>;
  [[maybe_unused]] static constexpr std::string_view name = "reversed";
};

// Coordinate value iteration with found = false where a bit is unset,
// locate and insert; not full; not default constructible.
template <class I>
class bitmap_level {
 public:
  using index_type = I;
  [[maybe_unused]] static constexpr std::string_view name = "bitmap";
  static constexpr bool is_full = false, is_ordered = true, is_unique = true, is_branchless = false,
                        is_compact = false;
  explicit bitmap_level(const level_shape<I>& s) : n_(s.extent) {}

  I dimension() const { return n_; }
  bounds<I> coord_bounds(ancestors<I>) const { return {0, n_}; }
  located<I> coord_access(I ppos, ancestors<I>, I i) const {
    const I p = ppos * n_ + i;
    return {p, bits_[static_cast<std::size_t>(p)] != 0};
  }
  located<I> locate(I ppos, ancestors<I> a, I i) const { return coord_access(ppos, a, i); }
  I size(I parent_size) const { return parent_size * n_; }
  void insert_init(I, I sz) { bits_.assign(static_cast<std::size_t>(sz), 0); }
  void insert_coord(I p, I) { bits_[static_cast<std::size_t>(p)] = 1; }
  void insert_finalize(I, I) {}
  std::size_t bytes() const { return bits_.capacity(); }

 private:
  I n_;
  std::vector<unsigned char> bits_;
};
struct bitmap {
  template <class J>
  using level = bitmap_level<J>;
  [[maybe_unused]] static constexpr std::string_view name = "bitmap";
};

static_assert(!std::is_default_constructible_v<reversed_level<int>>);
static_assert(!std::is_default_constructible_v<bitmap_level<int>>);
static_assert(level<reversed_level<int>> && insertable_level<reversed_level<int>> && pos_iterable_level<reversed_level<int>> &&
              !ordered_level<reversed_level<int>> && packable_level<reversed_level<int>>);
static_assert(level<bitmap_level<int>> && insertable_level<bitmap_level<int>> && !full_level<bitmap_level<int>> &&
              !always_found_level<bitmap_level<int>>);

struct dense_reversed : format<levels<dense<>, reversed>> {
  static constexpr std::string_view name = "dense-reversed";
};
struct bitmap_rows : format<levels<dense<>, bitmap>> {
  static constexpr std::string_view name = "bitmap rows";
};
struct reversed_bitmap_csc : format<levels<reversed, bitmap>, modes<1, 0>> {
  static constexpr std::string_view name = "reversed-bitmap-csc";
};

template <class F>
void exhaustive() {
  std::mt19937_64 rng(99);
  std::size_t bad = 0, cases = 0;
  for (int m = 0; m <= 6; ++m)
    for (int n = 0; n <= 6; ++n)
      for (int nnz = 0; nnz <= m * n; ++nnz) {
        auto c = tltest::make_case<double, int, 2>({m, n}, static_cast<std::size_t>(nnz),
                                                   static_cast<std::size_t>(nnz / 2), rng);
        const auto t = pack<F>(c.list);
        bad += tltest::mismatches(t, c.dense, to_string<F>());
        bad += tltest::mismatches(convert<csr>(t), c.dense, "to CSR");
        bad += tltest::mismatches(convert<F>(pack<coo>(c.list)), c.dense, "from COO");
        ++cases;
      }
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(cases, 490u);
}

}  // namespace

TEST(AdversarialLevels, UnorderedNonDefaultConstructible) { exhaustive<dense_reversed>(); }
TEST(AdversarialLevels, FoundFalseUnderValueIteration) { exhaustive<bitmap_rows>(); }
TEST(AdversarialLevels, BothTogetherUnderAModeOrdering) { exhaustive<reversed_bitmap_csc>(); }

TEST(AdversarialLevels, ReversedLevelReallyStoresOutOfOrder) {
  coordinate_list<double> l({1, 5});
  l.push_back({0, 1}, 1.0);
  l.push_back({0, 3}, 2.0);
  l.push_back({0, 4}, 3.0);
  const auto t = pack<dense_reversed>(l);
  std::vector<int> seen;
  for_each_component(t, [&](const auto& x, double) { seen.push_back(x[1]); });
  EXPECT_EQ(seen, (std::vector<int>{4, 3, 1}));
}
