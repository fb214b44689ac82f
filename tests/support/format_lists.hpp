#pragma once
// The formats every exhaustive test runs over, by order.
#include <tuple>

#include "tensorlev/tensorlev.hpp"

namespace tltest {
using namespace tensorlev;

/// Rows in hash maps (dense, hashed): the hash-based matrix of the tests.
struct hash_rows : format<levels<dense<>, hashed<>>> {
  static constexpr std::string_view name = "hash rows";
};
/// Third-order formats beyond the named ones.
struct dense_sparse_sparse : format<levels<dense<>, compressed<>, compressed<>>> {
  static constexpr std::string_view name = "dense-CSF";
};
struct dense_dense_hashed : format<levels<dense<>, dense<>, hashed<>>> {
  static constexpr std::string_view name = "dense-dense-hashed";
};

/// Rows in a hash map, columns compressed: positions of the hashed parent
/// are not in coordinate order, so pack appends under unsorted parents.
struct hashed_csr : format<levels<hashed<>, compressed<>>> {
  static constexpr std::string_view name = "hashed-CSR";
};

/// Formats that store exactly the distinct coordinates they are given: no
/// padding, no implicit zeros (their component count is checked exactly).
template <class F>
inline constexpr bool no_padding = false;
template <> inline constexpr bool no_padding<sparse_vector> = true;
template <> inline constexpr bool no_padding<hash_vector> = true;
template <> inline constexpr bool no_padding<coo> = true;
template <> inline constexpr bool no_padding<coo_aos> = true;
template <> inline constexpr bool no_padding<csr> = true;
template <> inline constexpr bool no_padding<csc> = true;
template <> inline constexpr bool no_padding<dcsr> = true;
template <> inline constexpr bool no_padding<csb<2>> = true;
template <> inline constexpr bool no_padding<hash_rows> = true;
template <> inline constexpr bool no_padding<hashed_csr> = true;
template <> inline constexpr bool no_padding<coo_tensor<3>> = true;
template <> inline constexpr bool no_padding<coo_aos_tensor<3>> = true;
template <> inline constexpr bool no_padding<csf> = true;
template <> inline constexpr bool no_padding<dense_sparse_sparse> = true;
template <> inline constexpr bool no_padding<dense_dense_hashed> = true;
template <> inline constexpr bool no_padding<coo_tensor<4>> = true;
template <> inline constexpr bool no_padding<csf_tensor<4>> = true;

// SELL-C-sigma with slices of 3 in windows of 6 rows: small enough that
// the generated cases sort rows across slices.
using sell_sigma3 = sell_sigma<3, 6>;

using vector_formats = std::tuple<dense_vector, sparse_vector, hash_vector>;
using matrix_formats = std::tuple<dense_row_major, dense_col_major, coo, coo_aos, csr, csc, dcsr, ell, sell<3>, sell_sigma<3, 6>, dia,
                                  blocked_dia<3>, bcsr<2>, bcsr<3>, grouped_rows<3>, csb<2>, hash_rows, hashed_csr>;
using order3_formats = std::tuple<dense_tensor<3>, dense_tensor_col_major<3>, coo_tensor<3>, coo_aos_tensor<3>, csf,
                                  mode_generic, dense_sparse_sparse, dense_dense_hashed>;
using order4_formats = std::tuple<dense_tensor<4>, coo_tensor<4>, csf_tensor<4>>;
}  // namespace tltest
