#pragma once
/// @file codegen/device_form.hpp
/// A statement in its device form (kernel::run_device) on a device
/// launcher (execution.hpp): the statement's tensors become views over
/// their arrays (operands read-only; a dense output over its values, with
/// atomic adds allowed for scatter chunks; a sparse output is assembled
/// there and adopts the launcher's arrays), each checked to live in memory
/// the launcher reaches, and the statement runs through run_statement like
/// any other, with the launcher as its executor. tensorlev/kokkos.hpp runs
/// it on Kokkos execution spaces.

#include <type_traits>

#include "../storage.hpp"
#include "../view.hpp"
#include "kernel.hpp"

namespace tensorlev::cg {

template <class L, class T>
constexpr void check_reachable() {
  if constexpr (!detail::is_scalar_v<T>) {
    static_assert(L::template reaches<typename T::storage>,
                  "tensorlev: a tensor of this statement keeps its arrays in memory this execution space cannot "
                  "access: copy it there first (to_space<Space::memory_space>(t))");
  }
}

// Expression x with every tensor replaced by a read-only view of its
// arrays (kept in `keep`); scalars stay (the kernel copies them).
template <class L, class X>
auto device_operands(const X& x, scratch_copies& keep) {
  using NT = node_traits<X>;
  if constexpr (NT::kind == node_kind::access) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(x.operand())>>;
    check_reachable<L, T>();
    if constexpr (detail::is_scalar_v<T>) {
      return x;
    } else {
      using W = const typename T::value_type;
      const auto* v = keep.add(detail::borrow<W>(*x.operand(), x.operand()->values().data()));
      return rebind_access<X>::template to<const std::remove_cvref_t<decltype(*v)>>(v);
    }
  } else if constexpr (NT::kind == node_kind::constant) {
    return x;
  } else if constexpr (NT::kind == node_kind::neg) {
    auto e = device_operands<L>(x.e, keep);
    return neg_expr<decltype(e)>{e};
  } else {
    return binary_node<NT::kind>(device_operands<L>(x.l, keep), device_operands<L>(x.r, keep));
  }
}

// The output as a view of its values with atomic adds allowed (a dense
// tensor), or the scalar itself.
template <class L, class Out>
auto device_output(const Out& out, scratch_copies& keep) {
  using T = std::remove_pointer_t<decltype(out.operand())>;
  static_assert(!std::is_const_v<T>, "tensorlev: cannot assign to a const tensor");
  check_reachable<L, T>();
  if constexpr (detail::is_scalar_v<T>) {
    return out;
  } else {
    using F = typename T::format_type;
    using I = typename T::index_type;
    using V = typename T::element_type;
    if constexpr (detail::all_full_locatable<typename T::level_tuple>::value) {
      using VT = tensor<V, F, I, atomic_borrowed<typename T::storage::borrowed_type>>;
      const T& o = *out.operand();
      auto* v = const_cast<VT*>(keep.add(VT(o.dims(), o.levels(), std::span<V>(out.operand()->values()))));
      return rebind_access<Out>::template to<VT>(v);
    } else {
      // A sparse output is assembled where the launcher runs and adopts the
      // arrays it allocates (output/append.hpp).
      using A = decltype(std::declval<const L&>().template alloc<std::remove_const_t<V>>(0, false));
      static_assert(std::is_constructible_v<typename T::values_array, A>,
                    "tensorlev: a sparse output of the device form adopts arrays the execution space allocates: "
                    "keep it in that space's Kokkos Views (tensor<V, F, I, kokkos_storage<Space::memory_space>>, "
                    "e.g. to_space<Space::memory_space>(an empty tensor))");
      return out;
    }
  }
}

/// Runs `out = e` (`+=` when Accumulate) in the device form on launcher
/// dev, with the schedule's loop order and precompute.
template <bool Accumulate, class... Schedule, class L, class Out, class E>
void run_device_form(const L& dev, const Out& out, const E& e) {
  static_assert(device_launcher<L>);
  scratch_copies keep;
  const auto out_v = device_output<L>(out, keep);
  const auto e_v = device_operands<L>(e, keep);
  [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
    run_statement<std::remove_const_t<decltype(out_v)>, Accumulate, P, Order...>(out_v, e_v, dev);
  }(order_of<Schedule...>{}, precompute_of<Schedule...>{});
}

}  // namespace tensorlev::cg
