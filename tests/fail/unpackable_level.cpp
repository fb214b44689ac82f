// EXPECT: tensorlev::pack: every level must be packable
// A level with iteration but no assembly capability cannot be packed.
#include <string_view>

#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
struct read_only_level {
  using index_type = int;
  static constexpr std::string_view name = "read-only";
  static constexpr bool is_full = true, is_ordered = true, is_unique = true, is_branchless = false, is_compact = true;
  explicit read_only_level(const level_shape<int>& s) : n(s.extent) {}
  int dimension() const { return n; }
  bounds<int> coord_bounds(ancestors<int>) const { return {0, n}; }
  located<int> coord_access(int p, ancestors<int>, int i) const { return {p * n + i, true}; }
  int n;
};
struct read_only {
  template <class I>
  using level = read_only_level;
  static constexpr std::string_view name = "read-only";
};
using fmt = format<levels<read_only>>;
#else
using fmt = format<levels<dense<>>>;
#endif
int main() {
  coordinate_list<double> l({3});
  l.push_back({1}, 2.0);
  return pack<fmt>(l).stored() == 3 ? 0 : 1;
}
