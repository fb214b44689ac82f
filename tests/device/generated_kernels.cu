// Compile-only check (no GPU here): generated kernels over tensor_views
// compile as CUDA device code with nvcc -std=c++20. Each __global__ runs
// one chunk of the generated loop nest per thread through the kernel's
// device entry (kernel::run_chunk); the views' level functions and the
// loop-nest functions are TENSORLEV_HOST_DEVICE. The state comes from the
// host (kernel::prepared_state over views of device arrays).
#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/view.hpp"

namespace tl = tensorlev;

template <class F>
using in = tl::tensor_view<const double, F>;
template <class F>
using out = tl::tensor_view<double, F>;

// y(i) = A(i,j) * x(j), A in F.
template <class F>
using spmv = tl::cg::kernel<tl::access<out<tl::dense_vector>, 'i'>,
                            tl::mul_expr<tl::access<const in<F>, 'i', 'j'>, tl::access<const in<tl::dense_vector>, 'j'>>,
                            false, 0>;
// A(i,r) = B(i,k,l) * C(k,r) * D(l,r), B in CSF.
using mttkrp = tl::cg::kernel<
    tl::access<out<tl::dense_row_major>, 'i', 'r'>,
    tl::mul_expr<tl::mul_expr<tl::access<const in<tl::csf>, 'i', 'k', 'l'>, tl::access<const in<tl::dense_row_major>, 'k', 'r'>>,
                 tl::access<const in<tl::dense_row_major>, 'l', 'r'>>,
    false, 0>;
// a = x(i) * A(i,j) * x(j): a scalar, one partial per chunk.
using quad = tl::cg::kernel<tl::access<tl::scalar<double>>,
                            tl::mul_expr<tl::mul_expr<tl::access<const in<tl::dense_vector>, 'i'>,
                                                      tl::access<const in<tl::csr>, 'i', 'j'>>,
                                         tl::access<const in<tl::dense_vector>, 'j'>>,
                            false, 0>;

static_assert(spmv<tl::csr>::par == tl::cg::par_kind::rows);
static_assert(spmv<tl::coo>::par == tl::cg::par_kind::rows);
static_assert(spmv<tl::dcsr>::par == tl::cg::par_kind::rows);
static_assert(mttkrp::par == tl::cg::par_kind::rows);
static_assert(quad::par == tl::cg::par_kind::scalar);

template <class K>
__global__ void run_chunks(typename K::state st, const int* bounds, int chunks) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c < chunks) (void)K::run_chunk(st, K::root_cursor(), bounds[c], bounds[c + 1]);
}

template <class K>
__global__ void run_partials(typename K::state st, const int* bounds, int chunks, double* partial) {
  const int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (c < chunks) partial[c] = K::run_chunk(st, K::root_cursor(), bounds[c], bounds[c + 1]);
}

// Instantiate the device code (launch sites are compiled, never run here).
void launch_all(typename spmv<tl::csr>::state a, typename spmv<tl::coo>::state b, typename spmv<tl::dcsr>::state c,
                typename mttkrp::state d, typename quad::state e, const int* bounds, int chunks, double* partial) {
  run_chunks<spmv<tl::csr>><<<(chunks + 127) / 128, 128>>>(a, bounds, chunks);
  run_chunks<spmv<tl::coo>><<<(chunks + 127) / 128, 128>>>(b, bounds, chunks);
  run_chunks<spmv<tl::dcsr>><<<(chunks + 127) / 128, 128>>>(c, bounds, chunks);
  run_chunks<mttkrp><<<(chunks + 127) / 128, 128>>>(d, bounds, chunks);
  run_partials<quad><<<(chunks + 127) / 128, 128>>>(e, bounds, chunks, partial);
}
