// The device form (kernel::run_device) on a launcher without Kokkos: every
// chunk runs on the calling thread, in a scrambled order (odd chunks
// backwards, then even ones), and the kernel reads its operands' views and
// expression from the launcher's copy of them. Runs under the sanitizers;
// tests/kokkos runs the same cases on Kokkos' spaces.
#include <gtest/gtest.h>

#include <algorithm>
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
    if constexpr (requires { f.st.ops; }) widest_ = std::max(widest_, n);
  }
  template <class V, class F>
  V sum(std::size_t n, const F& f) const {
    reads_uploaded(f);
    V s{};
    for (std::size_t c = n; c-- > 0;) s += f(c);
    launches_ += 1;
    return s;
  }
  template <class T>
  std::vector<T> alloc(std::size_t n, bool zeroed) const {
    std::vector<T> a(n);
    // What was there before (a kernel must not read it): 0x5a bytes.
    static_assert(std::is_trivially_copyable_v<T>);
    if (!zeroed && n > 0) std::memset(static_cast<void*>(a.data()), 0x5a, n * sizeof(T));
    return a;
  }
  template <class T>
  std::uint64_t exclusive_scan(T* a, std::size_t n) const {
    std::uint64_t s = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const T v = a[k];
      a[k] = static_cast<T>(s);
      s += static_cast<std::uint64_t>(v);
    }
    launches_ += 1;
    return s;
  }
  static inline long launches_ = 0;
  static inline std::size_t widest_ = 0;  // the most chunks of a loop nest's launch

 private:
  // A loop nest's functor must reach its operands and expression through
  // the uploaded copy only (on a GPU, the host's objects are out of reach).
  template <class F>
  void reads_uploaded(const F& f) const {
    if constexpr (requires { f.st.ops; }) {
      // (A sparse output's tensor is not reached there: its pointer is null.)
      std::apply([&](const auto*... p) { ((p != nullptr ? in_upload(p) : void()), ...); }, f.st.ops);
      in_upload(f.st.expr);
      if constexpr (requires { f.st.out.levels; }) in_upload(f.st.out.levels);
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
// Owned host arrays that cannot grow, standing for device memory: the
// host assembles nothing into them, so sparse outputs are built by the
// launcher's count, scan and fill (into arrays from its alloc), as in
// kokkos_storage<Kokkos::CudaSpace>.
struct fixed_arrays : tensorlev::owning<> {
  static constexpr bool growable = false;
  static constexpr const char* name = "fixed";
};
static_assert(!tensorlev::growable_storage<fixed_arrays>);

template <class To, class V, class F, class I, class S>
auto in_storage(const tensorlev::tensor<V, F, I, S>& t) {
  using out = tensorlev::tensor<V, F, I, To>;
  using LT = typename out::level_tuple;
  return out(t.dims(),
             tensorlev::detail::rebind_levels<LT>(t.levels(), tensorlev::detail::copy_arrays{},
                                                  std::make_index_sequence<F::num_levels>{}),
             tensorlev::detail::copy_arrays{}.template make<typename out::values_array>(t.values()));
}
template <class T>
auto to_dev(const T& t) {
  return in_storage<fixed_arrays>(t);
}
template <class T>
T to_host(const T& t) {
  return t;
}
}  // namespace tltest

#include "device_cases.hpp"

#if !defined(TL_PART) || TL_PART == 0
TEST(DeviceForm, RunsThroughTheLauncher) {
  using namespace tensorlev::indices;
  tensorlev::tensor<double, tensorlev::dense_vector> x({5}), y({5});
  for (auto& v : x.values()) v = 3;
  const long before = tltest::host_launcher::launches_;
  tltest::dev_compute(y(i), x(i) * x(i));
  EXPECT_EQ(tltest::host_launcher::launches_ - before, 1);  // direct store: no zero-fill launch
  EXPECT_EQ(y.values()[4], 9.0);
}
#endif

// Non-growable arrays with 64-bit positions (32-bit coordinates), and with
// 16-bit positions.
struct fixed_wide : tensorlev::owning<std::int64_t, std::int32_t> {
  static constexpr bool growable = false;
};
struct fixed_short : tensorlev::owning<std::int16_t> {
  static constexpr bool growable = false;
};

#if !defined(TL_PART) || TL_PART == 1

// Positions of another width than the index type: 64-bit positions are
// converted from the scanned counts by one more launch; 16-bit positions
// cannot hold 40,000 entries, which is an overflow_error before the fill.
TEST(DeviceForm, SparseOutputPositionTypes) {
  using namespace tensorlev::indices;
  namespace tl = tensorlev;
  tl::coordinate_list<double, int> list({200, 200});
  for (int r = 0; r < 200; ++r)
    for (int c = 0; c < 200; ++c) list.push_back(std::array<int, 2>{r, c}, double((r + c) % 7));
  const auto A = tl::pack<tl::csr>(list);
  const auto empty = tl::pack<tl::csr>(tl::coordinate_list<double, int>({200, 200}));
  tl::tensor<double, tl::csr> C = empty;
  tl::compute(tl::serial, C(i, j), A(i, j) + 2.0 * A(i, j));
  const auto Ad = tltest::to_dev(A);

  auto Cw = tltest::in_storage<fixed_wide>(empty);
  tltest::dev_compute(Cw(i, j), Ad(i, j) + 2.0 * Ad(i, j));
  static_assert(std::is_same_v<std::remove_const_t<typename std::tuple_element_t<1, std::remove_cvref_t<decltype(Cw.levels())>>::pos_type>, std::int64_t>);
  // Cw's arrays equal C's (positions widened), and Cs cannot take e.
  auto Cs = tltest::in_storage<fixed_short>(empty);
  auto check = [&](auto&& dev_stmt, const std::string& what) {
    const auto& got = std::get<1>(Cw.levels());
    const auto& want = std::get<1>(C.levels());
    ASSERT_EQ(got.pos().size(), want.pos().size()) << what;
    for (std::size_t p = 0; p < want.pos().size(); ++p)
      EXPECT_EQ(got.pos()[p], std::int64_t{want.pos()[p]}) << what << ", position " << p;
    EXPECT_TRUE(std::ranges::equal(got.crd(), want.crd())) << what;
    EXPECT_TRUE(std::ranges::equal(Cw.values(), C.values())) << what;
    try {
      dev_stmt(Cs);
      ADD_FAILURE() << what << ": 40000 entries were stored with 16-bit positions";
    } catch (const tl::overflow_error& e) {
      EXPECT_EQ(std::string(e.what()),
                "tensorlev: the output's entries (40000) do not fit its index or position type (at most 32767)");
    }
    EXPECT_EQ(std::get<1>(Cs.levels()).pos().size(), 201u) << what;  // left as it was
  };
  check([&](auto& out) { tltest::dev_compute(out(i, j), Ad(i, j) + 2.0 * Ad(i, j)); }, "A + 2A");

  // SpGEMM (row accumulators) adopts its arrays the same way: A times a
  // permutation, 40000 products into 40000 entries (A A made 8 million
  // products, most of this test's time under the sanitizers).
  tl::coordinate_list<double, int> perm({200, 200});
  for (int r = 0; r < 200; ++r) perm.push_back(std::array<int, 2>{r, (7 * r + 3) % 200}, 1.0 + r % 3);
  const auto P = tl::pack<tl::csr>(perm);
  const auto Pd = tltest::to_dev(P);
  tl::compute(tl::serial, C(i, j), A(i, k) * P(k, j));
  tltest::dev_compute(Cw(i, j), Ad(i, k) * Pd(k, j));
  check([&](auto& out) { tltest::dev_compute(out(i, j), Ad(i, k) * Pd(k, j)); }, "A P");
}

#endif

#if !defined(TL_PART) || TL_PART == 2
// As SparseOutputPositionTypes (part 1), for order-3 outputs assembled per level (CSF, COO): 64-bit
// positions converted level by level, 16-bit positions refused with the
// level named (CSF's last level, COO's first: 48,000 positions), the output
// left as it was.
TEST(DeviceForm, Order3OutputPositionTypes) {
  using namespace tensorlev::indices;
  namespace tl = tensorlev;
  tl::coordinate_list<double, int> list({40, 40, 30});
  for (int a = 0; a < 40; ++a)
    for (int b = 0; b < 40; ++b)
      for (int c = 0; c < 30; ++c) list.push_back(std::array<int, 3>{a, b, c}, double((a + 2 * b + c) % 5 - 2));
  const auto empty = tl::coordinate_list<double, int>({40, 40, 30});
  auto run = [&]<class F>(std::type_identity<F>, std::size_t level) {
    const auto A = tl::pack<F>(list);
    const auto Ad = tltest::to_dev(A);
    tl::tensor<double, F> C = tl::pack<F>(empty);
    tl::compute(tl::serial, C(i, j, k), A(i, j, k) - 3.0 * A(i, j, k));
    auto Cw = tltest::in_storage<fixed_wide>(tl::pack<F>(empty));
    tltest::dev_compute(Cw(i, j, k), Ad(i, j, k) - 3.0 * Ad(i, j, k));
    const std::string what = tltest::fname<F>();
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (
          [&] {
            const auto& got = std::get<X>(Cw.levels());
            const auto& want = std::get<X>(C.levels());
            if constexpr (requires { want.pos(); }) {
              static_assert(std::is_same_v<std::remove_const_t<typename std::remove_cvref_t<decltype(got)>::pos_type>,
                                           std::int64_t>);
              ASSERT_EQ(got.pos().size(), want.pos().size()) << what << ", level " << X;
              for (std::size_t q = 0; q < want.pos().size(); ++q)
                EXPECT_EQ(got.pos()[q], std::int64_t{want.pos()[q]}) << what << ", level " << X << ", position " << q;
            }
            EXPECT_TRUE(std::ranges::equal(got.crd(), want.crd())) << what << ", level " << X;
          }(),
          ...);
    }(std::make_index_sequence<3>{});
    EXPECT_TRUE(std::ranges::equal(Cw.values(), C.values())) << what;
    auto Cs = tltest::in_storage<fixed_short>(tl::pack<F>(empty));
    try {
      tltest::dev_compute(Cs(i, j, k), Ad(i, j, k) - 3.0 * Ad(i, j, k));
      ADD_FAILURE() << what << ": 48000 entries were stored with 16-bit positions";
    } catch (const tl::overflow_error& e) {
      EXPECT_EQ(std::string(e.what()), "tensorlev: the output's level " + std::to_string(level) +
                                           " cannot hold 48000 positions in its position type (at most 32767)")
          << what;
    }
    EXPECT_EQ(Cs.stored(), 0u) << what;  // left as it was
  };
  run(std::type_identity<tl::csf>{}, 2);
  run(std::type_identity<tl::coo_tensor<3>>{}, 0);
}

// The loop nest of an order-3 sparse output runs in one chunk per value of
// the first mode (a GPU thread each), not on one thread.
TEST(DeviceForm, Order3OutputsRunInChunks) {
  using namespace tensorlev::indices;
  namespace tl = tensorlev;
  tl::coordinate_list<double, int> list({30, 4, 5});
  for (int a = 0; a < 30; a += 2) list.push_back(std::array<int, 3>{a, a % 4, a % 5}, 1.0);
  auto run = [&]<class F>(std::type_identity<F>) {
    const auto Ad = tltest::to_dev(tl::pack<tl::csf>(list));
    auto C = tltest::to_dev(tl::pack<F>(tl::coordinate_list<double, int>({30, 4, 5})));
    tltest::host_launcher::widest_ = 0;
    tltest::dev_compute(C(i, j, k), Ad(i, j, k) + Ad(i, j, k));
    EXPECT_EQ(tltest::host_launcher::widest_, 30u) << tltest::fname<F>();
    EXPECT_EQ(C.stored(), 15u) << tltest::fname<F>();
  };
  run(std::type_identity<tl::csf>{});
  run(std::type_identity<tl::coo_tensor<3>>{});
}

// SpMV over blocks of rows (SELL, grouped rows, BCSR) runs one chunk per
// block of rows (a GPU thread each, owning its rows), not one in all.
TEST(DeviceForm, BlocksOfRowsRunInChunks) {
  using namespace tensorlev::indices;
  namespace tl = tensorlev;
  tl::coordinate_list<double, int> list({30, 11});
  std::vector<double> want(30, 0.0);
  for (int a = 0; a < 30; ++a)
    for (int b = a % 3; b < 11; b += 4) {
      list.push_back(std::array<int, 2>{a, b}, a - b);
      want[static_cast<std::size_t>(a)] += (a - b) * (b + 1.0);
    }
  tl::tensor<double, tl::dense_vector> xh({11});
  for (int b = 0; b < 11; ++b) xh.values()[static_cast<std::size_t>(b)] = b + 1.0;
  const auto x = tltest::to_dev(xh);
  auto run = [&]<class F>(std::type_identity<F>, std::size_t blocks) {
    const auto Ad = tltest::to_dev(tl::pack<F>(list));
    auto y = tltest::to_dev(tl::tensor<double, tl::dense_vector>({30}));
    tltest::host_launcher::widest_ = 0;
    tltest::dev_compute(y(i), Ad(i, j) * x(j));
    EXPECT_EQ(tltest::host_launcher::widest_, blocks) << tltest::fname<F>();
    EXPECT_TRUE(std::equal(want.begin(), want.end(), y.values().begin())) << tltest::fname<F>();
  };
  run(std::type_identity<tl::sell<4>>{}, 8);
  run(std::type_identity<tl::grouped_rows<3>>{}, 10);
  run(std::type_identity<tl::bcsr<2>>{}, 15);
  // SELL-C-sigma over rows of 1-7 entries: a permutation that is not the
  // identity (checked), one chunk a slice.
  tl::coordinate_list<double, int> uneven({30, 11});
  std::vector<double> want2(30, 0.0);
  for (int a = 0; a < 30; ++a)
    for (int b = 0; b <= (a * 5) % 7; ++b) {
      uneven.push_back(std::array<int, 2>{a, b}, a + b);
      want2[static_cast<std::size_t>(a)] += (a + b) * (b + 1.0);
    }
  const auto As = tl::pack<tl::sell_sigma<4, 8>>(uneven);
  const auto& perm = As.level<2>().permutation();
  bool identity = true;
  for (std::size_t r = 0; r < perm.size(); ++r) identity = identity && perm[r] == static_cast<int>(r);
  EXPECT_FALSE(identity);
  const auto Asd = tltest::to_dev(As);
  auto y2 = tltest::to_dev(tl::tensor<double, tl::dense_vector>({30}));
  tltest::host_launcher::widest_ = 0;
  tltest::dev_compute(y2(i), Asd(i, j) * x(j));
  EXPECT_EQ(tltest::host_launcher::widest_, 8u);
  EXPECT_TRUE(std::equal(want2.begin(), want2.end(), y2.values().begin()));
}
#endif
