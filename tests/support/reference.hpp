#pragma once
// Test support: random coordinate lists, dense references, and comparisons.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tensorlev/tensorlev.hpp"

namespace tltest {

using namespace tensorlev;

/// An integer-valued (hence exactly summable) random value of type V.
template <class V>
V small_value(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> d(-9, 9);
  int a = d(rng);
  if (a == 0) a = 10;
  if constexpr (requires(V v) { v.imag(); }) {
    return V(a, d(rng));
  } else {
    return static_cast<V>(a);
  }
}

/// Row-major index of coordinates x in dims.
template <class I, std::size_t N>
std::size_t linear(const std::array<I, N>& dims, std::span<const I> x) {
  std::size_t idx = 0;
  for (std::size_t d = 0; d < N; ++d) idx = idx * static_cast<std::size_t>(dims[d]) + static_cast<std::size_t>(x[d]);
  return idx;
}

/// A random coordinate list with `nnz` distinct coordinates, plus `dups`
/// repeated ones (values split so that the sums stay exact), and its dense
/// row-major reference.
template <class V, class I, std::size_t N>
struct random_case {
  coordinate_list<V, I> list;
  std::vector<V> dense;
};

template <class V, class I, std::size_t N>
random_case<V, I, N> make_case(const std::array<I, N>& dims, std::size_t nnz, std::size_t dups,
                               std::mt19937_64& rng) {
  random_case<V, I, N> c{coordinate_list<V, I>(std::vector<I>(dims.begin(), dims.end())),
                         std::vector<V>(dense_size(dims), V{})};
  const std::size_t total = c.dense.size();
  // Choose nnz distinct linear indices (partial Fisher-Yates on small sizes,
  // rejection otherwise).
  std::vector<std::size_t> chosen;
  if (total <= 4 * nnz + 64) {
    std::vector<std::size_t> all(total);
    for (std::size_t i = 0; i < total; ++i) all[i] = i;
    for (std::size_t i = 0; i < nnz; ++i) {
      std::uniform_int_distribution<std::size_t> d(i, total - 1);
      std::swap(all[i], all[d(rng)]);
    }
    chosen.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(nnz));
  } else {
    std::vector<char> used(total, 0);
    std::uniform_int_distribution<std::size_t> d(0, total - 1);
    while (chosen.size() < nnz) {
      const std::size_t i = d(rng);
      if (!used[i]) used[i] = 1, chosen.push_back(i);
    }
  }
  auto coords_of = [&](std::size_t idx) {
    std::array<I, N> x{};
    for (std::size_t d = N; d-- > 0;) {
      x[d] = static_cast<I>(idx % static_cast<std::size_t>(dims[d]));
      idx /= static_cast<std::size_t>(dims[d]);
    }
    return x;
  };
  c.list.reserve(nnz + dups);
  for (std::size_t idx : chosen) {
    const V v = small_value<V>(rng);
    c.list.push_back(std::span<const I>(coords_of(idx)), v);
    c.dense[idx] += v;
  }
  for (std::size_t k = 0; k < dups && !chosen.empty(); ++k) {
    std::uniform_int_distribution<std::size_t> d(0, chosen.size() - 1);
    const std::size_t idx = chosen[d(rng)];
    const V v = small_value<V>(rng);
    c.list.push_back(std::span<const I>(coords_of(idx)), v);
    c.dense[idx] += v;
  }
  // Shuffle the entries so input order is random.
  coordinate_list<V, I> shuffled(std::vector<I>(dims.begin(), dims.end()));
  std::vector<std::size_t> order(c.list.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  shuffled.reserve(order.size());
  for (std::size_t i : order) shuffled.push_back(c.list.coords(i), c.list.value(i));
  c.list = std::move(shuffled);
  return c;
}

/// Compares a tensor component by component with a dense reference: every
/// stored component must lie inside the tensor and hold the reference value
/// (or zero, for padding), and the dense expansion must equal the reference.
/// Returns the number of mismatches and reports the first few.
template <class V, class F, class I>
std::size_t mismatches(const tensor<V, F, I>& t, const std::vector<V>& ref, const std::string& what) {
  std::size_t bad = 0;
  const auto dense = to_dense(t);
  if (dense.size() != ref.size()) {
    ADD_FAILURE() << what << ": dense size " << dense.size() << " vs reference " << ref.size();
    return 1;
  }
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (dense[i] != ref[i]) {
      if (bad < 3) ADD_FAILURE() << what << ": component " << i << " is " << dense[i] << ", expected " << ref[i];
      ++bad;
    }
  for_each_component(t, [&](const auto& x, const V& v) {
    const std::size_t idx = linear(t.dims(), std::span<const I>(x));
    if (!(v == ref[idx] || v == V{})) {
      if (bad < 3) ADD_FAILURE() << what << ": stored component " << idx << " holds " << v << ", expected " << ref[idx];
      ++bad;
    }
  });
  return bad;
}

/// Number of stored components a traversal visits.
template <class V, class F, class I>
std::size_t components(const tensor<V, F, I>& t) {
  std::size_t n = 0;
  for_each_component(t, [&](const auto&, const V&) { ++n; });
  return n;
}

}  // namespace tltest
