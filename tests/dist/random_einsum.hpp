#pragma once
// Random einsum strings for the property tests of dist/einsum.hpp and
// dist/einsum_plan.hpp.
#include <cstddef>
#include <random>
#include <string>

namespace tensorlev_test {

// A random einsum: 1 to max_inputs inputs of 1-3 distinct letters each, an
// output drawn from the letters used (in order of first use, or shuffled).
inline std::string random_einsum(std::mt19937_64& rng, const std::string& letters, int max_inputs, bool shuffle) {
  const int n = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_inputs));
  std::string s, used;
  for (int k = 0; k < n; ++k) {
    if (k) s += ',';
    std::string op;
    const int order = 1 + static_cast<int>(rng() % 3);
    while (static_cast<int>(op.size()) < order) {
      const char c = letters[rng() % letters.size()];
      if (op.find(c) == std::string::npos) op += c;
    }
    s += op;
    for (char c : op)
      if (used.find(c) == std::string::npos) used += c;
  }
  std::string out;
  for (char c : used)
    if (rng() % 2) {
      if (shuffle)
        out.insert(out.begin() + static_cast<std::ptrdiff_t>(rng() % (out.size() + 1)), c);
      else
        out += c;
    }
  return s + "->" + out;
}

}  // namespace tensorlev_test
