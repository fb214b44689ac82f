// Arrays you already hold, used in place: a CSR matrix in three vectors
// (64-bit row offsets, 32-bit columns, as many codes keep them), x and y as
// plain vectors. No copy is made; validate() checks the arrays' contents.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tensorlev/interop/raw.hpp"
#include "tensorlev/tensorlev.hpp"

int main() {
  using namespace tensorlev::indices;
  // [ 1 . 2 ]
  // [ . . . ]
  // [ 3 4 . ]
  const std::vector<std::int64_t> row_ptr{0, 2, 2, 4};
  const std::vector<int> col_idx{0, 2, 0, 1};
  const std::vector<double> vals{1, 2, 3, 4}, x{1, 10, 100};
  std::vector<double> y(3);

  const auto A = tensorlev::csr_view(3, 3, row_ptr, col_idx, vals);
  tensorlev::validate(A);  // sorted, unique, in range: or a shape_error naming the first violation
  auto yv = tensorlev::vector_view<std::int64_t>(3, y);
  yv(i) = A(i, j) * tensorlev::vector_view<std::int64_t>(3, x)(j);

  std::printf("y = %g %g %g (A's columns read in place: %s)\n", y[0], y[1], y[2],
              A.level<1>().crd().data() == col_idx.data() ? "yes" : "no");
  return y == std::vector<double>{201, 0, 43} ? 0 : 1;
}
