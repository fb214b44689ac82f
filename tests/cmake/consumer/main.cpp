// Packs a small matrix into CSR and DIA from an installed tensorlev and
// checks both against the dense matrix.
#include <tensorlev/tensorlev.hpp>

#include <cstdio>

int main() {
  using namespace tensorlev;
  coordinate_list<double> list({3, 3});
  list.push_back({0, 0}, 4.0);
  list.push_back({1, 2}, -1.0);
  list.push_back({2, 1}, 2.5);
  list.push_back({0, 0}, 1.0);  // duplicate: summed
  const std::vector<double> expected{5, 0, 0, 0, 0, -1, 0, 2.5, 0};
  const bool ok = to_dense(pack<csr>(list)) == expected && to_dense(pack<dia>(list)) == expected;
  std::printf("%s: %s\n", to_string<csr>().c_str(), ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
