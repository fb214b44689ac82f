// The device form (kernel::run_device) on a launcher without Kokkos: every
// chunk runs on the calling thread, in a scrambled order (odd chunks
// backwards, then even ones), and the kernel reads its operands' views and
// expression from the launcher's copy of them. Runs under the sanitizers;
// tests/kokkos runs the same cases on Kokkos' spaces.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "tensorlev/codegen/device_form.hpp"

namespace tltest {
namespace {
class host_launcher {
 public:
  struct device_launcher_tag {};
  template <class S>
  static constexpr bool reaches = S::host_accessible;

  template <class T>
  const T* upload(const T& x) const {
    // A fresh buffer, so that the kernel reads the copy, not x.
    auto buf = std::make_unique_for_overwrite<std::max_align_t[]>((sizeof(T) + sizeof(std::max_align_t) - 1) /
                                                                   sizeof(std::max_align_t));
    std::memcpy(static_cast<void*>(buf.get()), &x, sizeof(T));
    kept_.push_back({std::move(buf), sizeof(T)});
    return reinterpret_cast<const T*>(kept_.back().first.get());
  }
  template <class F>
  void for_each(std::size_t n, const F& f) const {
    reads_uploaded(f);
    for (std::size_t c = n; c-- > 0;)
      if (c % 2 == 1) (void)f(c);
    for (std::size_t c = 0; c < n; c += 2) (void)f(c);
    launches_ += 1;
  }
  template <class V, class F>
  V sum(std::size_t n, const F& f) const {
    reads_uploaded(f);
    V s{};
    for (std::size_t c = n; c-- > 0;) s += f(c);
    launches_ += 1;
    return s;
  }
  static inline long launches_ = 0;

 private:
  // A loop nest's functor must reach its operands and expression through
  // the uploaded copy only (on a GPU, the host's objects are out of reach).
  template <class F>
  void reads_uploaded(const F& f) const {
    if constexpr (requires { f.st.ops; }) {
      std::apply([&](const auto*... p) { (in_upload(p), ...); }, f.st.ops);
      in_upload(f.st.expr);
    }
  }
  void in_upload(const void* p) const {
    const auto* b = static_cast<const char*>(p);
    for (const auto& [buf, size] : kept_) {
      const auto* lo = reinterpret_cast<const char*>(buf.get());
      if (b >= lo && b < lo + size) return;
    }
    ADD_FAILURE() << "the kernel's state points outside the launcher's copy of its operands";
  }
  mutable std::vector<std::pair<std::unique_ptr<std::max_align_t[]>, std::size_t>> kept_;
};
}  // namespace

template <class Out, class E>
void dev_compute(const Out& out, const E& e) {
  tensorlev::cg::run_device_form<false>(host_launcher{}, out, e);
}
template <class Out, class E>
void dev_compute_add(const Out& out, const E& e) {
  tensorlev::cg::run_device_form<true>(host_launcher{}, out, e);
}
template <class T>
T to_dev(const T& t) {
  return t;
}
template <class T>
T to_host(const T& t) {
  return t;
}
}  // namespace tltest

#include "device_cases.hpp"

TEST(DeviceForm, RunsThroughTheLauncher) {
  using namespace tensorlev::indices;
  tensorlev::tensor<double, tensorlev::dense_vector> x({5}), y({5});
  for (auto& v : x.values()) v = 3;
  const long before = tltest::host_launcher::launches_;
  tltest::dev_compute(y(i), x(i) * x(i));
  EXPECT_EQ(tltest::host_launcher::launches_ - before, 1);  // direct store: no zero-fill launch
  EXPECT_EQ(y.values()[4], 9.0);
}
