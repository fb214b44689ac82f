#pragma once
/// @file explore.hpp
/// tl-explore's internal interface: the kernels and formats it knows, the
/// problem handed to a kernel, the hand-written reference and the per-format
/// runner. Light on purpose (no code generator), so that main.cpp and
/// reference.cpp compile quickly; the generated kernels live in the k_*.cpp
/// translation units (see kernels_impl.hpp).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tensorlev/coordinate_list.hpp>
#include <tensorlev/execution.hpp>

namespace tlx {

using index_t = std::int32_t;
using cplx = std::complex<double>;
template <class V>
using coo_list = tensorlev::coordinate_list<V, index_t>;

enum class kernel_id : int { spmv, spmm, add, spgemm, sddmm, ttv, ttm, mttkrp, innerprod, plus };
inline constexpr std::size_t num_kernels = 10;

/// How a dense operand's columns are sized.
enum class col_kind { one, cols, rank };
// (Default member initializers: nvcc's front end takes `{}` in the
// constexpr table below for uninitialized members otherwise.)
struct operand_info {
  std::string_view name;
  int row_dim = 0;  ///< dimension of the input tensor giving the operand's rows
  col_kind cols = col_kind::one;
};

struct kernel_info {
  std::string_view name;
  std::string_view statement;
  int order;  ///< order of the input: 2 (.mtx) or 3 (.tns)
  int num_operands;
  operand_info operands[2];
  std::string_view result;  ///< how the result is stored
};

inline constexpr kernel_info kernels[num_kernels] = {
    {"spmv", "y(i) = A(i,j) * x(j)", 2, 1, {{"x", 1, col_kind::one}, {}}, "dense vector"},
    {"spmm", "C(i,k) = A(i,j) * B(j,k)", 2, 1, {{"B", 1, col_kind::cols}, {}}, "dense row-major"},
    {"add", "C(i,j) = A(i,j) + At(i,j)   (At = A^T, square A)", 2, 0, {}, "CSR"},
    {"spgemm", "C(i,j) = A(i,k) * A(k,j)   (square A)", 2, 0, {}, "CSR"},
    {"sddmm", "C(i,j) = A(i,j) * U(i,k) * V(j,k)", 2, 2, {{"U", 0, col_kind::rank}, {"V", 1, col_kind::rank}}, "CSR"},
    {"ttv", "Y(i,j) = B(i,j,k) * c(k)", 3, 1, {{"c", 2, col_kind::one}, {}}, "dense row-major"},
    {"ttm", "Y(i,j,l) = B(i,j,k) * M(k,l)", 3, 1, {{"M", 2, col_kind::rank}, {}}, "dense 3-tensor"},
    {"mttkrp", "Y(i,l) = B(i,j,k) * M(j,l) * N(k,l)", 3, 2, {{"M", 1, col_kind::rank}, {"N", 2, col_kind::rank}},
     "dense row-major"},
    {"innerprod", "a = B(i,j,k) * B(i,j,k)", 3, 0, {}, "scalar"},
    {"plus", "C(i,j,k) = B(i,j,k) + B(i,j,k)", 3, 0, {}, "COO (order 3)"},
};

/// Command-line names of the formats, in the order of the type lists in
/// kernels_impl.hpp.
inline constexpr std::string_view matrix_formats[] = {"csr", "csc",  "coo", "coo-aos",   "dcsr",  "ell",
                                                      "dia", "bcsr4", "csb", "hash-rows", "dense", "csr-long",
                                                      "sell8", "rows4", "rows8", "sell8s", "diab16"};
inline constexpr std::string_view matrix_format_desc[] = {
    "CSR",       "CSC",          "COO (struct of arrays)", "COO (array of structs)", "doubly compressed rows",
    "ELLPACK",   "diagonal",     "block CSR, 4x4 blocks",  "compressed sparse blocks, 64x64 blocks",
    "format<levels<dense<>, hashed<>>> (hash rows)",       "dense row-major",
    "CSR with the long-rows hint (csr_long_rows: a row's sum in four partial sums, eight on rows of 32 or more)",
    "SELL-8: slices of 8 rows padded to their longest, slot-major (y summed per slice in a block workspace)",
    "grouped rows, 4 a group: a group's columns once, 4 values a column (BCSR with 4x1 blocks; y summed per group in "
    "a block workspace)",
    "grouped rows, 8 a group: a group's columns once, 8 values a column (BCSR with 8x1 blocks; y summed per group in "
    "a block workspace)",
    "SELL-8-sigma: SELL-8 over the rows sorted by length, longest first, within windows of 256 rows (sell_sigma<8, "
    "256>; each slice's sums stored into their rows through the permutation)",
    "blocked DIA, 16 rows a block: each block's diagonals, 16 values a diagonal, no column indices (blocked_dia<16>; "
    "y summed per block in a block workspace, x read contiguously where the block's columns lie inside)"};
inline constexpr std::size_t num_matrix_formats = std::size(matrix_formats);
inline constexpr std::string_view tensor_formats[] = {"coo3", "csf", "dense3"};
inline constexpr std::string_view tensor_format_desc[] = {"COO of order 3", "CSF (compressed fibers)",
                                                          "dense row-major 3-tensor"};
inline constexpr std::size_t num_tensor_formats = std::size(tensor_formats);

/// The command-line name of format f of the list for the given order.
constexpr std::string_view format_name(int order, std::size_t f) {
  if (order == 2) return f < num_matrix_formats ? matrix_formats[f] : std::string_view("?");
  return f < num_tensor_formats ? tensor_formats[f] : std::string_view("?");
}

enum matrix_format : std::size_t {
  f_csr, f_csc, f_coo, f_coo_aos, f_dcsr, f_ell, f_dia, f_bcsr4, f_csb, f_hash, f_dense, f_csr_long, f_sell8,
  f_rows4, f_rows8, f_sell8s, f_diab16
};
enum tensor_format : std::size_t { f_coo3, f_csf, f_dense3 };

/// Why format f (index into the list for the kernel's order) cannot be used
/// with kernel k, or nullptr when it can. The kernel translation units
/// instantiate exactly the supported combinations.
constexpr const char* unsupported_reason(kernel_id k, std::size_t f) {
  if (f == f_csr_long && k != kernel_id::spmv)
    return "CSR's arrays with a hint that changes only a sum over a row's entries innermost (SpMV); for this "
           "kernel its loops are csr's";
  if (f == f_sell8s && k != kernel_id::spmv)
    return "instantiated for SpMV only, where its block workspace sums a slice's 8 rows of y and stores them into "
           "their rows through the permutation; the other kernels gain nothing from the sorted rows";
  if (f == f_sell8 && k != kernel_id::spmv)
    return "instantiated for SpMV only, where its block workspace sums a slice's 8 rows of y; with a matrix "
           "output its loops are ELL's, slice by slice, and ell stands for them";
  if ((f == f_rows4 || f == f_rows8) && k != kernel_id::spmv)
    return "instantiated for SpMV only, where its block workspace sums a group's rows of y over the group's shared "
           "columns; for the other kernels its loops are BCSR's (G x 1 blocks), and bcsr4 stands for them";
  if (f == f_diab16 && k != kernel_id::spmv)
    return "instantiated for SpMV only, where its block workspace sums a block's 16 rows of y over the block's "
           "diagonals; for the other kernels its loops are DIA's, block by block, and dia stands for them";
  const bool blocked = f == f_bcsr4 || f == f_csb;
  if ((k == kernel_id::add || k == kernel_id::spgemm) && blocked)
    return "both operands would be blocked and compute the same index variables, which the code generator "
           "rejects at compile time (it asks to convert one operand to CSR); not run with a mixed format";
  return nullptr;
}

/// Why kernel k cannot run on format f in the device form (--device), or
/// nullptr when it can (f also supported by unsupported_reason). The
/// dk_*.cpp translation units instantiate exactly these pairs.
constexpr const char* device_unsupported_reason(kernel_id k, std::size_t f) {
  if (f == f_csr_long)
    return "not instantiated in the device form: on CUDA/HIP its loops are csr's (the partial sums are host "
           "code), so csr's device run stands for it";
  if (f == f_sell8s)
    return "not instantiated in the device form: on CUDA/HIP its loops are ELL's slice by slice with the rows "
           "through the permutation (the block workspace is host code); not run on a device";
  if (f == f_sell8)
    return "not instantiated in the device form: on CUDA/HIP its loops are ELL's, slice by slice (the block "
           "workspace is host code), so ell's device run stands for it";
  if (f == f_rows4 || f == f_rows8)
    return "not instantiated in the device form: on CUDA/HIP its loops are BCSR's with G x 1 blocks (the block "
           "workspace is host code), so bcsr4's device run stands for it";
  if (f == f_diab16)
    return "not instantiated in the device form: on CUDA/HIP its loops are DIA's block by block (the block "
           "workspace is host code), so dia's device run stands for it";
  const bool csr_result = k == kernel_id::add || k == kernel_id::spgemm || k == kernel_id::sddmm;
  const bool out_of_row_order = f == f_csc || f == f_ell || f == f_dia || f == f_hash ||
                                (k == kernel_id::sddmm && (f == f_bcsr4 || f == f_csb));
  if (csr_result && out_of_row_order)
    return "the CSR result would be reached out of row order (by columns, ELL slots, diagonals, blocks or "
           "hashed columns), which a host executor streams into a list and packs; the device form assembles "
           "outputs reached in order only (a compile error names it)";
  return nullptr;
}

/// A dense operand, row-major.
template <class V>
struct dense_operand {
  index_t rows = 0, cols = 0;
  std::vector<V> data;
};

/// Everything a kernel run needs; built once per input file.
template <class V>
struct problem {
  coo_list<V> A;   ///< the input matrix or 3-tensor, as read (COO)
  coo_list<V> At;  ///< add: the transpose of A (else empty)
  std::vector<dense_operand<V>> operands;  ///< in the order of kernel_info::operands
};

/// The reference result, computed by plain loops over A's coordinate list.
template <class V>
struct reference {
  bool sparse = false;
  std::vector<std::uint64_t> dims;                ///< result dims (empty: scalar)
  std::vector<V> dense;                           ///< dense or scalar result, row-major
  std::unordered_map<std::uint64_t, V> entries;   ///< sparse result: row-major linear index -> value
  double max_abs = 0;                             ///< max |reference value|
  double flops = 0;                               ///< useful flops of one kernel run (see --help)
};

template <class V>
reference<V> compute_reference(kernel_id k, const problem<V>& p);
/// Max |got - ref| for a dense (or scalar) result stored row-major.
template <class V>
double dense_error(const reference<V>& ref, const V* got, std::size_t n);
/// Max |got - ref| over the union of both patterns for a sparse result.
template <class V>
double sparse_error(const reference<V>& ref, const coo_list<V>& got);

/// The result of one format, kept for --output.
template <class V>
struct result_tensor {
  bool present = false;
  bool dense = false;
  std::vector<index_t> dims;  ///< empty for a scalar
  std::vector<V> values;      ///< dense: row-major values
  coo_list<V> entries;        ///< sparse: stored components
};

/// Reports the phase a format is in ("packing", "running the kernel") as it
/// starts; tl-explore prints it on stderr.
using progress_fn = void (*)(const void* ctx, const char* phase);

struct run_options {
  int reps = 5;               ///< at most this many packs and kernel runs per format
  double rep_seconds = 1.0;   ///< no further pack (run) once the packs (runs) took this long; at least one
  progress_fn progress = nullptr;  ///< may be null
  const void* progress_ctx = nullptr;
  tensorlev::executor ex{};   ///< where the kernels run (--threads: Kokkos' host space)
};

/// The executor for --threads n > 1 (kokkos_exec.cpp): Kokkos initialized
/// with n threads on its default host space. Throws usage-style errors
/// (std::invalid_argument) when tl-explore was built without Kokkos.
tensorlev::executor threads_executor(int n);

/// --device (kokkos_exec.cpp): Kokkos initialized (n threads on its host
/// space when n > 1; a host space that does not run n is an error), and
/// what its default execution space is, e.g. "Cuda (a device space ...)" or
/// "OpenMP (... a host space ...)"; concurrency is set to the space's
/// Kokkos concurrency() (host threads, or a GPU's resident threads).
/// Throws std::invalid_argument when tl-explore was built without Kokkos.
std::string device_init(int threads, int& concurrency);

// --- Size budgets (budget.cpp) ----------------------------------------------

/// What tl-explore knows of the input before packing it: a few linear
/// passes over the coordinate list. Counts are doubles (they feed
/// estimates that may exceed any integer type).
struct input_stats {
  std::vector<double> dims;
  double nnz = 0;
  // Matrices only:
  double rows_used = 0, cols_used = 0;      ///< rows / columns holding an entry
  double longest_row = 0, longest_col = 0;  ///< entries of the longest row / column
  double diagonals = 0;                     ///< distinct diagonals j - i
  double diagonal_span = 0;                 ///< their lengths summed (the positions DIA iterates)
  double blocks4 = 0;                       ///< distinct 4x4 blocks (BCSR)
  double sell8 = 0;                         ///< SELL-8's slots: 8 x each slice's longest row, summed
  double sell8s = 0;                        ///< the same over rows sorted by length within windows of 256 (SELL-8-sigma)
  double rows4 = 0, rows8 = 0;              ///< grouped rows: distinct (group of 4 / 8 rows, column) pairs
  double diab16 = 0;                        ///< blocked DIA: distinct (block of 16 rows, diagonal) pairs
  double products = 0;                      ///< square A: sum over entries A(i,k) of nnz(row k) (SpGEMM)
  double coo_merge = 0, dcsr_merge = 0;     ///< square A: steps of the row merges of COO / DCSR SpGEMM
};
/// dims and coords as in a coordinate list (coords interleaved, one tuple per entry).
input_stats measure_input(std::span<const index_t> dims, std::span<const index_t> coords);

/// The limits on one format: estimated bytes of the packed input
/// (--max-bytes) and work units of one kernel run (--max-work; a unit is
/// about one step of an inner loop, 1-5 ns in a Release build).
struct budget {
  double bytes = 536870912.0;  // 2^29 (512 MiB)
  double work = 536870912.0;   // 2^29
};

/// A format's estimated cost on the input, and what it was counted from.
struct format_estimate {
  double bytes = 0;  ///< the packed input (add: A and A^T)
  double work = 0;   ///< work units of one kernel run
  std::string bytes_detail, work_detail;
};
/// Estimate for kernel k in format f (index into the kernel order's list);
/// cols_or_rank: --cols for spmm, else --rank.
format_estimate estimate_format(kernel_id k, std::size_t f, const input_stats& s, std::size_t value_bytes,
                                double cols_or_rank);
/// Why a format with estimate e is skipped under b, or "" when it fits.
std::string budget_skip(const format_estimate& e, const budget& b);
/// "256.0 MiB".
std::string bytes_text(double bytes);

struct format_result {
  std::string format;
  double convert_ms = 0;
  double kernel_ms = 0;
  double gflops = 0;
  double max_abs_err = 0;
  int packs = 0, runs = 0;  ///< timed packs (of A) and kernel runs (--reps, fewer when slow)
  bool device_form = false;  ///< made by the device-form runner (--device)
};

/// Packs p.A (and p.At) into format F (index into the kernel's format list),
/// runs kernel K opt.reps times, compares the last result with ref. Fills
/// *out with the result when out is not null. Defined in kernels_impl.hpp,
/// instantiated in the k_*.cpp files.
template <kernel_id K, class V, std::size_t F>
format_result run_format(const problem<V>& p, const reference<V>& ref, const run_options& opt, result_tensor<V>* out);

template <class V>
using runner = format_result (*)(const problem<V>&, const reference<V>&, const run_options&, result_tensor<V>*);

/// The runners of each kernel, indexed by format (nullptr: unsupported).
/// Defined in k_<kernel>_<real|complex>.cpp (TLX_DEFINE_TABLE); the pointer
/// argument only selects the value type. Third-order kernels are real only.
#define TLX_DECLARE_TABLE(K)                             \
  std::span<const runner<double>> table_##K(const double*); \
  std::span<const runner<cplx>> table_##K(const cplx*);
TLX_DECLARE_TABLE(spmv)
TLX_DECLARE_TABLE(spmm)
TLX_DECLARE_TABLE(add)
TLX_DECLARE_TABLE(spgemm)
TLX_DECLARE_TABLE(sddmm)
#undef TLX_DECLARE_TABLE
std::span<const runner<double>> table_ttv(const double*);
std::span<const runner<double>> table_ttm(const double*);
std::span<const runner<double>> table_mttkrp(const double*);
std::span<const runner<double>> table_innerprod(const double*);
std::span<const runner<double>> table_plus(const double*);

/// The device-form runners of kernel k (--device; real values), indexed by
/// format (nullptr: unsupported). kokkos_exec.cpp dispatches to the
/// device_table_<kernel>() functions of dk_*.cpp (device_exec.hpp), or
/// throws std::invalid_argument in a tl-explore built without Kokkos.
std::span<const runner<double>> device_table(kernel_id k);
std::span<const runner<double>> device_table_spmv();
std::span<const runner<double>> device_table_spmm();
std::span<const runner<double>> device_table_sddmm();
std::span<const runner<double>> device_table_add();
std::span<const runner<double>> device_table_spgemm();
std::span<const runner<double>> device_table_ttv();
std::span<const runner<double>> device_table_ttm();
std::span<const runner<double>> device_table_mttkrp();
std::span<const runner<double>> device_table_innerprod();
std::span<const runner<double>> device_table_plus();

}  // namespace tlx
