// SpMV on a Matrix Market file, in a format chosen on the command line.
//
// The matrix is read into a coordinate list, packed once as COO (the file's
// own layout, used directly) and once into the chosen format (converted
// once). y = A x runs through the generated kernel for each; both results
// are checked against a plain loop over the coordinate list, and the times
// show when converting pays off.
//
//   spmv [matrix.mtx] [csr|csc|coo|dcsr|ell|dia] [products]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "tensorlev/codegen.hpp"
#include "tensorlev/formats.hpp"
#include "tensorlev/io/matrix_market.hpp"
#include "tensorlev/pack.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace {

using clock_type = std::chrono::steady_clock;
double ms_since(clock_type::time_point t) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t).count();
}

struct run_result {
  double convert_ms = 0, spmv_ms = 0, max_diff = 0;
};

// Packs `list` into F, then runs `products` SpMVs; compares y with ref.
template <class F>
run_result run(const coordinate_list<double, int>& list, const tensor<double, dense_vector>& x,
               const std::vector<double>& ref, int products) {
  run_result r;
  auto t0 = clock_type::now();
  const auto A = pack<F>(list);
  r.convert_ms = ms_since(t0);
  tensor<double, dense_vector> y({A.dimension(0)});
  t0 = clock_type::now();
  for (int p = 0; p < products; ++p) y(i) = A(i, j) * x(j);
  r.spmv_ms = ms_since(t0) / products;
  for (std::size_t q = 0; q < ref.size(); ++q) r.max_diff = std::max(r.max_diff, std::abs(y.values()[q] - ref[q]));
  return r;
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string path = argc > 1 ? argv[1] : "examples/data/jagmesh7.mtx";
  const std::string fmt = argc > 2 ? argv[2] : "csr";
  const int products = argc > 3 ? std::stoi(argv[3]) : 100;
  if (products < 1) throw error("spmv: the number of products must be positive");
  const auto list = io::read_matrix_market<double, int>(path);
  const int m = list.dims()[0], n = list.dims()[1];

  // x(j) = 1 + j / n; the reference is a plain loop over the entries.
  tensor<double, dense_vector> x({n});
  for (int c = 0; c < n; ++c) x.values()[static_cast<std::size_t>(c)] = 1.0 + static_cast<double>(c) / n;
  std::vector<double> ref(static_cast<std::size_t>(m), 0.0);
  for (std::size_t e = 0; e < list.size(); ++e) {
    const auto c = list.coords(e);
    ref[static_cast<std::size_t>(c[0])] += list.value(e) * x.values()[static_cast<std::size_t>(c[1])];
  }

  const run_result coo_run = run<coo>(list, x, ref, products);
  run_result chosen;
  if (fmt == "csr")
    chosen = run<csr>(list, x, ref, products);
  else if (fmt == "csc")
    chosen = run<csc>(list, x, ref, products);
  else if (fmt == "coo")
    chosen = run<coo>(list, x, ref, products);
  else if (fmt == "dcsr")
    chosen = run<dcsr>(list, x, ref, products);
  else if (fmt == "ell")
    chosen = run<ell>(list, x, ref, products);
  else if (fmt == "dia")
    chosen = run<dia>(list, x, ref, products);
  else
    throw error("spmv: unknown format '" + fmt + "' (csr, csc, coo, dcsr, ell, dia)");

  std::printf("%s: %d x %d, %zu entries; %d products\n", path.c_str(), m, n, list.size(), products);
  std::printf("  COO used directly:      pack %8.3f ms, SpMV %8.4f ms, max |y - ref| = %.2e\n", coo_run.convert_ms,
              coo_run.spmv_ms, coo_run.max_diff);
  std::printf("  converted once to %-4s: pack %8.3f ms, SpMV %8.4f ms, max |y - ref| = %.2e\n", fmt.c_str(),
              chosen.convert_ms, chosen.spmv_ms, chosen.max_diff);
  const double saved = coo_run.spmv_ms - chosen.spmv_ms;
  if (saved > 0)
    std::printf("  converting pays off after %.0f products\n", std::ceil(chosen.convert_ms / saved));
  else
    std::printf("  %s is not faster than COO here; keep COO\n", fmt.c_str());
  double scale = 1.0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  if (coo_run.max_diff > 1e-12 * scale || chosen.max_diff > 1e-12 * scale) {
    std::printf("results differ from the reference\n");
    return 1;
  }
  std::printf("results match the reference\n");
  return 0;
} catch (const std::exception& ex) {
  std::fprintf(stderr, "spmv: %s\n", ex.what());
  return 2;
}
