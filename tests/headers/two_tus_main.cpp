// Two translation units include everything and use the same instantiations;
// they must link (no ODR violations from non-inline definitions) and agree.
#include <cstdio>

#include "tensorlev/io/frostt.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/tensorlev.hpp"

std::size_t stored_in_other_tu(const tensorlev::coordinate_list<double>& list);

int main() {
  tensorlev::coordinate_list<double> list({4, 5});
  list.push_back({1, 2}, 3.0);
  list.push_back({3, 4}, 1.0);
  list.push_back({1, 2}, 1.0);
  const std::size_t here = tensorlev::pack<tensorlev::csr>(list).stored();
  const std::size_t there = stored_in_other_tu(list);
  if (here != there || here != 2) return 1;
  std::puts("two translation units agree");
  return 0;
}
