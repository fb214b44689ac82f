// One program, two settings of TENSORLEV_HOIST_SPECIALIZE (hoist_mixed.hpp):
// this file has it on, hoist_mixed_general.cpp off; the same statements run
// from both files and match a dense reference, at ranks that take the
// constant widths (8, 16) and ones that do not (5), with B in CSF and in
// COO (whose plan differs between the settings).
#define TENSORLEV_HOIST_SPECIALIZE 1
#include "hoist_mixed.hpp"

namespace {
using namespace tltest;
using namespace tltest::hoist_mixed;

// The one statement's kernel is a different type under each setting (the
// inline namespace): the linker keeps both, whatever each file inlined.
TEST(HoistMixed, EachSettingNamesItsOwnKernel) {
  EXPECT_NE(kernel_name(), kernel_name_general());
  EXPECT_NE(kernel_name().find("hoist_specialized"), std::string::npos) << kernel_name();
  EXPECT_NE(kernel_name_general().find("hoist_general"), std::string::npos) << kernel_name_general();
}

template <class F>
std::size_t both_settings(std::mt19937_64& rng, std::size_t& cases) {
  std::size_t bad = 0;
  for (int R : {5, 8, 16})
    for (const std::array<int, 3> dims : {std::array<int, 3>{7, 6, 9}, std::array<int, 3>{3, 1, 4}}) {
        auto B = random_operand<F>(dims, 0.4, rng);
        auto C = random_operand<dense_row_major>(std::array<int, 2>{dims[1], R}, 1.0, rng);
        auto D = random_operand<dense_row_major>(std::array<int, 2>{dims[2], R}, 1.0, rng);
        std::vector<double> ref = mttkrp_reference(dims, R, B.d, C.d, D.d);
        const std::string tag = fname<F>() + " R " + std::to_string(R) + ", " + std::to_string(dims[0]) + "x" +
                                std::to_string(dims[1]) + "x" + std::to_string(dims[2]);
        for (const bool general : {false, true}) {
          dense_t A({dims[0], R});
          for (double& e : A.values()) e = 1e300;  // = overwrites
          const auto run = [&](bool add) {
            if (general)
              mttkrp_general(A, B.t, C.t, D.t, add);
            else
              mttkrp(A, B.t, C.t, D.t, add);
          };
          run(false);
          bad += count_mismatches<double>(A.values(), ref, (general ? "general = " : "specialized = ") + tag);
          run(true);
          std::vector<double> twice = ref;
          for (double& e : twice) e *= 2.0;
          bad += count_mismatches<double>(A.values(), twice, (general ? "general += " : "specialized += ") + tag);
        }
        ++cases;
      }
  return bad;
}

TEST(HoistMixed, BothSettingsInOneProgram) {
  std::mt19937_64 rng(97);
  std::size_t cases = 0;
  EXPECT_EQ(both_settings<csf>(rng, cases) + both_settings<coo_tensor<3>>(rng, cases), 0u);
  EXPECT_EQ(cases, 2u * 3u * 2u);
}

}  // namespace
