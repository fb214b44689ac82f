#pragma once
// Helpers shared by the IO tests: checking io_error messages, comparing
// coordinate lists bit for bit, temporary files.

#include <gtest/gtest.h>

#include <atomic>
#include <complex>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include <tensorlev/coordinate_list.hpp>
#include <tensorlev/error.hpp>
#include <tensorlev/io/io_error.hpp>

namespace tensorlev_test {

inline std::string data_file(const std::string& name) { return std::string(TENSORLEV_TEST_DATA_DIR) + "/" + name; }
inline std::string shared_data_file(const std::string& name) {
  return std::string(TENSORLEV_SHARED_DATA_DIR) + "/" + name;
}

/// Succeeds if `f()` throws tensorlev::io_error whose file() is `file`, line()
/// is `line`, and whose what() starts with "<file>:<line>: " (or "<file>: "
/// for line 0) and contains `phrase`.
template <class F>
::testing::AssertionResult throws_io_error(F&& f, const std::string& file, long line, const std::string& phrase) {
  try {
    f();
  } catch (const tensorlev::io_error& e) {
    const std::string what = e.what();
    const std::string where = line > 0 ? file + ":" + std::to_string(line) + ": " : file + ": ";
    if (what.rfind(where, 0) != 0)
      return ::testing::AssertionFailure() << "what() is \"" << what << "\", expected it to start with \"" << where
                                           << "\"";
    if (what.find(phrase) == std::string::npos)
      return ::testing::AssertionFailure() << "what() is \"" << what << "\", expected it to contain \"" << phrase
                                           << "\"";
    if (e.file() != file || e.line() != line)
      return ::testing::AssertionFailure() << "file()/line() are " << e.file() << "/" << e.line() << ", expected "
                                           << file << "/" << line;
    return ::testing::AssertionSuccess() << what;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << typeid(e).name() << " instead of io_error: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

/// Bitwise equality of two values (distinguishes -0.0 from 0.0).
template <class V>
bool same_bits(const V& a, const V& b) {
  return std::memcmp(&a, &b, sizeof(V)) == 0;
}

/// Same dims, same coordinates in the same order, bitwise-equal values.
template <class V, class I>
::testing::AssertionResult identical(const tensorlev::coordinate_list<V, I>& a,
                                     const tensorlev::coordinate_list<V, I>& b) {
  if (a.dims() != b.dims()) return ::testing::AssertionFailure() << "dims differ";
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "sizes differ: " << a.size() << " vs " << b.size();
  if (a.raw_coords() != b.raw_coords()) return ::testing::AssertionFailure() << "coordinates differ";
  for (std::size_t e = 0; e < a.size(); ++e)
    if (!same_bits(a.value(e), b.value(e)))
      return ::testing::AssertionFailure() << "value of entry " << e << " differs: " << a.value(e) << " vs "
                                           << b.value(e);
  return ::testing::AssertionSuccess();
}

/// Entries of an order-2 list as (row, col, value), in list order.
template <class V, class I>
std::vector<std::tuple<long long, long long, V>> entries2(const tensorlev::coordinate_list<V, I>& a) {
  std::vector<std::tuple<long long, long long, V>> r;
  for (std::size_t e = 0; e < a.size(); ++e) r.emplace_back(a.coords(e)[0], a.coords(e)[1], a.value(e));
  return r;
}

/// The value at (i, j) of an order-2 list; fails the test if absent or repeated.
template <class V, class I>
V at(const tensorlev::coordinate_list<V, I>& a, long long i, long long j) {
  std::size_t found = 0;
  V v{};
  for (std::size_t e = 0; e < a.size(); ++e)
    if (a.coords(e)[0] == i && a.coords(e)[1] == j) {
      ++found;
      v = a.value(e);
    }
  EXPECT_EQ(found, 1u) << "entry (" << i << ", " << j << ")";
  return v;
}

/// A fresh path in the temporary directory, removed when the object dies.
class temp_file {
 public:
  explicit temp_file(const std::string& suffix) {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string stem = std::string("tensorlev_io_") + (info ? info->test_suite_name() : "x") + "_" +
                       (info ? info->name() : "x") + "_" + std::to_string(counter++) + "_" +
                       std::to_string(std::random_device{}());
    path_ = (std::filesystem::temp_directory_path() / (stem + suffix)).string();
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tensorlev_test
