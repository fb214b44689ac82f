// EXPECT: every level of the format must satisfy the tensorlev::level concept
// A level tag whose level type lacks the properties is rejected.
#include <string_view>

#include "tensorlev/tensorlev.hpp"
using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
struct no_props {
  template <class I>
  struct level {
    using index_type = I;
    I dimension() const { return 0; }
    bounds<I> pos_bounds(I p) const { return {p, p}; }
    coordinate<I> pos_access(I, ancestors<I>) const { return {0, true}; }
  };
  static constexpr std::string_view name = "no-props";
};
using fmt = format<levels<no_props>>;
#else
using fmt = format<levels<compressed<>>>;
#endif
int main() {
  coordinate_list<double> l({3});
  return static_cast<int>(pack<fmt>(l).stored());
}
