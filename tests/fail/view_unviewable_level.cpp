// EXPECT: tensorlev::tensor_view: a level of this format has no non-owning view yet
// A hashed level has no view; the twin views a CSR matrix.
#include "tensorlev/view.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/pack.hpp"
int main() {
  using namespace tensorlev;
#ifdef TL_SHOULD_FAIL
  const tensor<double, hash_vector> t = pack<hash_vector>(coordinate_list<double, int>({3}));
#else
  const tensor<double, csr> t = pack<csr>(coordinate_list<double, int>({3, 3}));
#endif
  const auto v = view(t);
  return v.stored() == 0 ? 0 : 1;
}
