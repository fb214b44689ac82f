// Packs a small matrix into CSR and DIA from an installed tensorlev and
// checks both against the dense matrix; the header's version must be the
// package's (TL_PACKAGE_VERSION, from find_package or pkg-config).
#include <tensorlev/tensorlev.hpp>

#include <cstdio>
#include <string_view>

static_assert(TENSORLEV_VERSION == TENSORLEV_VERSION_MAJOR * 10000 + TENSORLEV_VERSION_MINOR * 100 + TENSORLEV_VERSION_PATCH);
#ifdef TL_PACKAGE_VERSION
static_assert(std::string_view(TENSORLEV_VERSION_STRING) == TL_PACKAGE_VERSION,
              "TENSORLEV_VERSION_STRING differs from the installed package's version");
#endif

int main() {
  using namespace tensorlev;
  coordinate_list<double> list({3, 3});
  list.push_back({0, 0}, 4.0);
  list.push_back({1, 2}, -1.0);
  list.push_back({2, 1}, 2.5);
  list.push_back({0, 0}, 1.0);  // duplicate: summed
  const std::vector<double> expected{5, 0, 0, 0, 0, -1, 0, 2.5, 0};
  const bool ok = to_dense(pack<csr>(list)) == expected && to_dense(pack<dia>(list)) == expected;
  std::printf("tensorlev %s, %s: %s\n", TENSORLEV_VERSION_STRING, to_string<csr>().c_str(), ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
