#include "tensorlev/io/frostt.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/tensorlev.hpp"

std::size_t stored_in_other_tu(const tensorlev::coordinate_list<double>& list) {
  return tensorlev::pack<tensorlev::csr>(list).stored();
}
