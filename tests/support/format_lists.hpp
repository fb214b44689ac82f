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

using vector_formats = std::tuple<dense_vector, sparse_vector, hash_vector>;
using matrix_formats = std::tuple<dense_row_major, dense_col_major, coo, coo_aos, csr, csc, dcsr, ell, dia, bcsr<2>,
                                  bcsr<3>, csb<2>, hash_rows>;
using order3_formats = std::tuple<dense_tensor<3>, dense_tensor_col_major<3>, coo_tensor<3>, coo_aos_tensor<3>, csf,
                                  mode_generic, dense_sparse_sparse, dense_dense_hashed>;
using order4_formats = std::tuple<dense_tensor<4>, coo_tensor<4>, csf_tensor<4>>;
}  // namespace tltest
