// Exhaustive pack + convert test for one source format (chosen by the
// build: TL_SOURCE, TL_VALUE, TL_INDEX, TL_FORMATS). For every shape with
// each dimension in 0..TL_MAX_DIM and every number of nonzeros, a random
// list with duplicates is packed into the source format and converted to
// every format of the same order; each result is compared component by
// component with the dense reference. A random case with ~10^5 nonzeros
// follows.
#include <gtest/gtest.h>

#include "../support/format_lists.hpp"
#include "../support/reference.hpp"

using namespace tensorlev;
using V = TL_VALUE;
using I = TL_INDEX;
using Source = TL_SOURCE;
using Targets = tltest::TL_FORMATS;
constexpr std::size_t N = Source::order;

namespace {

template <class T>
std::string label() {
  return tensorlev::to_string<T>();
}

std::size_t count_check(std::size_t got, std::size_t expected, const std::string& what) {
  if (got == expected) return 0;
  ADD_FAILURE() << what << ": " << got << " stored components, expected " << expected;
  return 1;
}

// Packs the case into Source, checks it, converts to every target (keeping
// and dropping stored zeros), checks values and, for formats without
// padding, the exact number of stored components. keep_padding = false
// skips the conversions that keep stored zeros when the source pads (DIA of
// a random 10^5-nonzero matrix stores ~30x that many zeros; the exhaustive
// cases cover keeping them).
std::size_t check_case(const tltest::random_case<V, I, N>& c, std::size_t distinct, const std::string& where,
                       bool keep_padding = true) {
  std::size_t nonzeros = 0;
  for (const V& v : c.dense) nonzeros += v != V{};
  const auto src = pack<Source>(c.list);
  std::size_t bad = tltest::mismatches(src, c.dense, where + " pack " + label<Source>());
  if constexpr (tltest::no_padding<Source>)
    bad += count_check(tltest::components(src), distinct, where + " pack " + label<Source>());
  std::apply(
      [&]<class... G>(G...) {
        (
            [&] {
              const auto dropped = convert<G>(src, stored_zeros::drop);
              bad += tltest::mismatches(dropped, c.dense, where + " convert (drop zeros) to " + label<G>());
              if (!keep_padding && !tltest::no_padding<Source>) return;
              const auto kept = convert<G>(src);
              bad += tltest::mismatches(kept, c.dense, where + " convert to " + label<G>());
              if constexpr (tltest::no_padding<G>) {
                bad += count_check(tltest::components(dropped), nonzeros, where + " drop zeros " + label<G>());
                if constexpr (tltest::no_padding<Source>)
                  bad += count_check(tltest::components(kept), distinct, where + " convert to " + label<G>());
              }
            }(),
            ...);
      },
      Targets{});
  return bad;
}

bool next_shape(std::array<I, N>& dims, I max_dim) {
  for (std::size_t d = N; d-- > 0;) {
    if (++dims[d] <= max_dim) return true;
    dims[d] = 0;
  }
  return false;
}

}  // namespace

TEST(ConvertExhaustive, EveryShapeAndDensity) {
  std::mt19937_64 rng(12345);
  std::array<I, N> dims{};
  std::size_t cases = 0, bad = 0;
  do {
    const std::size_t total = dense_size(dims);
    for (std::size_t nnz = 0; nnz <= total; nnz += TL_DENSITY_STEP) {
      auto c = tltest::make_case<V, I, N>(dims, nnz, nnz / 3, rng);
      std::string where = "dims";
      for (auto d : dims) where += " " + std::to_string(d);
      where += " nnz " + std::to_string(nnz);
      bad += check_case(c, nnz, where);
      ++cases;
      if (bad > 10) FAIL() << "too many mismatches";
    }
  } while (next_shape(dims, TL_MAX_DIM));
  EXPECT_EQ(bad, 0u);
  RecordProperty("cases", static_cast<int>(cases));
}

TEST(ConvertRandom, About1e5Nonzeros) {
  std::mt19937_64 rng(777);
  // ~10^5 nonzeros at ~5-10% density; shapes non-square and not multiples of
  // the block sizes.
  constexpr std::array<I, 4> sizes[4] = {{I(1500001)}, {I(1201), I(1103)}, {I(101), I(97), I(103)},
                                         {I(31), I(29), I(23), I(37)}};
  std::array<I, N> dims{};
  for (std::size_t d = 0; d < N; ++d) dims[d] = sizes[N - 1][d];
  const std::size_t nnz = 100000;
  auto c = tltest::make_case<V, I, N>(dims, nnz, 5000, rng);
  EXPECT_EQ(check_case(c, nnz, "random 1e5", false), 0u);
}
