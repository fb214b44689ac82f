// The header compiles on its own (it is included first, before anything else),
// and links with the other translation units that include it.
#include <tensorlev/io/frostt.hpp>

#include <gtest/gtest.h>

#include <sstream>

TEST(FrosttHeader, CompilesAlone) {
  std::istringstream s("1 2 3 4.5\n");
  EXPECT_EQ(tensorlev::io::read_frostt<double>(s, "alone.tns").value(0), 4.5);
}
