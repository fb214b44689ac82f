#pragma once
/// @file codegen/device_form.hpp
/// A statement in its device form (kernel::run_device) on a device
/// launcher (execution.hpp): the statement's tensors become views over
/// their arrays (operands read-only; a dense output over its values, with
/// atomic adds allowed for scatter chunks; a sparse output is assembled
/// there and adopts the launcher's arrays; DCSR and COO matrices are
/// assembled in CSR's shape and compacted), each checked to live in memory
/// the launcher reaches, and the statement runs through run_statement like
/// any other, with the launcher as its executor. tensorlev/kokkos.hpp runs
/// it on Kokkos execution spaces.

#include <cstdint>
#include <limits>
#include <tuple>
#include <type_traits>

#include "../formats.hpp"
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
  } else if constexpr (NT::kind == node_kind::fn) {
    auto e = device_operands<L>(x.e, keep);
    return fn_expr<typename NT::function, decltype(e)>{e};
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

// ---- matrices with compressed rows (DCSR) or a row per entry (COO) ---------
//
// The device form assembles these in CSR's shape (a dense level over the
// first mode, then a compressed level; same storage, same mode order) and
// compacts that where it lies: DCSR keeps the rows with entries (a scan of
// row flags places them), COO writes each entry's row. Entries, columns
// and values are CSR's arrays, adopted as they are.

// T's CSR-shaped twin: dense, then compressed, over the same modes; named
// csr or csc where the modes are theirs, so that the statement's kernel is
// the one a CSR (CSC) output instantiates already.
template <class M>
using csr_shaped_format =
    std::conditional_t<std::is_same_v<M, csr::map_type>, csr,
                       std::conditional_t<std::is_same_v<M, csc::map_type>, csc, format<levels<dense<>, compressed<>>, M>>>;
template <class T>
using csr_shaped_t = tensor<typename T::value_type, csr_shaped_format<typename T::format_type::map_type>,
                            typename T::index_type, typename T::storage>;

// Which compaction builds T's levels from its CSR-shaped twin, by the
// levels' capabilities and properties (never by format):
//  1 (DCSR-like): level 0 scanned, unique, not full (the stored rows),
//    level 1 scanned, unique and ordered (each row's columns, CSR's);
//  2 (COO-like): level 0 scanned, ordered, not unique (a row per entry),
//    level 1 branchless (one child at its parent's position) and made from
//    its coordinate array alone (CSR's columns);
//  0: neither.
// Level 1 must also adopt the twin's coordinate array (the same storage).
template <class L0, class L1, class Twin1>
constexpr int compaction_kind() {
  using I = typename L0::index_type;
  if constexpr (!scanned_level<L0> || L0::is_full) {
    return 0;
  } else if constexpr (L0::is_unique) {
    if constexpr (scanned_level<L1> && L1::is_unique && L1::is_ordered && !L1::is_full &&
                  std::constructible_from<L1, I, typename L1::pos_array, const typename Twin1::crd_array&>)
      return 1;
    else
      return 0;
  } else if constexpr (L0::is_ordered && branchless_level<L1> && requires { typename L1::crd_array; }) {
    if constexpr (std::constructible_from<L1, I, const typename Twin1::crd_array&>)
      return 2;
    else
      return 0;
  } else {
    return 0;
  }
}

template <class T>
constexpr int compaction_of() {
  if constexpr (detail::is_scalar_v<T>) {
    return 0;
  } else {
    using F = typename T::format_type;
    if constexpr (F::order != 2 || F::num_levels != 2)
      return 0;
    else
      return compaction_kind<std::tuple_element_t<0, typename T::level_tuple>,
                             std::tuple_element_t<1, typename T::level_tuple>,
                             std::tuple_element_t<1, typename csr_shaped_t<T>::level_tuple>>();
  }
}

// rank[i] = whether row i has entries (pos[i] < pos[i+1]).
template <class I, class P>
struct flag_rows_fn {
  I* rank;
  const P* pos;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t i) const { rank[i] = pos[i + 1] > pos[i] ? I(1) : I(0); }
};
// Row i with entries becomes stored row rank[i]; c == n closes the arrays.
template <class I, class P0, class C0, class P1>
struct place_rows_fn {
  C0* crd0;
  P0* pos0;
  P1* pos1;
  const I* rank;
  const P1* pos;
  std::size_t n;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t i) const {
    if (i == n) {
      pos1[static_cast<std::size_t>(rank[n])] = pos[n];
      pos0[0] = P0(0);
      pos0[1] = static_cast<P0>(rank[n]);
    } else if (pos[i + 1] > pos[i]) {
      crd0[static_cast<std::size_t>(rank[i])] = static_cast<C0>(i);
      pos1[static_cast<std::size_t>(rank[i])] = pos[i];
    }
  }
};
// Each entry of row i gets row coordinate i; c == n writes pos0 = {0, nnz}.
template <class P0, class C0, class P1>
struct entry_rows_fn {
  C0* crd0;
  P0* pos0;
  const P1* pos;
  std::size_t n;
  TENSORLEV_HOST_DEVICE void operator()(std::size_t i) const {
    if (i == n) {
      pos0[0] = P0(0);
      pos0[1] = static_cast<P0>(pos[n]);
      return;
    }
    for (P1 p = pos[i]; p < pos[i + 1]; ++p) crd0[static_cast<std::size_t>(p)] = static_cast<C0>(i);
  }
};

// T (DCSR- or COO-like) from its CSR-shaped twin tmp, on launcher dev.
template <class T, class Tmp, class L>
T compact_rows(const L& dev, const Tmp& tmp) {
  using F = typename T::format_type;
  using I = typename T::index_type;
  using L0 = std::tuple_element_t<0, typename T::level_tuple>;
  using L1 = std::tuple_element_t<1, typename T::level_tuple>;
  using P0 = std::remove_const_t<typename L0::pos_type>;
  using C0 = std::remove_const_t<typename L0::crd_type>;
  const auto& rows = std::get<1>(tmp.levels());
  using P1 = std::remove_const_t<typename std::remove_cvref_t<decltype(rows)>::pos_type>;
  const I extent0 = tmp.dims()[F::maps[0].dim];
  const I extent1 = tmp.dims()[F::maps[1].dim];
  tensorlev::detail::check_fits<C0>(extent0, "the output's first level: extent");
  const auto n = static_cast<std::size_t>(extent0);
  const P1* pos = rows.pos().data();
  const std::uint64_t nnz = tmp.stored();
  const auto fits_p0 = [](std::uint64_t v) {
    if (v > static_cast<std::uint64_t>(std::numeric_limits<P0>::max()))
      throw overflow_error(detail::message() << "tensorlev: the output's first level cannot hold " << v
                                             << " in its position type (at most "
                                             << static_cast<std::uint64_t>(std::numeric_limits<P0>::max()) << ")");
  };
  auto pos0 = dev.template alloc<P0>(2, false);
  if constexpr (compaction_of<T>() == 1) {
    auto rank = dev.template alloc<I>(n + 1, true);
    dev.for_each(n, flag_rows_fn<I, P1>{rank.data(), pos});
    const std::uint64_t stored_rows = dev.exclusive_scan(rank.data(), n + 1);
    fits_p0(stored_rows);
    auto crd0 = dev.template alloc<C0>(static_cast<std::size_t>(stored_rows), false);
    auto pos1 = dev.template alloc<P1>(static_cast<std::size_t>(stored_rows) + 1, false);
    dev.for_each(n + 1, place_rows_fn<I, P0, C0, P1>{crd0.data(), pos0.data(), pos1.data(), rank.data(), pos, n});
    L0 l0(extent0, typename L0::pos_array(std::move(pos0)), typename L0::crd_array(std::move(crd0)));
    L1 l1(extent1, typename L1::pos_array(std::move(pos1)), rows.crd());
    return T(tmp.dims(), typename T::level_tuple(std::move(l0), std::move(l1)), tmp.value_array());
  } else {
    fits_p0(nnz);
    auto crd0 = dev.template alloc<C0>(static_cast<std::size_t>(nnz), false);
    dev.for_each(n + 1, entry_rows_fn<P0, C0, P1>{crd0.data(), pos0.data(), pos, n});
    L0 l0(extent0, typename L0::pos_array(std::move(pos0)), typename L0::crd_array(std::move(crd0)));
    L1 l1(extent1, rows.crd());
    return T(tmp.dims(), typename T::level_tuple(std::move(l0), std::move(l1)), tmp.value_array());
  }
}

/// Runs `out = e` (`+=` when Accumulate) in the device form on launcher
/// dev, with the schedule's loop order and precompute.
template <bool Accumulate, class... Schedule, class L, class Out, class E>
void run_device_form(const L& dev, const Out& out, const E& e) {
  static_assert(device_launcher<L>);
  check_no_temporaries<Out, E>();  // before the operands become borrowed views
  using T = std::remove_pointer_t<decltype(out.operand())>;
  if constexpr (compaction_of<std::remove_const_t<T>>() != 0) {
    // DCSR, COO: assembled in CSR's shape, then compacted (above). out +=
    // e is tmp = old + e.
    using Tmp = csr_shaped_t<T>;
    T& o = *out.operand();
    using F = typename T::format_type;
    using I = typename T::index_type;
    Tmp tmp(o.dims(),
            typename Tmp::level_tuple(
                std::tuple_element_t<0, typename Tmp::level_tuple>(level_shape<I>{o.dims()[F::maps[0].dim], 0, 0, {}}),
                std::tuple_element_t<1, typename Tmp::level_tuple>(level_shape<I>{o.dims()[F::maps[1].dim], 0, 0, {}})),
            typename Tmp::values_array{});
    const auto tmp_out = rebind_access<Out>::to(&tmp);
    if constexpr (Accumulate) {
      const T old = o;
      const auto old_in = rebind_access<Out>::make(&old);
      run_device_form<false, Schedule...>(dev, tmp_out, add_expr<decltype(old_in), E>{old_in, e});
    } else {
      run_device_form<false, Schedule...>(dev, tmp_out, e);
    }
    o = compact_rows<T>(dev, tmp);
  } else {
    scratch_copies keep;
    const auto out_v = device_output<L>(out, keep);
    const auto e_v = device_operands<L>(e, keep);
    [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
      run_statement<std::remove_const_t<decltype(out_v)>, Accumulate, P, Order...>(out_v, e_v, dev);
    }(order_of<Schedule...>{}, precompute_of<Schedule...>{});
  }
}

}  // namespace tensorlev::cg
