#pragma once
/// @file formats.hpp
/// Named formats (seed 003, Figure 4). Each is a distinct type deriving from
/// `format<...>` so that it prints with its name:
///   to_string<csr>()  ->  "CSR = (dense d0, compressed d1)"

#include <cstddef>
#include <string_view>
#include <utility>

#include "format.hpp"
#include "levels/block_offset.hpp"
#include "levels/compressed_aos.hpp"
#include "levels/singleton_aos.hpp"

namespace tensorlev {

/// Non-unique compressed level (the top of COO).
using compressed_nonunique = compressed<sparse_options{.unique = false}>;
/// Non-unique singleton level (middle levels of higher-order COO).
using singleton_nonunique = singleton<sparse_options{.unique = false}>;

// --- vectors -------------------------------------------------------------
struct dense_vector : format<levels<dense<>>> {
  static constexpr std::string_view name = "dense vector";
};
struct sparse_vector : format<levels<compressed<>>> {
  static constexpr std::string_view name = "sparse vector";
};
struct hash_vector : format<levels<hashed<>>> {
  static constexpr std::string_view name = "hash vector";
};

// --- matrices ------------------------------------------------------------
/// Row-major dense matrix.
struct dense_row_major : format<levels<dense<>, dense<>>> {
  static constexpr std::string_view name = "dense row-major";
};
/// Column-major dense matrix.
struct dense_col_major : format<levels<dense<>, dense<>>, modes<1, 0>> {
  static constexpr std::string_view name = "dense column-major";
};
/// Layouts of dense views (dense_view, strided_view).
enum class dense_layout { row_major, col_major };
/// Row-major dense matrix whose rows are a stride apart (strided_level): a
/// view of a submatrix of a larger array, BLAS's leading dimension
/// (`dense_view(rows, cols, ld, values)`).
struct strided_row_major : format<levels<dense<>, strided<>>> {
  static constexpr std::string_view name = "strided row-major";
};
/// Column-major dense matrix whose columns are a stride apart.
struct strided_col_major : format<levels<dense<>, strided<>>, modes<1, 0>> {
  static constexpr std::string_view name = "strided column-major";
};
/// Coordinate matrix, struct of arrays (row crd array, column crd array).
struct coo : format<levels<compressed_nonunique, singleton<>>> {
  static constexpr std::string_view name = "COO";
};
/// Coordinate matrix, array of structs: one (row, column) pair per entry.
struct coo_aos : format<levels<compressed_aos<2>, singleton_aos<2, 1>>> {
  static constexpr std::string_view name = "COO-AoS";
};
struct csr : format<levels<dense<>, compressed<>>> {
  static constexpr std::string_view name = "CSR";
};
/// CSR whose rows need not be sorted (`compressed<{.ordered = false}>`):
/// a product written into it skips sorting each row (Gustavson SpGEMM),
/// as MKL's `mkl_sparse_spmm` and CXSparse's `cs_multiply` leave theirs.
struct csr_unsorted : format<levels<dense<>, compressed<sparse_options{.ordered = false}>>> {
  static constexpr std::string_view name = "CSR (unsorted rows)";
};
struct csc : format<levels<dense<>, compressed<>>, modes<1, 0>> {
  static constexpr std::string_view name = "CSC";
};
/// CSR whose rows are long (tens of entries or more, as in finite-element
/// matrices): the same arrays as csr, with the long_ranges hint, so that
/// a row's sum innermost (SpMV; SpMM in loop order i, k, j) runs as four
/// partial sums, eight on rows of 32 or more (plan.hpp split_sum).
struct csr_long_rows : format<levels<dense<>, compressed<sparse_options{.long_ranges = true}>>> {
  static constexpr std::string_view name = "CSR (long rows)";
};
/// Doubly compressed sparse rows (only non-empty rows stored).
struct dcsr : format<levels<compressed<>, compressed<>>> {
  static constexpr std::string_view name = "DCSR";
};
/// ELLPACK: K slots per row (K = longest row), slot-major; short rows are
/// padded with column 0 and value 0.
struct ell : format<levels<dense<>, dense<>, singleton<>>, level_map<slot<0>, mode<0>, mode<1>>> {
  static constexpr std::string_view name = "ELL";
};
/// SELL-C (sliced ELLPACK): rows in slices of C, each slice padded to its
/// longest row and stored slot-major (a slot's C values side by side, the
/// padding column 0 and value 0). The compressed level holds each slice's
/// slot ranks 0 .. w-1. SpMV sums a slice's C rows in a block workspace
/// across its slots (docs/design.md, "Block workspace"): C lanes a
/// compiler vectorizes, with gathers of x. C = 8 fills an AVX-512 register
/// of doubles. Padding is what it costs: rows of very different lengths
/// within a slice (power-law graphs) store many zeros.
template <std::size_t C>
struct sell : format<levels<dense<>, compressed<>, dense<>, singleton<>>,
                     level_map<block_outer<0, C>, slot<0>, block_inner<0, C>, mode<1>>> {
  static constexpr std::string_view name = "SELL-C";
};
/// SELL-C-sigma: SELL-C over the rows sorted by their number of entries,
/// longest first, within windows of Sigma rows (pack; stable), so that
/// each slice holds rows of similar length and pads little. The lanes
/// level (permuted_dense) stores the permutation: slice s's lane l is row
/// perm[s * C + l]. SpMV sums a slice in the block workspace as SELL-C
/// does and stores each lane's sum into its row. Made for matrices whose
/// neighbouring rows differ in length (power-law graphs; copter2), where
/// SELL-C pads 1.3-3x; it costs a permutation read and scattered stores
/// per slice, so on matrices SELL-C already pads little it is slower.
/// Sigma is a multiple of C by convention (slices inside windows); x is
/// read in the rows' new order, so very large windows lose locality.
template <std::size_t C, std::size_t Sigma = 256>
struct sell_sigma : format<levels<dense<>, compressed<>, permuted_dense<Sigma>, singleton<>>,
                           level_map<block_outer<0, C>, slot<0>, block_inner<0, C>, mode<1>>> {
  static constexpr std::string_view name = "SELL-C-sigma";
};
/// Rows in groups of G that share one list of columns: for each group of
/// rows G g .. G g + G - 1, the union of their columns once (compressed),
/// then G values per column side by side (dense lanes, a zero where a row
/// lacks the column). BCSR with G x 1 blocks. Made for matrices whose
/// consecutive rows share their pattern, as finite-element matrices with
/// several unknowns per node do (PETSc's "inodes"): a column index and an
/// x value are read once per G values, and SpMV sums a group's G rows in a
/// block workspace (docs/design.md, "Block workspace") that vectorizes
/// across the lanes. Rows of different patterns in one group store zeros:
/// `tl-explore` reports the padding and times G = 4 and 8.
template <std::size_t G>
struct grouped_rows : format<levels<dense<>, compressed<>, dense<>>,
                             level_map<block_outer<0, G>, mode<1>, block_inner<0, G>>> {
  static constexpr std::string_view name = "grouped rows";
};
/// Diagonal format: one dense row of values per stored diagonal.
struct dia : format<levels<dense<>, range<>, offset<>>, level_map<diagonal<0, 1>, mode<0>, mode<1>>> {
  static constexpr std::string_view name = "DIA";
};
/// Row-blocked DIA: the rows in blocks of B; under each block the
/// diagonals it touches (compressed, by their index among the matrix's
/// diagonals), then B values per diagonal, one per row of the block
/// (dense lanes; zero where the diagonal leaves the matrix or skips a
/// row). The column is computed from the block, row and offset
/// (block_offset), never stored: 8 bytes a value in double, as DIA. A
/// kernel runs block -> diagonal -> row, so a block's B outputs stay in
/// the block workspace while every diagonal passes: DIA streams y once per
/// diagonal, this once (docs/design.md, "Blocked DIA"). Made for banded
/// and stencil matrices; a block stores only the diagonals it touches, so
/// it pads less than DIA where the band varies.
template <std::size_t B>
struct blocked_dia : format<levels<dense<>, compressed<>, dense<>, block_offset<B>>,
                            level_map<block_outer<0, B>, diagonal<0, 1>, block_inner<0, B>, mode<1>>> {
  static constexpr std::string_view name = "blocked DIA";
};
/// Block CSR with B x B dense blocks.
template <std::size_t B>
struct bcsr : format<levels<dense<>, compressed<>, dense<>, dense<>>,
                     level_map<block_outer<0, B>, block_outer<1, B>, block_inner<0, B>, block_inner<1, B>>> {
  static constexpr std::string_view name = "BCSR";
};
/// Compressed sparse blocks: B x B blocks in a dense grid, COO inside each.
template <std::size_t B>
struct csb : format<levels<dense<>, dense<>, compressed_nonunique, singleton<>>,
                    level_map<block_outer<0, B>, block_outer<1, B>, block_inner<0, B>, block_inner<1, B>>> {
  static constexpr std::string_view name = "CSB";
};

// --- tensors of any order ------------------------------------------------
namespace detail {
template <std::size_t N, class First, class Rest, class Last>
struct chain_levels {
  template <std::size_t... K>
  static auto make(std::index_sequence<K...>)
      -> levels<First, std::conditional_t<(K + 2 < N), Rest, Last>...>;
  using type = decltype(make(std::make_index_sequence<N - 1>{}));
};
template <std::size_t N>
struct reversed_modes {
  template <std::size_t... K>
  static auto make(std::index_sequence<K...>) -> modes<(N - 1 - K)...>;
  using type = decltype(make(std::make_index_sequence<N>{}));
};
}  // namespace detail

/// Row-major (last index fastest) dense tensor of order N.
template <std::size_t N>
struct dense_tensor : format<typename detail::chain_levels<N, dense<>, dense<>, dense<>>::type> {
  static constexpr std::string_view name = "dense";
};
/// Column-major (first index fastest) dense tensor of order N.
template <std::size_t N>
struct dense_tensor_col_major
    : format<typename detail::chain_levels<N, dense<>, dense<>, dense<>>::type, typename detail::reversed_modes<N>::type> {
  static constexpr std::string_view name = "dense column-major";
};
/// Coordinate tensor of order N >= 2 (struct of arrays).
template <std::size_t N>
struct coo_tensor : format<typename detail::chain_levels<N, compressed_nonunique, singleton_nonunique, singleton<>>::type> {
  static_assert(N >= 2, "tensorlev::coo_tensor: order must be at least 2 (use sparse_vector for order 1)");
  static constexpr std::string_view name = "COO";
};
namespace detail {
template <std::size_t N>
struct aos_levels {
  template <std::size_t... K>
  static auto make(std::index_sequence<K...>)
      -> levels<compressed_aos<N>, std::conditional_t<(K + 2 < N), singleton_aos<N, K + 1, sparse_options{.unique = false}>,
                                                      singleton_aos<N, K + 1>>...>;
  using type = decltype(make(std::make_index_sequence<N - 1>{}));
};
}  // namespace detail

/// Coordinate tensor of order N >= 2, array of structs (N-tuples).
template <std::size_t N>
struct coo_aos_tensor : format<typename detail::aos_levels<N>::type> {
  static_assert(N >= 2, "tensorlev::coo_aos_tensor: order must be at least 2");
  static constexpr std::string_view name = "COO-AoS";
};

/// Compressed sparse fibers of order N: every level compressed.
template <std::size_t N>
struct csf_tensor : format<typename detail::chain_levels<N, compressed<>, compressed<>, compressed<>>::type> {
  static constexpr std::string_view name = "CSF";
};
/// Third-order CSF.
using csf = csf_tensor<3>;
/// Mode-generic third-order format: COO over (i, j) fibers, dense k.
struct mode_generic : format<levels<compressed_nonunique, singleton<>, dense<>>> {
  static constexpr std::string_view name = "mode-generic";
};

}  // namespace tensorlev
