#pragma once
/// @file interop/raw.hpp
/// Tensors over raw arrays a program already holds, without copying: CSR,
/// CSC, COO (separate row and column arrays, as scipy and Kokkos Kernels
/// hold them), dense row- and column-major matrices and vectors.
///
///     // 3 x 4, row offsets, columns, values: in the user's vectors
///     auto A = tensorlev::csr_view(3, 4, row_ptr, col_idx, vals);
///     y(i) = A(i, j) * x(j);
///     tensorlev::validate(A);   // optional: the arrays' contents, first violation named
///
/// Each array argument is a pointer (its length follows from the others:
/// rows + 1 offsets, then row_ptr[rows] entries) or a contiguous range
/// (std::vector, std::span, std::array: its length is checked). Positions
/// and coordinates keep their types (e.g. std::size_t offsets, int
/// columns); the view computes with int32 when both are 32-bit signed,
/// int64 otherwise (or the index type given as the second template
/// argument). A const value type gives a read-only operand. The arrays
/// must outlive the view. Entries are promised sorted and unique within
/// each row (column) unless `array_props{.sorted = false}` or
/// `{.unique = false}` says otherwise; the promise becomes the levels'
/// properties, so kernels iterate accordingly. Lengths and extents are
/// checked here (shape_error, overflow_error); contents by `validate`.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "../coordinate_list.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "../formats.hpp"
#include "../levels/sequence.hpp"
#include "../storage.hpp"
#include "../tensor.hpp"
#include "../view.hpp"

namespace tensorlev {

/// What a program promises about arrays it hands over: whether the entries
/// of each row (column; COO: all entries, row-major) are sorted, and
/// whether they are unique.
struct array_props {
  bool sorted = true;
  bool unique = true;
};


/// CSR with the given promises (csr itself when sorted and unique).
template <array_props P>
using csr_format = std::conditional_t<P.sorted && P.unique, csr,
                                      format<levels<dense<>, compressed<sparse_options{.ordered = P.sorted, .unique = P.unique}>>>>;
/// CSC with the given promises (csc itself when sorted and unique).
template <array_props P>
using csc_format =
    std::conditional_t<P.sorted && P.unique, csc,
                       format<levels<dense<>, compressed<sparse_options{.ordered = P.sorted, .unique = P.unique}>>, modes<1, 0>>>;
/// COO over separate row and column arrays.
template <array_props P>
using coo_soa_format = format<levels<sequence<sparse_options{.ordered = P.sorted, .unique = false}>,
                                     singleton<sparse_options{.ordered = P.sorted, .unique = P.unique}>>>;

namespace detail {
// An array argument: a pointer, or a contiguous range (const preserved:
// a const vector gives a read-only array).
template <class A>
struct raw_arg;
template <class T>
struct raw_arg<T*> {
  using element = T;
  static constexpr bool sized = false;
  static T* data(T* p) noexcept { return p; }
  static std::size_t size(T*) noexcept { return 0; }
};
template <class T>
struct raw_arg<T* const> : raw_arg<T*> {};
template <class R>
  requires std::ranges::contiguous_range<R> && std::ranges::sized_range<R>
struct raw_arg<R> {
  using element = std::remove_reference_t<std::ranges::range_reference_t<R>>;
  static constexpr bool sized = true;
  static element* data(R& r) noexcept { return std::ranges::data(r); }
  static std::size_t size(R& r) noexcept { return static_cast<std::size_t>(std::ranges::size(r)); }
};
template <class A>
using raw_arg_t = raw_arg<std::remove_reference_t<A>>;

template <class A>
concept raw_array = requires { typename raw_arg_t<A>::element; };

// The data and length of argument a (`what` for messages); a pointer has
// length `expect`, a range must have it.
template <class A>
auto raw_span(A& a, long long expect, const char* fn, const char* what) {
  using R = raw_arg_t<A&>;
  using E = typename R::element;
  E* d = R::data(a);
  if constexpr (R::sized) {
    const std::size_t n = R::size(a);
    if (n != static_cast<std::size_t>(expect))
      throw shape_error(std::string(fn) + ": " + what + " has " + std::to_string(n) + " entries, expected " +
                        std::to_string(expect));
    return std::span<E>(d, n);
  } else {
    if (expect > 0 && d == nullptr) throw shape_error(std::string(fn) + ": " + what + " is a null pointer");
    return std::span<E>(d, static_cast<std::size_t>(expect));
  }
}

template <class Ix, class P, class C>
using raw_index_t = std::conditional_t<std::is_void_v<Ix>, view_index_t<P, C>, Ix>;

template <class I>
I raw_extent(long long v, const char* fn, const char* what) {
  if (v < 0) throw shape_error(std::string(fn) + ": negative " + what + " (" + std::to_string(v) + ")");
  return checked_index<I>(v, (std::string(fn) + ": " + what).c_str());
}

// A compressed matrix (CSR when dim 0 is outer, CSC otherwise) over
// borrowed arrays.
template <class F, class Ix, class RP, class CI, class VA>
auto compressed_view(const char* fn, long long outer, long long inner, bool rows_outer, RP& ptr, CI& idx, VA& vals) {
  using P = std::remove_const_t<typename raw_arg_t<RP>::element>;
  using C = std::remove_const_t<typename raw_arg_t<CI>::element>;
  using V = typename raw_arg_t<VA>::element;
  static_assert(std::is_integral_v<P> && std::is_integral_v<C>,
                "tensorlev: the offset and index arrays of a compressed view must hold integers");
  using I = raw_index_t<Ix, P, C>;
  static_assert(index_type<I>, "tensorlev: the index type must be a signed integer of at least 32 bits");
  const I no = raw_extent<I>(outer, fn, rows_outer ? "rows" : "columns");
  const I ni = raw_extent<I>(inner, fn, rows_outer ? "columns" : "rows");
  const auto p = raw_span(ptr, static_cast<long long>(no) + 1, fn, rows_outer ? "the row offsets" : "the column offsets");
  if (!std::in_range<long long>(p[static_cast<std::size_t>(no)]) || p[static_cast<std::size_t>(no)] < 0)
    throw shape_error(std::string(fn) + ": the last offset " + std::to_string(p[static_cast<std::size_t>(no)]) +
                      " is not a valid entry count");
  const auto nnz = static_cast<long long>(p[static_cast<std::size_t>(no)]);
  (void)checked_index<I>(nnz, (std::string(fn) + ": number of entries").c_str());
  if (p[0] != 0)
    throw shape_error(std::string(fn) + ": the first offset is " + std::to_string(p[0]) + ", not 0");
  const auto c = raw_span(idx, nnz, fn, rows_outer ? "the column indices" : "the row indices");
  const auto v = raw_span(vals, nnz, fn, "the values");
  if (!std::in_range<C>(ni))
    throw overflow_error(std::string(fn) + ": " + std::to_string(ni) + (rows_outer ? " columns" : " rows") +
                         " do not fit the index array's type");
  using S = borrowed_for<P, C, I>;
  using T = tensor<V, F, I, S>;
  using LT = typename T::level_tuple;
  using comp = std::tuple_element_t<1, LT>;
  const std::array<I, 2> dims = rows_outer ? std::array<I, 2>{no, ni} : std::array<I, 2>{ni, no};
  return T(dims, LT(dense_level<I>(no), comp(ni, {p.data(), p.size()}, {c.data(), c.size()})), v);
}
}  // namespace detail

/// A CSR matrix (rows x cols) over row offsets (rows + 1), column indices
/// and values (row_ptr[rows] each), without copying.
template <array_props Props = array_props{}, class Ix = void, detail::raw_array RP, detail::raw_array CI,
          detail::raw_array VA>
[[nodiscard]] auto csr_view(long long rows, long long cols, RP&& row_ptr, CI&& col_idx, VA&& values) {
  return detail::compressed_view<csr_format<Props>, Ix>("tensorlev::csr_view", rows, cols, true, row_ptr, col_idx,
                                                        values);
}

/// A CSC matrix (rows x cols) over column offsets (cols + 1), row indices
/// and values (col_ptr[cols] each), without copying.
template <array_props Props = array_props{}, class Ix = void, detail::raw_array CP, detail::raw_array RI,
          detail::raw_array VA>
[[nodiscard]] auto csc_view(long long rows, long long cols, CP&& col_ptr, RI&& row_idx, VA&& values) {
  return detail::compressed_view<csc_format<Props>, Ix>("tensorlev::csc_view", cols, rows, false, col_ptr, row_idx,
                                                        values);
}

/// A COO matrix (rows x cols) over separate row and column index arrays
/// and values, nnz entries each, without copying. Entries are promised
/// sorted row-major and unique unless Props says otherwise.
template <array_props Props = array_props{}, class Ix = void, detail::raw_array RI, detail::raw_array CI,
          detail::raw_array VA>
[[nodiscard]] auto coo_view(long long rows, long long cols, long long nnz, RI&& row_idx, CI&& col_idx, VA&& values) {
  constexpr const char* fn = "tensorlev::coo_view";
  using R = std::remove_const_t<typename detail::raw_arg_t<RI>::element>;
  using C = std::remove_const_t<typename detail::raw_arg_t<CI>::element>;
  using V = typename detail::raw_arg_t<VA>::element;
  static_assert(std::is_same_v<R, C>, "tensorlev::coo_view: the row and column index arrays must have one type");
  static_assert(std::is_integral_v<C>, "tensorlev::coo_view: the index arrays must hold integers");
  using I = detail::raw_index_t<Ix, C, C>;
  const I m = detail::raw_extent<I>(rows, fn, "rows");
  const I n = detail::raw_extent<I>(cols, fn, "columns");
  const I k = detail::raw_extent<I>(nnz, fn, "number of entries");
  const auto r = detail::raw_span(row_idx, k, fn, "the row indices");
  const auto c = detail::raw_span(col_idx, k, fn, "the column indices");
  const auto v = detail::raw_span(values, k, fn, "the values");
  if (!std::in_range<C>(m) || !std::in_range<C>(n))
    throw overflow_error(std::string(fn) + ": the dimensions do not fit the index arrays' type");
  using S = detail::borrowed_for<C, C, I>;
  using T = tensor<V, coo_soa_format<Props>, I, S>;
  using LT = typename T::level_tuple;
  using L0 = std::tuple_element_t<0, LT>;
  using L1 = std::tuple_element_t<1, LT>;
  return T({m, n}, LT(L0(m, {r.data(), r.size()}), L1(n, {c.data(), c.size()})), v);
}

/// A dense matrix (rows x cols) over rows * cols values, row-major (or
/// `dense_view<dense_layout::col_major>`), without copying.
template <dense_layout Layout = dense_layout::row_major, class Ix = std::int32_t, detail::raw_array VA>
[[nodiscard]] auto dense_view(long long rows, long long cols, VA&& values) {
  constexpr const char* fn = "tensorlev::dense_view";
  using I = Ix;
  using F = std::conditional_t<Layout == dense_layout::row_major, dense_row_major, dense_col_major>;
  const I m = detail::raw_extent<I>(rows, fn, "rows");
  const I n = detail::raw_extent<I>(cols, fn, "columns");
  const long long total = detail::dense_count(std::array<I, 2>{m, n}, "tensorlev::dense_view: rows * columns");
  const auto v = detail::raw_span(values, total, fn, "the values");
  return detail::dense_over<F>(std::array<I, 2>{m, n}, v);
}

/// A dense matrix (rows x cols) whose rows (columns, col_major) start `ld`
/// values apart, ld >= cols (rows): a submatrix of a larger array, as BLAS
/// takes it with a leading dimension, without copying. The values run from
/// the first component to the last, (rows - 1) * ld + cols of them
/// (row-major; a range argument may hold more); the ones between rows are
/// not read, and not written (an `=` into it writes its components only).
template <dense_layout Layout = dense_layout::row_major, class Ix = std::int32_t, detail::raw_array VA>
[[nodiscard]] auto dense_view(long long rows, long long cols, long long ld, VA&& values) {
  constexpr const char* fn = "tensorlev::dense_view";
  using I = Ix;
  constexpr bool row_major = Layout == dense_layout::row_major;
  using F = std::conditional_t<row_major, strided_row_major, strided_col_major>;
  const I m = detail::raw_extent<I>(rows, fn, "rows");
  const I n = detail::raw_extent<I>(cols, fn, "columns");
  const I lead = detail::raw_extent<I>(ld, fn, "leading dimension");
  const I outer = row_major ? m : n, inner = row_major ? n : m;
  if (lead < inner)
    throw shape_error(std::string(fn) + ": leading dimension " + std::to_string(ld) + " below the " +
                      (row_major ? "columns' " : "rows' ") + std::to_string(inner));
  const strided_level<I> last(inner, lead);
  const I total = last.size(outer);  // overflow_error if it does not fit I
  using R = detail::raw_arg_t<VA&>;
  using V = typename R::element;
  // A range may run on past the last component (a whole array's trailing gap).
  const std::span<V> v = [&] {
    if constexpr (R::sized) {
      if (R::size(values) < static_cast<std::size_t>(total))
        throw shape_error(std::string(fn) + ": the values have " + std::to_string(R::size(values)) +
                          " entries, fewer than the " + std::to_string(total) + " the view spans");
      return std::span<V>(R::data(values), static_cast<std::size_t>(total));
    } else {
      return detail::raw_span(values, total, fn, "the values");
    }
  }();
  using T = tensor<V, F, I, borrowed<>>;
  return T(std::array<I, 2>{m, n}, typename T::level_tuple(dense_level<I>(outer), last), v);
}

/// A dense vector of n values, without copying.
template <class Ix = std::int32_t, detail::raw_array VA>
[[nodiscard]] auto vector_view(long long n, VA&& values) {
  constexpr const char* fn = "tensorlev::vector_view";
  using I = Ix;
  const I len = detail::raw_extent<I>(n, fn, "length");
  const auto v = detail::raw_span(values, len, fn, "the values");
  return detail::dense_over<dense_vector>(std::array<I, 1>{len}, v);
}

}  // namespace tensorlev
