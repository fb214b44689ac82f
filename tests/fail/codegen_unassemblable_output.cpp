// EXPECT: the output's format cannot be assembled
// A result stored in a level with no assembly capability (a test-only
// level that can only be iterated) cannot be built; the twin writes CSR.
#include <string_view>
#include <vector>

#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
using namespace tensorlev::indices;
template <class I>
struct read_only_level {
  using index_type = I;
  static constexpr std::string_view name = "read-only";
  static constexpr bool is_full = false, is_ordered = true, is_unique = true, is_branchless = false,
                        is_compact = true;
  std::vector<I> pos{0, 0}, crd;
  I n = 0;
  I dimension() const { return n; }
  bounds<I> pos_bounds(I p) const { return {pos[p], pos[p + 1]}; }
  coordinate<I> pos_access(I p, ancestors<I>) const { return {crd[p], true}; }
};
struct read_only {
  template <class I>
  using level = read_only_level<I>;
  static constexpr std::string_view name = "read-only";
};
using read_only_rows = format<levels<dense<>, read_only>>;
int main() {
  auto A = pack<csr>(coordinate_list<double>({2, 2}));
#ifdef TL_SHOULD_FAIL
  tensor<double, read_only_rows> C({2, 2}, {dense_level<int>(2), read_only_level<int>{{0, 0, 0}, {}, 2}}, {});
#else
  auto C = pack<csr>(coordinate_list<double>({2, 2}));
#endif
  C(i, j) = A(i, j) * 2.0;
  return static_cast<int>(C.stored());
}
