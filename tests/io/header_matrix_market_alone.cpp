// The header compiles on its own (it is included first, before anything else),
// and links with the other translation units that include it.
#include <tensorlev/io/matrix_market.hpp>

#include <gtest/gtest.h>

#include <sstream>

TEST(MatrixMarketHeader, CompilesAlone) {
  std::istringstream s("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n");
  EXPECT_EQ(tensorlev::io::read_matrix_market<double>(s, "alone.mtx").value(0), 2.0);
}
