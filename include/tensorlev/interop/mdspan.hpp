#pragma once
/// @file interop/mdspan.hpp
/// An mdspan as a dense operand without copying: any implementation of the
/// C++23 interface (std::mdspan where the standard library has it,
/// Kokkos::mdspan of Kokkos 4, the reference implementation), of rank 1 or
/// 2, with the default accessor and a layout that is row- or column-major
/// and exhaustive (layout_right, layout_left):
///
///     std::mdspan<const double, std::dextents<int, 2>> B(data, n, r);
///     C(i, k) = A(i, j) * tensorlev::mdspan_view(B)(j, k);   // SpMM, B in place
///
/// Rank 2 gives dense_row_major (layout_right) or dense_col_major
/// (layout_left), rank 1 a dense_vector; a const element type gives a
/// read-only operand, a non-const one may be an output. Which order a
/// layout has is read from its own mapping at compile time, so no
/// implementation's names are needed; layout_stride and custom accessors
/// are refused at compile time. Index type I must hold the extents and
/// their product.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>

#include "../error.hpp"
#include "../formats.hpp"
#include "../storage.hpp"
#include "../tensor.hpp"
#include "../view.hpp"

namespace tensorlev {

namespace detail {
template <class M>
concept mdspan_like = requires(const M& m) {
  typename M::extents_type;
  typename M::layout_type;
  typename M::accessor_type;
  typename M::element_type;
  { m.data_handle() };
  { m.extent(0) };
  { M::rank() } -> std::convertible_to<std::size_t>;
};

// Extents of type E with every dynamic extent set to 2 (rank 1) or to 2
// and 3 (rank 2): enough to tell a row-major mapping from a column-major one.
template <class E>
constexpr E probe_extents() {
  constexpr std::size_t dyn = std::numeric_limits<std::size_t>::max();
  if constexpr (E::rank_dynamic() == 0) {
    return E{};
  } else if constexpr (E::rank_dynamic() == 1) {
    return E(E::rank() == 2 && E::static_extent(0) != dyn ? 3 : 2);
  } else {
    return E(2, 3);
  }
}

// 1: row-major, 2: column-major (either, for extents where both coincide),
// 0: neither or not decidable (layout_stride needs strides to be built).
template <class M>
constexpr int mdspan_order() {
  using E = typename M::extents_type;
  using L = typename M::layout_type;
  if constexpr (!requires { typename L::template mapping<E>; }) {
    return 0;
  } else {
    using map_t = typename L::template mapping<E>;
    if constexpr (!std::is_constructible_v<map_t, E>) {
      return 0;
    } else if constexpr (!map_t::is_always_exhaustive() || !map_t::is_always_unique()) {
      return 0;
    } else if constexpr (E::rank() == 1) {
      return 1;
    } else {
      constexpr map_t mp(probe_extents<E>());
      if constexpr (mp.stride(1) == 1) return 1;
      if constexpr (mp.stride(0) == 1) return 2;
      return 0;
    }
  }
}
}  // namespace detail

/// A dense tensor over an mdspan's elements (no copy).
template <index_type Ix = std::int32_t, detail::mdspan_like M>
[[nodiscard]] auto mdspan_view(const M& md) {
  constexpr std::size_t R = M::rank();
  static_assert(R == 1 || R == 2, "tensorlev::mdspan_view: the mdspan must have rank 1 or 2");
  // A pointer handle and plain references: an accessor that scales,
  // converts or wraps elements (std::linalg's scaled_accessor) would be
  // silently bypassed by reading the pointer.
  static_assert(std::is_pointer_v<typename M::data_handle_type> &&
                    std::is_same_v<std::remove_pointer_t<typename M::data_handle_type>, typename M::element_type> &&
                    std::is_same_v<typename M::reference, typename M::element_type&>,
                "tensorlev::mdspan_view: the mdspan must use the default accessor (its data handle a pointer to its "
                "elements)");
  constexpr int order = R == 1 || R == 2 ? detail::mdspan_order<M>() : 1;
  static_assert(order != 0,
                "tensorlev::mdspan_view: the mdspan's layout must be row- or column-major and exhaustive "
                "(layout_right or layout_left); copy a strided mdspan into one first");
  using V = typename M::element_type;
  std::array<Ix, R> dims{};
  for (std::size_t r = 0; r < R; ++r)
    dims[r] = checked_index<Ix>(static_cast<long long>(md.extent(r)), "tensorlev::mdspan_view: extent");
  const long long total = detail::dense_count(dims, "tensorlev::mdspan_view: number of elements");
  const std::span<V> values(md.data_handle(), static_cast<std::size_t>(total));
  using F = std::conditional_t<R == 1, dense_vector, std::conditional_t<order == 1, dense_row_major, dense_col_major>>;
  return detail::dense_over<F>(dims, values);
}

}  // namespace tensorlev
