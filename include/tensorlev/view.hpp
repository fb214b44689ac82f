#pragma once
/// @file view.hpp
/// Views: tensors over arrays someone else owns (borrowed storage,
/// storage.hpp), and storage conversions.
///
///     tensorlev::tensor<double, csr> A = ...;
///     auto Av = tensorlev::view(A);          // tensor<const double, csr, int, borrowed<>>: no copy
///     auto yv = tensorlev::mutable_view(y);  // a dense output written in place
///     yv(i) = Av(i, j) * xv(j);
///     auto B = tensorlev::to_owning(Av);     // a deep copy with owned vectors
///
/// A view is a tensor like any other: generated kernels take it as an
/// operand, or as a dense output written in place (a sparse result is
/// assembled into an owning tensor). Every level type has a view, because
/// every level is defined once over any storage; a level of one's own gets
/// one by taking a storage parameter and a rebinding constructor (see
/// compressed_level). A view over borrowed arrays is trivially copyable and
/// its level functions are `TENSORLEV_HOST_DEVICE`, so it may be copied
/// into a device kernel's arguments.

#include <array>
#include <cstddef>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>

#include "coordinate_list.hpp"
#include "detail/message.hpp"
#include "error.hpp"
#include "format.hpp"
#include "levels/dense.hpp"
#include "storage.hpp"
#include "tensor.hpp"

namespace tensorlev {

namespace detail {
template <class To, class From, class How>
[[nodiscard]] To rebind_level(const From& l, const How& how) {
  if constexpr (std::is_same_v<To, From>)
    return l;  // a level that holds no arrays (dense)
  else
    return To(l, how);
}
template <class ToLevels, class FromLevels, class How, std::size_t... K>
[[nodiscard]] ToLevels rebind_levels(const FromLevels& lv, const How& how, std::index_sequence<K...>) {
  return ToLevels(rebind_level<std::tuple_element_t<K, ToLevels>>(std::get<K>(lv), how)...);
}

/// The number of components of a dense tensor with extents dims, checked
/// to fit index type I (overflow_error naming `what` otherwise): what every
/// dense view over someone else's array checks before taking its span.
template <class I, std::size_t N>
[[nodiscard]] long long dense_count(const std::array<I, N>& dims, const char* what) {
  long long total = 1;
  for (const I d : dims)
    if (__builtin_mul_overflow(total, static_cast<long long>(d), &total))
      throw overflow_error(message() << what << ": the product of the extents overflows");
  return checked_index<I>(total, what);
}

/// A tensor of the dense format F (every level dense) over values someone
/// else holds, in storage S: level k spans the extent of the dimension it
/// maps. The one construction behind every dense view (raw arrays, Eigen,
/// Kokkos Views, mdspan).
template <format_type F, class S = borrowed<>, class I, class V, std::size_t N>
[[nodiscard]] tensor<V, F, I, S> dense_over(const std::array<I, N>& dims, std::span<V> values) {
  static_assert(N == F::order, "tensorlev: dense_over: one extent per dimension");
  using T = tensor<V, F, I, S>;
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    return T(dims, typename T::level_tuple(dense_level<I>(dims[F::maps[K].dim])...), values);
  }(std::make_index_sequence<F::num_levels>{});
}

// Tensor t over borrowed storage, values of type W (const or not).
template <class W, class V, class F, class I, class S>
[[nodiscard]] auto borrow(const tensor<V, F, I, S>& t, W* values) {
  using out = tensor<W, F, I, typename S::borrowed_type>;
  using LT = typename out::level_tuple;
  return out(t.dims(), rebind_levels<LT>(t.levels(), borrow_arrays{}, std::make_index_sequence<F::num_levels>{}),
             typename out::values_array(values, t.stored()));
}
}  // namespace detail

/// A read-only view of t: its arrays borrowed, no copy.
template <class V, format_type F, index_type I, storage_policy S>
  requires S::host_accessible
[[nodiscard]] auto view(const tensor<V, F, I, S>& t) {
  return detail::borrow<const std::remove_const_t<V>>(t, t.values().data());
}
/// A view of t whose values kernels may write (as an output, t's format
/// must be dense: its components are written in place).
template <class V, format_type F, index_type I, storage_policy S>
  requires(S::host_accessible && !std::is_const_v<V>)
[[nodiscard]] auto mutable_view(tensor<V, F, I, S>& t) {
  return detail::borrow<V>(t, t.values().data());
}

/// A deep copy of t with owned vectors (storage S2, owning<> by default);
/// positions and coordinates are range-checked into S2's stored types.
template <storage_policy S2 = owning<>, class V, format_type F, index_type I, storage_policy S>
  requires(S::host_accessible && S2::growable)
[[nodiscard]] tensor<std::remove_const_t<V>, F, I, S2> to_owning(const tensor<V, F, I, S>& t) {
  using out = tensor<std::remove_const_t<V>, F, I, S2>;
  using LT = typename out::level_tuple;
  return out(t.dims(), detail::rebind_levels<LT>(t.levels(), detail::copy_arrays{}, std::make_index_sequence<F::num_levels>{}),
             detail::copy_arrays{}.template make<typename out::values_array>(t.values()));
}

}  // namespace tensorlev
