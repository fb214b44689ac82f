// tensorlev flagship: one matrix, every matrix format.
//
// Reads a Matrix Market file, packs it into each format tensorlev composes
// from its six level types (seed 003, Figure 4), and reports for each the
// stored components, the bytes it holds and the time to pack it; then
// checks that converting every format back to CSR gives the same matrix.
//
//   flagship [matrix.mtx]
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <tuple>

#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/tensorlev.hpp"

using namespace tensorlev;

namespace {

/// Rows kept in hash maps: a format no fixed library offers, composed from
/// two level types in one line.
struct hash_rows : format<levels<dense<>, hashed<>>> {
  static constexpr std::string_view name = "hash rows";
};

using all_formats = std::tuple<csr, csc, coo, coo_aos, dcsr, ell, dia, bcsr<4>, csb<64>, hash_rows, dense_row_major>;

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "examples/data/jagmesh7.mtx";
  io::mm_header header;
  const auto list = io::read_matrix_market<double, int>(path, &header);
  const auto reference = pack<csr>(list);
  std::printf("%s: %d x %d, %s, %zu entries after expansion, %zu distinct\n\n", path.c_str(), list.dims()[0],
              list.dims()[1], io::to_string(header).c_str(), list.size(), reference.stored());
  std::printf("%-80s %10s %12s %10s  %s\n", "format", "stored", "bytes", "pack ms", "same as CSR");

  bool all_equal = true;
  std::apply(
      [&]<class... F>(F...) {
        (
            [&] {
              const auto t0 = std::chrono::steady_clock::now();
              const auto t = pack<F>(list);
              const auto t1 = std::chrono::steady_clock::now();
              const bool same = to_dense(convert<csr>(t)) == to_dense(reference);
              all_equal = all_equal && same;
              std::printf("%-80s %10zu %12zu %10.3f  %s\n", to_string<F>().c_str(), t.stored(), t.storage_bytes(),
                          std::chrono::duration<double, std::milli>(t1 - t0).count(), same ? "yes" : "NO");
            }(),
            ...);
      },
      all_formats{});

  // The first stored components of the CSR form, as tensorlev prints them.
  std::printf("\nfirst components of the CSR form:\n");
  int shown = 0;
  for_each_component(reference, [&](const auto& x, double v) {
    if (shown++ < 5) std::printf("  (%d,%d): %g\n", x[0], x[1], v);
  });
  std::printf("\n%s\n", all_equal ? "all formats hold the same matrix" : "MISMATCH between formats");
  return all_equal ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "flagship: %s\n", e.what());
  return 2;
}
