// A distributed dense vector over the ranks of MPI_COMM_WORLD from an
// installed tensorlev's dist component: distributed and gathered back.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include <tensorlev/dist.hpp>
#include <tensorlev/formats.hpp>
#include <tensorlev/tensorlev.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  using namespace tensorlev;
  namespace td = tensorlev::dist;
  bool ok = false;
  {
    td::machine_grid grid(MPI_COMM_WORLD, {0});
    tensor<double, dense_vector> all({7});
    for (std::size_t q = 0; q < 7; ++q) all.values()[q] = static_cast<double>(q + 1);
    td::distribution_map<td::distribution<"x->x">> map({7}, grid.extents());
    const auto x = td::distribute<dense_vector>(grid, map, grid.rank() == 0 ? &all : nullptr);
    const auto back = td::gather<dense_vector>(x);
    ok = grid.rank() != 0 || (back && to_dense(*back) == to_dense(all));
    if (grid.rank() == 0) std::printf("dist on %d ranks: %s\n", grid.size(), ok ? "ok" : "MISMATCH");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
