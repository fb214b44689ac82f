// A KokkosSparse::CrsMatrix you already hold, used in place, and a tensorlev
// result handed back to Kokkos Kernels as a CrsMatrix, without copying
// either way. The matrix has Kokkos Kernels' default template arguments
// (size_t row offsets, int columns), so tensorlev computes in int64.
//
// Build (Debian's Kokkos Kernels; this folder's CMakeLists.txt):
//   apt-get install libtrilinos-kokkos-kernels-dev libtrilinos-kokkos-dev
//   cmake -S examples/interop_kokkos_kernels -B build-kk && cmake --build build-kk && build-kk/interop_kokkos_kernels
#include <Kokkos_Core.hpp>
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>

#include <cstdint>
#include <cstdio>

#include "tensorlev/interop/kokkos_kernels.hpp"
#include "tensorlev/kokkos.hpp"
#include "tensorlev/tensorlev.hpp"

using matrix = KokkosSparse::CrsMatrix<double, int, Kokkos::DefaultHostExecutionSpace>;

int run() {
  using namespace tensorlev::indices;
  namespace tl = tensorlev;
  // [ 1 . 2 ]
  // [ . . . ]
  // [ 3 4 . ]
  matrix::row_map_type::non_const_type rows("rows", 4);
  matrix::index_type cols("cols", 4);
  matrix::values_type vals("vals", 4);
  const std::size_t r[] = {0, 2, 2, 4};
  const int c[] = {0, 2, 0, 1};
  for (int p = 0; p < 4; ++p) rows(p) = r[p], cols(p) = c[p], vals(p) = p + 1;
  const matrix A("A", 3, 3, 4, vals, rows, cols);

  // A as a CSR tensor over A's own Views; x and y live in Views too.
  const auto Av = tl::kk_view(A);
  using vec = tl::tensor<double, tl::dense_vector, std::int64_t, tl::kokkos_storage<Kokkos::HostSpace>>;
  vec x({3}), y({3});
  x.values()[0] = 1, x.values()[1] = 10, x.values()[2] = 100;
  tl::compute(tl::kokkos_executor<>{}, y(i), Av(i, j) * x(j));

  // B = A A (SpGEMM) computed by tensorlev into Views of the matrix's offset and
  // column types, handed to Kokkos Kernels as a CrsMatrix, and multiplied.
  auto B = tl::pack<tl::csr, tl::kk_result_storage<matrix>>(tl::coordinate_list<double, std::int64_t>({3, 3}));
  B(i, j) = Av(i, k) * Av(k, j);
  const matrix Bk = tl::to_crs_matrix<matrix>(B, "B");
  Kokkos::View<double*, Kokkos::HostSpace> z("z", 3);
  KokkosSparse::spmv("N", 1.0, Bk, x.value_array().view(), 0.0, z);

  std::printf("y = A x       = %g %g %g (A read in place: %s)\n", y.values()[0], y.values()[1], y.values()[2],
              Av.level<1>().crd().data() == A.graph.entries.data() ? "yes" : "no");
  std::printf("z = A A x     = %g %g %g (Kokkos Kernels on tensorlev's arrays: %s)\n", z(0), z(1), z(2),
              Bk.values.data() == B.value_array().data() ? "yes" : "no");
  // A A = [7 8 2; . . .; 3 . 6]
  const bool ok = y.values()[0] == 201 && y.values()[1] == 0 && y.values()[2] == 43 &&  //
                  z(0) == 287 && z(1) == 0 && z(2) == 603;
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  return run();
}
