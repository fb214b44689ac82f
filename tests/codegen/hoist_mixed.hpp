#pragma once
// test_codegen_hoist_mixed: one MTTKRP statement instantiated in two
// translation units, one with TENSORLEV_HOIST_SPECIALIZE on and one with it
// off (as a program mixing GCC- and clang-built files would). The kernels
// live in inline namespaces named after the setting (TENSORLEV_KERNEL_ABI,
// config.hpp), so the linker cannot hand the specialized hoisted sub-nest
// (which leaves its workspace unzeroed) the general loops that add into it,
// nor mix the two settings' plans of one COO statement (hoisted over runs
// of equal coordinates only where specialized: stmt::O). (The statement's
// assignment operator, outside the kernel, is one function for both files:
// which setting's kernel a statement runs in such a program is the
// linker's choice; each kernel is whole.) The helpers below are in an
// unnamed namespace: each file's own, naming its own kernel type.
#include "common.hpp"
#include <string>
#include <typeinfo>

namespace tltest::hoist_mixed {
using namespace tensorlev::indices;
using dense_t = tensor<double, dense_row_major>;
inline constexpr tensorlev::index_var<'r'> r{};

namespace {
template <class F>
void mttkrp(dense_t& A, const tensor<double, F>& B, const dense_t& C, const dense_t& D, bool add) {
  if (add)
    A(i, r) += B(i, k, l) * C(k, r) * D(l, r);
  else
    A(i, r) = B(i, k, l) * C(k, r) * D(l, r);
}

// The statement's kernel type, as this translation unit names it.
using kernel_t = tensorlev::cg::kernel<decltype(std::declval<dense_t&>()(i, r)),
                                       decltype(std::declval<const tensor<double, csf>&>()(i, k, l) *
                                                std::declval<const dense_t&>()(k, r) *
                                                std::declval<const dense_t&>()(l, r)),
                                       false, 0>;
std::string kernel_name() { return typeid(kernel_t).name(); }
}  // namespace

// In hoist_mixed_general.cpp (the setting off).
void mttkrp_general(dense_t& A, const tensor<double, csf>& B, const dense_t& C, const dense_t& D, bool add);
void mttkrp_general(dense_t& A, const tensor<double, coo_tensor<3>>& B, const dense_t& C, const dense_t& D, bool add);
std::string kernel_name_general();
}  // namespace tltest::hoist_mixed
