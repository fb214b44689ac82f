#pragma once
/// @file interop/eigen.hpp
/// Eigen in and out without copying (needs Eigen 3.4; the caller includes
/// and links it).
///
///     Eigen::SparseMatrix<double, Eigen::RowMajor> A = ...;   // compressed
///     Eigen::MatrixXd B = ..., C(m, k);
///     auto Av = tensorlev::eigen_view(A);    // CSR over A's arrays
///     auto Cv = tensorlev::eigen_view(C);    // dense, column-major, writable
///     Cv(i, k) = Av(i, j) * tensorlev::eigen_view(B)(j, k);
///     auto M = tensorlev::eigen_map(result); // a CSR tensor as Eigen::Map<const SparseMatrix<...>>
///
/// `eigen_view` takes a compressed sparse matrix (`SparseMatrix` or
/// `Map<SparseMatrix>`: row-major gives CSR, column-major CSC, with
/// Eigen's StorageIndex as positions and coordinates) or a contiguous dense
/// matrix or vector (`Matrix`, `Map`, `Ref`, `Block`s that are contiguous:
/// row- or column-major dense tensor, or a dense vector);
/// `eigen_strided_view` takes a dense matrix whose columns (rows) are a
/// stride apart (a Block, a Map with an OuterStride) as a strided one. Dense views of
/// non-const objects may be kernel outputs. `eigen_map` hands a tensorlev
/// result back: CSR or CSC as a `Map<const SparseMatrix>`, dense row- or
/// column-major as a `Map<Matrix>`, over the tensor's arrays (which must
/// outlive the map).

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>

#include "../error.hpp"
#include "../formats.hpp"
#include "raw.hpp"
#include "../storage.hpp"
#include "../tensor.hpp"
#include "../view.hpp"

namespace tensorlev {

namespace detail {
template <class D>
concept eigen_sparse_compressed = std::is_base_of_v<Eigen::SparseCompressedBase<D>, D>;
template <class D>
concept eigen_dense_direct = std::is_base_of_v<Eigen::DenseBase<D>, D> && requires(const D& x) {
  x.data();
  x.innerStride();
  x.outerStride();
};
}  // namespace detail

/// A compressed Eigen sparse matrix as CSR (row-major) or CSC
/// (column-major), read-only, over its arrays. @throws shape_error if the
/// matrix is not compressed (call makeCompressed() first).
template <class D>
  requires detail::eigen_sparse_compressed<std::remove_cvref_t<D>>
[[nodiscard]] auto eigen_view(D&& a) {
  using M = std::remove_cvref_t<D>;
  using V = const typename M::Scalar;
  using SI = std::remove_const_t<typename M::StorageIndex>;
  static_assert(index_type<SI>, "tensorlev::eigen_view: Eigen's StorageIndex must be a signed integer of at least "
                                "32 bits (int or std::int64_t) to be an index type");
  using F = std::conditional_t<M::IsRowMajor, csr, csc>;
  using T = tensor<V, F, SI, borrowed<>>;
  using LT = typename T::level_tuple;
  using comp = std::tuple_element_t<1, LT>;
  if (!a.isCompressed())
    throw shape_error("tensorlev::eigen_view: the sparse matrix is not compressed (uncompressed mode has gaps "
                      "between inner vectors): call makeCompressed() first");
  const auto outer = static_cast<SI>(a.outerSize()), inner = static_cast<SI>(a.innerSize());
  const auto nnz = static_cast<std::size_t>(a.nonZeros());
  const SI* pos = a.outerIndexPtr();
  const SI* crd = a.innerIndexPtr();
  return T({static_cast<SI>(a.rows()), static_cast<SI>(a.cols())},
           LT(dense_level<SI>(outer), comp(inner, {pos, static_cast<std::size_t>(outer) + 1}, {crd, nnz})),
           std::span<V>(a.valuePtr(), nnz));
}

/// A contiguous Eigen dense matrix or vector as a dense tensor over its
/// coefficients (writable unless D is const), with index type I.
/// @throws shape_error if it is not contiguous (a stride other than the
/// inner size), overflow_error if an extent does not fit I.
template <index_type I = std::int32_t, class D>
  requires detail::eigen_dense_direct<std::remove_cvref_t<D>>
[[nodiscard]] auto eigen_view(D&& a) {
  using M = std::remove_cvref_t<D>;
  constexpr bool read_only = std::is_const_v<std::remove_reference_t<D>> ||
                             std::is_const_v<std::remove_pointer_t<decltype(a.data())>>;
  using V = std::conditional_t<read_only, const typename M::Scalar, typename M::Scalar>;
  const I m = checked_index<I>(static_cast<long long>(a.rows()), "tensorlev::eigen_view: rows");
  const I n = checked_index<I>(static_cast<long long>(a.cols()), "tensorlev::eigen_view: columns");
  const auto size = static_cast<std::size_t>(a.size());
  if constexpr (M::ColsAtCompileTime == 1 || M::RowsAtCompileTime == 1) {
    if (size > 1 && a.innerStride() != 1)
      throw shape_error("tensorlev::eigen_view: the vector's coefficients are not contiguous (inner stride " +
                        std::to_string(a.innerStride()) + ")");
    return detail::dense_over<dense_vector>(std::array<I, 1>{M::ColsAtCompileTime == 1 ? m : n},
                                            std::span<V>(a.data(), size));
  } else {
    (void)detail::dense_count(std::array<I, 2>{m, n}, "tensorlev::eigen_view: rows * columns");
    const auto inner = M::IsRowMajor ? a.cols() : a.rows();
    if (size > 0 && (a.innerStride() != 1 || (a.outerSize() > 1 && a.outerStride() != inner)))
      throw shape_error("tensorlev::eigen_view: the matrix's coefficients are not contiguous (inner stride " +
                        std::to_string(a.innerStride()) + ", outer stride " + std::to_string(a.outerStride()) +
                        " for an inner size of " + std::to_string(inner) + ")");
    using F = std::conditional_t<M::IsRowMajor, dense_row_major, dense_col_major>;
    return detail::dense_over<F>(std::array<I, 2>{m, n}, std::span<V>(a.data(), size));
  }
}

/// An Eigen dense matrix whose columns (rows, if row-major) are
/// outerStride() apart (a Block of a larger matrix, a Map with an
/// OuterStride, a Ref) as a strided dense tensor over its coefficients
/// (strided_col_major or strided_row_major; writable unless D is const),
/// with index type I: the coefficients between the columns are neither
/// read nor written.
/// @throws shape_error if its inner stride is not 1, overflow_error if an
/// extent or the span does not fit I.
template <index_type I = std::int32_t, class D>
  requires(detail::eigen_dense_direct<std::remove_cvref_t<D>> &&
           std::remove_cvref_t<D>::ColsAtCompileTime != 1 && std::remove_cvref_t<D>::RowsAtCompileTime != 1)
[[nodiscard]] auto eigen_strided_view(D&& a) {
  using M = std::remove_cvref_t<D>;
  constexpr bool read_only = std::is_const_v<std::remove_reference_t<D>> ||
                             std::is_const_v<std::remove_pointer_t<decltype(a.data())>>;
  using V = std::conditional_t<read_only, const typename M::Scalar, typename M::Scalar>;
  const long long inner = M::IsRowMajor ? a.cols() : a.rows();
  if (inner > 1 && a.outerSize() > 0 && a.innerStride() != 1)
    throw shape_error("tensorlev::eigen_strided_view: the inner stride is " + std::to_string(a.innerStride()) +
                      " (needs 1)");
  constexpr dense_layout L = M::IsRowMajor ? dense_layout::row_major : dense_layout::col_major;
  // An outer size of at most 1 may report any outer stride: the inner size then.
  const long long ld = a.outerSize() > 1 ? static_cast<long long>(a.outerStride()) : inner;
  V* p = a.data();
  return dense_view<L, I>(a.rows(), a.cols(), ld, p);
}

/// A CSR or CSC tensor as an Eigen::Map<const SparseMatrix> over its arrays
/// (row-major for CSR, column-major for CSC; StorageIndex = I). Its levels
/// must store positions and coordinates as I (owning<> or borrowed<>).
template <class V, class F, class I, class S>
  requires(std::is_same_v<F, csr> || std::is_same_v<F, csc>)
[[nodiscard]] auto eigen_map(const tensor<V, F, I, S>& t) {
  using comp = std::tuple_element_t<1, typename tensor<V, F, I, S>::level_tuple>;
  static_assert(std::is_same_v<std::remove_const_t<typename comp::pos_type>, I> &&
                    std::is_same_v<std::remove_const_t<typename comp::crd_type>, I>,
                "tensorlev::eigen_map: Eigen keeps positions and coordinates in one StorageIndex: the tensor must "
                "store both as its index type");
  using M = Eigen::SparseMatrix<std::remove_const_t<V>, std::is_same_v<F, csr> ? Eigen::RowMajor : Eigen::ColMajor, I>;
  const auto& l = t.template level<1>();
  return Eigen::Map<const M>(t.dims()[0], t.dims()[1], static_cast<I>(l.crd().size()), l.pos().data(),
                             l.crd().data(), t.values().data());
}

/// A dense row- or column-major tensor (or vector) as an Eigen::Map of a
/// dynamic matrix over its values: writable for a non-const owning tensor.
template <class T>
  requires(std::is_same_v<typename std::remove_cvref_t<T>::format_type, dense_row_major> ||
           std::is_same_v<typename std::remove_cvref_t<T>::format_type, dense_col_major> ||
           std::is_same_v<typename std::remove_cvref_t<T>::format_type, dense_vector>)
[[nodiscard]] auto eigen_map(T&& t) {
  using TT = std::remove_cvref_t<T>;
  using F = typename TT::format_type;
  using V = std::remove_pointer_t<decltype(t.values().data())>;
  using E = std::remove_const_t<V>;
  if constexpr (std::is_same_v<F, dense_vector>) {
    using M = std::conditional_t<std::is_const_v<V>, const Eigen::Matrix<E, Eigen::Dynamic, 1>,
                                 Eigen::Matrix<E, Eigen::Dynamic, 1>>;
    return Eigen::Map<M>(t.values().data(), t.dims()[0]);
  } else {
    constexpr int opt = std::is_same_v<F, dense_row_major> ? Eigen::RowMajor : Eigen::ColMajor;
    using M = std::conditional_t<std::is_const_v<V>, const Eigen::Matrix<E, Eigen::Dynamic, Eigen::Dynamic, opt>,
                                 Eigen::Matrix<E, Eigen::Dynamic, Eigen::Dynamic, opt>>;
    return Eigen::Map<M>(t.values().data(), t.dims()[0], t.dims()[1]);
  }
}

}  // namespace tensorlev
