// The include check's second source (headers.kernel_include_path_sparse):
// sparse outputs and the code around kernels — pack, convert, validate,
// SpGEMM into CSR (assembled and numeric only), a sparse add into DCSR and
// into hashed rows, a COO and a CSF input — instantiate what they use
// without the standard headers that tl_spmv.cpp's check forbids. Compiled
// with -fsyntax-only; never run.
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

struct hashed_rows : format<levels<dense<>, hashed<>>> {};

void sparse_kernels(const coordinate_list<double, int>& list, const tensor<double, dense_vector>& x) {
  const auto A = pack<csr>(list);
  const auto B = convert<coo>(A);
  validate(B);
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({list.dims()[0], list.dims()[1]}));
  C(i, j) = A(i, k) * A(k, j);
  compute_numeric(C(i, j), A(i, k) * A(k, j));
  tensor<double, dcsr> D = pack<dcsr>(coordinate_list<double, int>({list.dims()[0], list.dims()[1]}));
  D(i, j) = A(i, j) + B(i, j);
  tensor<double, hashed_rows> H = pack<hashed_rows>(coordinate_list<double, int>({list.dims()[0], list.dims()[1]}));
  H(i, j) = A(i, j) - B(i, j);
  tensor<double, dense_vector> y = pack<dense_vector>(coordinate_list<double, int>({list.dims()[0]}));
  y(i) += B(i, j) * x(j);
}

void tensor_kernels(const coordinate_list<double, int>& list3, const tensor<double, dense_row_major>& M) {
  const auto T = pack<csf>(list3);
  tensor<double, dense_row_major> R = pack<dense_row_major>(coordinate_list<double, int>({list3.dims()[0], M.dims()[1]}));
  R(i, m) = T(i, k, l) * M(k, m) * M(l, m);
}
