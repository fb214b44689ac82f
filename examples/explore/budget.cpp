// tl-explore: what each format would cost before it is built. From the
// coordinate list alone (a few linear passes, no format packed), estimates
// the bytes a format stores and the work of one kernel run in it, so that a
// format whose cost explodes on this input (DIA with thousands of
// diagonals, ELL with one long row, dense on a big matrix) is skipped with
// the reason instead of running for minutes. The counts follow the loops
// the code generator emits for each (kernel, format) pair (print them with
// tensorlev::loop_nest); docs/design.md, "Examples and the explorer", has
// the rules and the reasons for the default budgets.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "explore.hpp"

namespace tlx {

namespace {

inline std::size_t uz(index_t v) { return static_cast<std::size_t>(v); }

/// Distinct (i / B, j / BC) blocks: entries grouped by block row (a counting
/// pass), then one stamp per block column. BC = 0: distinct (i / B,
/// diagonal j - i) pairs instead (blocked DIA).
double count_blocks(index_t m, index_t n, std::span<const index_t> coords, std::size_t B, std::size_t BC) {
  const std::size_t z = coords.size() / 2;
  const std::size_t brows = (uz(m) + B - 1) / B, bcols = BC == 0 ? uz(m) + uz(n) : (uz(n) + BC - 1) / BC;
  std::vector<std::size_t> start(brows + 1, 0);
  for (std::size_t e = 0; e < z; ++e) ++start[uz(coords[2 * e]) / B + 1];
  for (std::size_t r = 0; r < brows; ++r) start[r + 1] += start[r];
  std::vector<std::size_t> fill(start.begin(), start.end() - 1), col(z);
  for (std::size_t e = 0; e < z; ++e)
    col[fill[uz(coords[2 * e]) / B]++] =
        BC == 0 ? uz(coords[2 * e + 1] - coords[2 * e] + m) : uz(coords[2 * e + 1]) / BC;
  std::vector<std::size_t> stamp(bcols, 0);
  double blocks = 0;
  for (std::size_t r = 0; r < brows; ++r)
    for (std::size_t q = start[r]; q < start[r + 1]; ++q)
      if (stamp[col[q]] != r + 1) stamp[col[q]] = r + 1, ++blocks;
  return blocks;
}

}  // namespace

input_stats measure_input(std::span<const index_t> dims, std::span<const index_t> coords) {
  input_stats s;
  for (auto d : dims) s.dims.push_back(static_cast<double>(d));
  const std::size_t order = dims.size();
  const std::size_t z = order == 0 ? 0 : coords.size() / order;
  s.nnz = static_cast<double>(z);
  if (order != 2) return s;
  const index_t m = dims[0], n = dims[1];
  std::vector<std::size_t> row(uz(m), 0), col(uz(n), 0);
  std::vector<index_t> last_col(uz(m), -1);
  std::vector<char> diag(uz(m) + uz(n), 0);
  for (std::size_t e = 0; e < z; ++e) {
    const index_t i = coords[2 * e], j = coords[2 * e + 1];
    ++row[uz(i)];
    ++col[uz(j)];
    last_col[uz(i)] = std::max(last_col[uz(i)], j);
    char& dg = diag[uz(j - i + m)];
    if (!dg) {
      dg = 1;
      s.diagonals += 1;
      // Diagonal d = j - i holds rows max(0, -d) .. min(m, n - d) - 1.
      const double d = static_cast<double>(j - i);
      s.diagonal_span += std::min<double>(m, n - d) - std::max<double>(0, -d);
    }
  }
  for (const auto r : row) {
    s.rows_used += r != 0;
    s.longest_row = std::max(s.longest_row, static_cast<double>(r));
  }
  for (std::size_t r = 0; r < row.size(); r += 8)
    s.sell8 += 8 * static_cast<double>(*std::max_element(row.begin() + static_cast<std::ptrdiff_t>(r),
                                                         row.begin() + static_cast<std::ptrdiff_t>(std::min(row.size(), r + 8))));
  {  // SELL-8-sigma: the same slices over the rows sorted by length within windows of 256 (pack's rule)
    std::vector<std::remove_cvref_t<decltype(row[0])>> sorted(row.begin(), row.end());
    for (std::size_t w = 0; w < sorted.size(); w += 256)
      std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(w),
                sorted.begin() + static_cast<std::ptrdiff_t>(std::min(sorted.size(), w + 256)), std::greater<>());
    for (std::size_t r = 0; r < sorted.size(); r += 8) s.sell8s += 8 * static_cast<double>(sorted[r]);
  }
  for (const auto c : col) {
    s.cols_used += c != 0;
    s.longest_col = std::max(s.longest_col, static_cast<double>(c));
  }
  s.blocks4 = count_blocks(m, n, coords, 4, 4);
  s.rows4 = count_blocks(m, n, coords, 4, 1);
  s.rows8 = count_blocks(m, n, coords, 8, 1);
  s.diab16 = count_blocks(m, n, coords, 16, 0);
  if (m == n) {
    // SpGEMM A*A: every entry A(i,k) meets row k.
    for (std::size_t e = 0; e < z; ++e) s.products += static_cast<double>(row[uz(coords[2 * e + 1])]);
    // Row merges of COO and DCSR SpGEMM: for row i the generated loop walks
    // the row list of A (every entry for COO, which finds each row's end by
    // scanning; every non-empty row for DCSR) up to row last_col(i).
    std::vector<double> entries_before(uz(m) + 1, 0), rows_before(uz(m) + 1, 0);
    for (std::size_t r = 0; r < uz(m); ++r) {
      entries_before[r + 1] = entries_before[r] + static_cast<double>(row[r]);
      rows_before[r + 1] = rows_before[r] + (row[r] != 0);
    }
    for (std::size_t r = 0; r < uz(m); ++r)
      if (row[r] != 0) {
        s.coo_merge += entries_before[uz(last_col[r]) + 1];
        s.dcsr_merge += rows_before[uz(last_col[r]) + 1];
      }
  }
  return s;
}

namespace {

constexpr double index_bytes = sizeof(index_t);
/// Work units per output entry that is sorted before it is stored: a
/// "stream" output (collected as coordinates, then sorted and packed into
/// CSR) or SpGEMM's workspace (each row's coordinates sorted): measured at
/// about 16 simple loop steps (30-60 ns in a Release build).
constexpr double sorted_weight = 16;

std::string num(double v) {
  char buf[32];
  if (v < 1e7)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

/// How one matrix operand is stored: positions a pass over it visits
/// (`scan`), positions holding a value the kernel multiplies (`stored`,
/// padding included), bytes, and what makes them up.
struct layout {
  double scan = 0, stored = 0, bytes = 0;
  std::string what;
};

/// Layout of A (or of A^T when transposed) in matrix format f.
layout matrix_layout(std::size_t f, const input_stats& s, double v, bool transposed) {
  const double m = s.dims[transposed ? 1 : 0], n = s.dims[transposed ? 0 : 1], z = s.nnz;
  const double rows_used = transposed ? s.cols_used : s.rows_used;
  const double longest = transposed ? s.longest_col : s.longest_row;
  layout l;
  switch (static_cast<matrix_format>(f)) {
    case f_csr:
    case f_csr_long:
      l = {m + z, z, (m + 1) * index_bytes + z * (index_bytes + v), num(z) + " entries"};
      break;
    case f_csc:
      l = {n + z, z, (n + 1) * index_bytes + z * (index_bytes + v), num(z) + " entries"};
      break;
    case f_coo:
    case f_coo_aos:
      l = {z, z, 2 * index_bytes + z * (2 * index_bytes + v), num(z) + " entries"};
      break;
    case f_dcsr:
      l = {rows_used + z, z, (2 * rows_used + 3) * index_bytes + z * (index_bytes + v), num(z) + " entries"};
      break;
    case f_ell:
      l = {longest * m, longest * m, longest * m * (index_bytes + v),
           num(longest) + " slots (longest " + (transposed ? "column" : "row") + ") x " + num(m) + " rows = " +
               num(longest * m) + " values"};
      break;
    case f_dia:
      l = {s.diagonal_span + s.diagonals, s.diagonal_span, s.diagonals * (index_bytes + m * v),
           num(s.diagonals) + " diagonals x " + num(m) + " rows = " + num(s.diagonals * m) + " values"};
      break;
    case f_bcsr4: {
      const double brows = std::ceil(m / 4);
      l = {brows + s.blocks4, 16 * s.blocks4, (brows + 1 + s.blocks4) * index_bytes + 16 * s.blocks4 * v,
           num(s.blocks4) + " 4x4 blocks = " + num(16 * s.blocks4) + " values"};
      break;
    }
    case f_csb: {
      const double grid = std::ceil(m / 64) * std::ceil(n / 64);
      l = {grid + z, z, (grid + 1) * index_bytes + z * (2 * index_bytes + v),
           num(z) + " entries in a grid of " + num(grid) + " 64x64 blocks"};
      break;
    }
    case f_hash: {
      // hashed.hpp: W = bit_ceil(2 * most children of one parent) buckets per row.
      const double w = static_cast<double>(std::bit_ceil(static_cast<std::uint64_t>(std::max(1.0, 2 * longest))));
      l = {m * w, z, m * w * (index_bytes + v),
           num(w) + " buckets (2 x longest " + (transposed ? "column" : "row") + ", power of 2) x " + num(m) +
               " rows = " + num(m * w) + " slots"};
      break;
    }
    case f_dense:
      l = {m * n, m * n, m * n * v, num(m) + " x " + num(n) + " = " + num(m * n) + " values"};
      break;
    case f_sell8: {
      // SpMV only (unsupported_reason), never transposed.
      const double slices = std::ceil(m / 8);
      l = {slices + s.sell8, s.sell8, (slices + 1) * index_bytes + s.sell8 * (index_bytes + v),
           num(slices) + " slices of 8 rows, padded to their longest: " + num(s.sell8) + " slots"};
      break;
    }
    case f_sell8s: {
      // SpMV only (unsupported_reason), never transposed; the permutation adds a row index per row.
      const double slices = std::ceil(m / 8);
      l = {slices + s.sell8s, s.sell8s, (slices + 1 + m) * index_bytes + s.sell8s * (index_bytes + v),
           num(slices) + " slices of 8 rows sorted by length in windows of 256, padded to their longest: " +
               num(s.sell8s) + " slots"};
      break;
    }
    case f_rows4:
    case f_rows8: {
      // SpMV only (unsupported_reason), never transposed.
      const double g = f == f_rows4 ? 4 : 8, pairs = f == f_rows4 ? s.rows4 : s.rows8;
      const double groups = std::ceil(m / g);
      l = {groups + pairs, g * pairs, (groups + 1 + pairs) * index_bytes + g * pairs * v,
           num(groups) + " groups of " + num(g) + " rows, " + num(pairs) + " columns in all = " + num(g * pairs) +
               " values"};
      break;
    }
    case f_diab16: {
      // SpMV only (unsupported_reason), never transposed: a diagonal index per (block, diagonal) pair.
      const double blocks = std::ceil(m / 16), pairs = s.diab16;
      l = {blocks + pairs, 16 * pairs, (blocks + 1 + pairs) * index_bytes + 16 * pairs * v,
           num(blocks) + " blocks of 16 rows, " + num(pairs) + " diagonals in all = " + num(16 * pairs) + " values"};
      break;
    }
  }
  return l;
}

/// Formats whose kernel collects the output as coordinates and sorts them
/// (output "stream" in loop_nest) rather than appending rows in order.
bool streams_output(kernel_id k, std::size_t f) {
  if (k == kernel_id::spmv || k == kernel_id::spmm) return false;  // dense output
  switch (f) {
    case f_csc:
    case f_ell:
    case f_dia:
    case f_hash: return true;
    case f_bcsr4:
    case f_csb: return k == kernel_id::sddmm;
    default: return false;
  }
}

format_estimate matrix_estimate(kernel_id k, std::size_t f, const input_stats& s, double v, double extra) {
  const layout a = matrix_layout(f, s, v, false);
  const double m = s.dims[0], n = s.dims[1], z = s.nnz;
  format_estimate e;
  e.bytes = a.bytes;
  e.bytes_detail = a.what;
  // Output entries the loops produce before duplicates are combined; they
  // cost extra where the output is collected and sorted (streams_output).
  double out = 0;
  switch (k) {
    case kernel_id::spmv:
      e.work = a.scan + a.stored;
      e.work_detail = "one step per stored position";
      break;
    case kernel_id::spmm:
    case kernel_id::sddmm:
      e.work = a.scan + a.stored * extra;
      e.work_detail = num(a.stored) + " stored positions x " + num(extra) +
                      (k == kernel_id::spmm ? " columns of B" : " (rank)");
      out = k == kernel_id::sddmm ? a.stored : 0;
      break;
    case kernel_id::add: {
      const layout t = matrix_layout(f, s, v, true);
      e.bytes += t.bytes;
      e.bytes_detail = "A and A^T: " + a.what + "; " + t.what;
      e.work = a.scan + t.scan;
      e.work_detail = "one pass over A and one over A^T";
      out = a.stored + t.stored;
      if (f == f_hash) {
        // Neither hashed row can be merged in order: every column of every
        // row is looked up in both.
        e.work += 2 * m * n;
        e.work_detail = "every column of every row probed in A's and A^T's buckets: " + num(2 * m * n) + " probes";
      }
      if (f == f_ell || f == f_dia) {
        // Two loop nests (A, then A^T accumulated): the second one collects
        // the first one's result again.
        out = 2 * a.stored + t.stored;
      }
      break;
    }
    case kernel_id::spgemm: {
      // C(i,j) = A(i,k) * A(k,j): each stored A(i,k) meets row k as stored.
      const double p = s.products;
      switch (f) {
        case f_csr:
        case f_csc:
          e.work = a.scan + p;
          e.work_detail = num(p) + " products";
          out = p;
          break;
        case f_coo:
        case f_coo_aos:
        case f_dcsr: {
          const bool coo = f != f_dcsr;
          const double merge = coo ? s.coo_merge : s.dcsr_merge;
          e.work = merge + p;
          e.work_detail = std::string("each row merged with the ") + (coo ? "entries of rows" : "non-empty rows") +
                          " 0..its last column: " + num(merge) + " steps, plus " + num(p) + " products";
          out = p;
          break;
        }
        case f_ell: {
          const double kk = s.longest_row;
          e.work = a.scan * kk;
          e.work_detail = num(a.scan) + " stored slots (padding included) x " + num(kk) + " slots of row k";
          out = a.scan * kk;
          break;
        }
        case f_dia:
          // Each stored A(i,k) visits every diagonal and finds row k in it
          // by stepping along the diagonal's range from its start: about
          // half the positions of all diagonals per stored position.
          e.work = a.stored * s.diagonals + a.stored * a.stored / 2;
          e.work_detail = num(a.stored) + " stored positions, each scanning the " + num(s.diagonals) +
                          " diagonals for row k (~" + num(a.stored) + "^2 / 2 steps)";
          out = a.stored * a.stored / m;
          break;
        case f_hash: {
          const double w = a.scan / m;
          e.work = a.scan + z * w + p;
          e.work_detail = num(z) + " entries, each visiting the " + num(w) + " buckets of row k";
          out = p;
          break;
        }
        case f_dense:
          e.work = m * n * n;
          e.work_detail = num(m) + " x " + num(n) + " x " + num(n) + " multiply-adds";
          out = m * n;
          break;
        default:  // BCSR, CSB: unsupported (unsupported_reason)
          break;
      }
      break;
    }
    default:
      break;
  }
  if (f == f_dense && k != kernel_id::spmv && k != kernel_id::spmm)
    out = std::max(out, m * n);  // a dense operand yields every position of C
  if (streams_output(k, f)) {
    e.work += sorted_weight * out;
    e.work_detail += "; " + num(out) + " output entries collected and sorted (x" + num(sorted_weight) + ")";
  } else if (k == kernel_id::spgemm) {
    e.work += sorted_weight * out;
    e.work_detail += "; up to " + num(out) + " output entries sorted row by row (x" + num(sorted_weight) + ")";
  } else {
    e.work += out;  // entries appended to the result in order
  }
  return e;
}

format_estimate tensor_estimate(kernel_id k, std::size_t f, const input_stats& s, double v, double extra) {
  const double z = s.nnz, dense = s.dims[0] * s.dims[1] * s.dims[2];
  format_estimate e;
  double scan = z, stored = z;
  switch (static_cast<tensor_format>(f)) {
    case f_coo3:
      e.bytes = 2 * index_bytes + z * (3 * index_bytes + v);
      e.bytes_detail = num(z) + " entries";
      break;
    case f_csf:
      scan = 3 * z;  // at most one fiber per level per entry
      e.bytes = z * (5 * index_bytes + v);
      e.bytes_detail = num(z) + " entries (fibers: at most one per entry and level)";
      break;
    case f_dense3:
      scan = stored = dense;
      e.bytes = dense * v;
      e.bytes_detail = num(s.dims[0]) + " x " + num(s.dims[1]) + " x " + num(s.dims[2]) + " = " + num(dense) +
                       " values";
      break;
  }
  switch (k) {
    case kernel_id::ttm:
    case kernel_id::mttkrp:
      e.work = scan + stored * extra;
      e.work_detail = num(stored) + " stored positions x " + num(extra) + " (rank)";
      break;
    case kernel_id::plus:
      // A symbolic and a numeric pass, each over both operands; the COO
      // result has one entry per stored position.
      e.work = 4 * scan + stored;
      e.work_detail = "two passes over both operands, " + num(stored) + " result entries";
      break;
    default:  // ttv, innerprod
      e.work = 2 * scan;
      e.work_detail = "one step per stored position";
      break;
  }
  return e;
}

}  // namespace

std::string bytes_text(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
  return buf;
}

format_estimate estimate_format(kernel_id k, std::size_t f, const input_stats& s, std::size_t value_bytes,
                                double cols_or_rank) {
  const double v = static_cast<double>(value_bytes);
  return s.dims.size() == 2 ? matrix_estimate(k, f, s, v, cols_or_rank) : tensor_estimate(k, f, s, v, cols_or_rank);
}

std::string budget_skip(const format_estimate& e, const budget& b) {
  if (e.bytes > b.bytes)
    return "would store ~" + bytes_text(e.bytes) + " (" + e.bytes_detail + "), over --max-bytes " + bytes_text(b.bytes);
  if (e.work > b.work)
    return "one kernel run would take ~" + num(e.work) + " steps (" + e.work_detail + "), over --max-work " +
           num(b.work);
  return "";
}

}  // namespace tlx
