// The kernel matrix (storage_matrix.hpp) over owning, borrowed and owning
// int64-position / int32-coordinate storage; stored types checked where
// data enters.
#include <cstdint>
#include <type_traits>

#include "common.hpp"
#include "tensorlev/view.hpp"

namespace tlstorage {
using wide = tensorlev::owning<std::int64_t, std::int32_t>;
}
#define TL_STORAGE_SUITE Storage
#include "storage_matrix.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;
namespace tl = tensorlev;
using tlstorage::wide;

static_assert(std::is_same_v<std::tuple_element_t<1, tensor<double, csr, std::int64_t, wide>::level_tuple>::pos_array,
                             std::vector<std::int64_t>>);
static_assert(std::is_same_v<std::tuple_element_t<1, tensor<double, csr, std::int64_t, wide>::level_tuple>::crd_array,
                             std::vector<std::int32_t>>);

// Data entering a level is checked against its stored types: 40,000
// columns do not fit int16 coordinates; an int32-indexed copy of a view
// with 3e9-row offsets does not fit.
TEST(Storage, StoredTypesAreCheckedWhereDataEnters) {
  coordinate_list<double, int> list({2, 40000});
  list.push_back(std::array<int, 2>{1, 39999}, 1.0);
  using narrow = tl::owning<int, std::int16_t>;
  try {
    (void)tl::pack<csr, narrow>(list);
    ADD_FAILURE() << "an extent of 40000 was stored as int16";
  } catch (const tl::overflow_error& e) {
    EXPECT_EQ(std::string(e.what()), "compressed level: extent 40000 does not fit the stored type (16-bit signed)");
  }
  coordinate_list<double, int> ok({2, 30000});
  ok.push_back(std::array<int, 2>{1, 29999}, 1.0);
  const auto t = tl::pack<csr, narrow>(ok);
  EXPECT_EQ(t.level<1>().crd()[0], std::int16_t{29999});
  EXPECT_EQ(tl::to_dense(t)[static_cast<std::size_t>(30000 + 29999)], 1.0);
  // convert keeps the values, into another storage.
  const auto w = tl::convert<coo, wide>(tl::pack<csr>(ok));
  static_assert(std::is_same_v<std::remove_const_t<decltype(w)>, tensor<double, coo, int, wide>>);
  EXPECT_EQ(tl::to_dense(w), tl::to_dense(t));
}

}  // namespace
