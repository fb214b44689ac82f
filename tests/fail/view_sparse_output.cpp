// EXPECT: tensorlev: a tensor_view output must be dense
// Results are written through a view in place, so a view output must have
// only dense levels; the twin writes a dense vector through a view.
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/pack.hpp"
#include "tensorlev/view.hpp"
int main() {
  using namespace tensorlev;
  using namespace tensorlev::indices;
  const tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({3, 3}));
  const auto Av = view(A);
#ifdef TL_SHOULD_FAIL
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({3, 3}));
  auto Cv = mutable_view(C);
  Cv(i, j) = Av(i, j) * 2.0;
#else
  tensor<double, dense_row_major> C({3, 3});
  auto Cv = mutable_view(C);
  Cv(i, j) = Av(i, j) * 2.0;
#endif
  return 0;
}
