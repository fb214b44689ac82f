#pragma once
/// @file interop/kokkos_kernels.hpp
/// KokkosSparse::CrsMatrix in and out without copying (needs Kokkos Kernels
/// built against the Kokkos tensorlev::kokkos uses; the caller includes and
/// links it).
///
///     KokkosSparse::CrsMatrix<double, int, Kokkos::DefaultExecutionSpace> A = ...;  // default arguments
///     auto Av = tensorlev::kk_view(A);         // CSR over A's Views (size_type offsets, int columns)
///     y(i) = Av(i, j) * x(j);
///     auto B = tensorlev::to_crs_matrix<decltype(A)>(result);   // a CrsMatrix over result's Views
///
/// `kk_view` shares the matrix's Views (reference counted when they are
/// managed, so the view keeps them alive; a matrix over unmanaged Views
/// must outlive it); positions are its size_type (unsigned by default),
/// coordinates its ordinal_type, and the view computes in int64 unless both
/// are 32-bit signed. `to_crs_matrix` hands a CSR tensor stored in
/// `kokkos_storage<memory space, size_type, ordinal_type>` to a CrsMatrix:
/// the matrix holds the tensor's Views.

#include <KokkosSparse_CrsMatrix.hpp>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "../coordinate_list.hpp"
#include "../error.hpp"
#include "../formats.hpp"
#include "../kokkos.hpp"
#include "../storage.hpp"
#include "../tensor.hpp"

namespace tensorlev {

/// The storage of a view of CrsMatrix type M: its memory space, const
/// size_type positions and const ordinal_type coordinates.
template <class M>
using kk_view_storage = kokkos_storage<typename M::memory_space, const typename M::size_type,
                                       const typename M::ordinal_type>;
/// The storage a tensorlev result needs to become a CrsMatrix of type M.
template <class M>
using kk_result_storage = kokkos_storage<typename M::memory_space, typename M::size_type, typename M::ordinal_type>;

/// A CSR tensor over a CrsMatrix's Views (no copy), read-only.
template <class M>
[[nodiscard]] auto kk_view(const M& a) {
  using P = typename M::size_type;
  using C = typename M::ordinal_type;
  using I = detail::view_index_t<std::remove_const_t<P>, std::remove_const_t<C>>;
  using S = kk_view_storage<M>;
  using V = const typename M::non_const_value_type;
  using T = tensor<V, csr, I, S>;
  using LT = typename T::level_tuple;
  using comp = std::tuple_element_t<1, LT>;
  const I m = checked_index<I>(static_cast<long long>(a.numRows()), "tensorlev::kk_view: rows");
  const I n = checked_index<I>(static_cast<long long>(a.numCols()), "tensorlev::kk_view: columns");
  (void)checked_index<I>(static_cast<long long>(a.nnz()), "tensorlev::kk_view: number of entries");
  typename comp::pos_array rows(a.graph.row_map);
  if (a.graph.row_map.extent(0) == 0 && m == 0) {
    // A default-constructed matrix has an empty row map; CSR of 0 rows
    // has one offset (a View of one zero, in the matrix's memory space).
    rows = typename comp::pos_array(
        Kokkos::View<std::remove_const_t<P>*, typename M::memory_space>("tensorlev::kk_view offsets", 1));
  } else if (a.graph.row_map.extent(0) != static_cast<std::size_t>(m) + 1) {
    throw shape_error("tensorlev::kk_view: the row map has " + std::to_string(a.graph.row_map.extent(0)) +
                      " entries, expected " + std::to_string(static_cast<std::size_t>(m) + 1));
  }
  return T({m, n}, LT(dense_level<I>(m), comp(n, std::move(rows), typename comp::crd_array(a.graph.entries))),
           typename T::values_array(a.values));
}

/// A CrsMatrix of type M over a CSR tensor's Views (no copy): the tensor
/// must be stored as `kk_result_storage<M>`, with index type I.
template <class M, class V, class I>
[[nodiscard]] M to_crs_matrix(const tensor<V, csr, I, kk_result_storage<M>>& t, const std::string& label = "tensorlev") {
  const auto& l = t.template level<1>();
  using O = typename M::ordinal_type;
  const O m = checked_index<O>(static_cast<long long>(t.dims()[0]), "tensorlev::to_crs_matrix: rows");
  const O n = checked_index<O>(static_cast<long long>(t.dims()[1]), "tensorlev::to_crs_matrix: columns");
  return M(label, m, n, static_cast<typename M::size_type>(l.crd().size()), t.value_array().view(), l.pos().view(),
           l.crd().view());
}

}  // namespace tensorlev
