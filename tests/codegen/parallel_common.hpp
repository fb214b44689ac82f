// What the parallel cases (parallel_cases.hpp) and the files running them
// share: the executor under test, which each test binary defines
// (tltest::test_executor(), and tltest::chunks_run(): how many chunks it
// has run so far, or -1 when it does not count), and the comparison with
// serial results.
#pragma once

#include <algorithm>

#include "common.hpp"
#include "tensorlev/execution.hpp"

namespace tltest {
tensorlev::executor test_executor();
long chunks_run();
}  // namespace tltest

namespace {
using namespace tltest;
using namespace tensorlev::indices;
using tensorlev::compute;
using tensorlev::compute_add;
using tensorlev::splits_outer_loop_v;
constexpr tensorlev::index_var<'r'> r{};

// Mismatches against the serial result (count_mismatches, common.hpp).
template <class V>
std::size_t differ(std::span<const V> got, std::span<const V> serial, const std::string& what) {
  return count_mismatches<V>(got, std::vector<V>(serial.begin(), serial.end()), what + " (vs serial)");
}

}  // namespace
