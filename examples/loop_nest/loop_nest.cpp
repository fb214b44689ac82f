// Printing the loop nest a statement compiles to.
//
// loop_nest(out, expr, [order], [precompute(v)], names) renders, as
// pseudo-C, the loops the code generator emits for the operands' exact
// formats, with the level functions inlined (A2_pos[pA1], A2_crd[pA2], ...).
// Nothing is computed; the tensors only supply their types.
//
//   loop_nest
#include <cstdio>

#include "tensorlev/codegen.hpp"
#include "tensorlev/codegen/print.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

int main() {
  const coordinate_list<double, int> empty({4, 4});
  auto A = pack<csr>(empty);
  auto B = pack<coo>(empty);
  auto C = pack<csr>(empty);
  tensor<double, dense_vector> x({4}), y({4});
  tensor<double, dense_row_major> D({4, 4});

  std::printf("=== SpMV, A in CSR: y(i) = A(i,j) * x(j)\n%s\n",
              loop_nest(y(i), A(i, j) * x(j), {"y", "A", "x"}).c_str());
  std::printf("=== COO SpMV: one loop over the entries\n%s\n",
              loop_nest(y(i), B(i, j) * x(j), {"y", "B", "x"}).c_str());
  std::printf("=== CSR + COO into dense (seed 003, Figure 9): D(i,j) = A(i,j) + B(i,j)\n%s\n",
              loop_nest(D(i, j), A(i, j) + B(i, j), {"D", "A", "B"}).c_str());
  std::printf("=== SpGEMM into CSR (Gustavson workspace): C(i,j) = A(i,k) * A(k,j)\n%s\n",
              loop_nest(C(i, j), A(i, k) * A(k, j), {"C", "A", "A"}).c_str());
  std::printf("=== row-wise add, precomputed over j: C(i,j) = A(i,j) + B(i,j)\n%s\n",
              loop_nest(C(i, j), A(i, j) + B(i, j), precompute(j), {"C", "A", "B"}).c_str());
  return 0;
}
