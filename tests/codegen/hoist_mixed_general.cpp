// The general half of test_codegen_hoist_mixed (hoist_mixed.cpp): the same
// MTTKRP statements compiled with TENSORLEV_HOIST_SPECIALIZE off, in one
// program with a translation unit that has it on.
#define TENSORLEV_HOIST_SPECIALIZE 0
#include "hoist_mixed.hpp"

namespace tltest::hoist_mixed {
void mttkrp_general(dense_t& A, const tensor<double, csf>& B, const dense_t& C, const dense_t& D, bool add) {
  mttkrp(A, B, C, D, add);
}
void mttkrp_general(dense_t& A, const tensor<double, coo_tensor<3>>& B, const dense_t& C, const dense_t& D, bool add) {
  mttkrp(A, B, C, D, add);
}
std::string kernel_name_general() { return kernel_name(); }
}  // namespace tltest::hoist_mixed
