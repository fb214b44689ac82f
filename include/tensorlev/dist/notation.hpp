#pragma once
/// @file dist/notation.hpp
/// Tensor distribution notation (DISTAL §3.2), checked at compile time.
///
///     using rows  = tensorlev::dist::distribution<"xy->x">;   // row blocks
///     using tiles = tensorlev::dist::distribution<"xy->xy">;  // 2D tiles
///     using face  = tensorlev::dist::distribution<"xy->xy0">; // tiles on the face z = 0
///     using repl  = tensorlev::dist::distribution<"xy->xy*">; // tiles copied along z
///     using hier  = tensorlev::dist::distribution<"[xy->xy, zw->z]">; // tiles over nodes, rows within
///
/// Left of `->`, one name (a letter) per tensor dimension; right of it, one
/// entry per machine dimension: a tensor dimension's name (that dimension is
/// partitioned over this machine dimension), a constant (the tensor is fixed
/// to that index of the machine dimension: one digit, as in `"xy->x00"`, or
/// several in parentheses, `"x->x(12)"`) or `*` (the pieces are broadcast,
/// i.e. replicated, along it). Valid when neither side repeats a name and
/// every name on the right appears on the left; a statement that breaks a
/// rule does not compile, and the static_assert names the rule.
///
/// Semantics (DISTAL's P and F): a tensor coordinate's *color* is the block
/// index of each partitioned dimension, in machine-dimension order (P); a
/// color maps to the set of machine coordinates that hold it, expanding
/// fixed and broadcast machine dimensions (F). `distribution_map` computes
/// both for given tensor and machine extents, plus the box each processor
/// holds. Partitions are blocked by default (contiguous pieces, sizes
/// differing by at most one); split points may be set per tensor dimension
/// (non-uniform, SuperTaco §4.1), e.g. from `balanced_splits` over nonzero
/// counts. A hierarchical statement is a list: each level distributes the
/// pieces of the level before it over that level's machine.

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../error.hpp"

namespace tensorlev::dist {

/// A string usable as a template argument: `distribution<"xy->x">`.
template <std::size_t N>
struct fixed_string {
  char chars[N]{};
  // NOLINTNEXTLINE(google-explicit-constructor): converts string literals in template arguments
  consteval fixed_string(const char (&s)[N]) {
    for (std::size_t k = 0; k < N; ++k) chars[k] = s[k];
  }
  [[nodiscard]] constexpr std::string_view view() const { return {chars, N - 1}; }
};

/// The most dimensions of a tensor or machine, and levels of a hierarchy.
inline constexpr std::size_t max_dist_dims = 8;

enum class machine_dim_kind : unsigned char { partition, fixed, broadcast };

/// One machine dimension of a statement.
struct machine_dim {
  machine_dim_kind kind = machine_dim_kind::broadcast;
  std::size_t tensor_dim = 0;  ///< partition: the tensor dimension split over it
  long long fixed = 0;         ///< fixed: the machine index
};

/// One statement `X -> Y`.
struct dist_statement {
  std::size_t tensor_order = 0;
  std::size_t machine_order = 0;
  std::array<char, max_dist_dims> tensor_names{};
  std::array<machine_dim, max_dist_dims> machine{};
  /// Whether tensor dimension d is partitioned (appears on the right).
  [[nodiscard]] constexpr bool partitioned(std::size_t d) const {
    for (std::size_t m = 0; m < machine_order; ++m)
      if (machine[m].kind == machine_dim_kind::partition && machine[m].tensor_dim == d) return true;
    return false;
  }
};

enum class notation_error : unsigned char {
  none,
  no_arrow,
  empty_tensor_side,
  empty_machine_side,
  bad_tensor_name,
  bad_machine_name,
  duplicate_tensor_name,
  duplicate_machine_name,
  unknown_machine_name,
  too_many_dims,
  bad_list,
  orders_differ,
};

struct parsed_notation {
  notation_error error = notation_error::none;
  std::size_t levels = 0;
  std::array<dist_statement, max_dist_dims> level{};
};

namespace detail {
constexpr bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) { return c >= '0' && c <= '9'; }
constexpr bool is_space(char c) { return c == ' ' || c == '\t'; }
// string_view::find compares pointers with null, which GCC 12 does not
// accept as a constant expression on template parameter objects under
// -fsanitize=address; an index loop is.
constexpr std::size_t index_of(std::string_view s, std::string_view pat) {
  for (std::size_t k = 0; k + pat.size() <= s.size(); ++k) {
    bool same = true;
    for (std::size_t m = 0; m < pat.size() && same; ++m) same = s[k + m] == pat[m];
    if (same) return k;
  }
  return std::string_view::npos;
}

constexpr notation_error parse_statement(std::string_view s, dist_statement& out) {
  const std::size_t arrow = index_of(s, "->");
  if (arrow == std::string_view::npos) return notation_error::no_arrow;
  for (char c : s.substr(0, arrow)) {
    if (is_space(c)) continue;
    if (!is_letter(c)) return notation_error::bad_tensor_name;
    if (out.tensor_order == max_dist_dims) return notation_error::too_many_dims;
    for (std::size_t k = 0; k < out.tensor_order; ++k)
      if (out.tensor_names[k] == c) return notation_error::duplicate_tensor_name;
    out.tensor_names[out.tensor_order++] = c;
  }
  if (out.tensor_order == 0) return notation_error::empty_tensor_side;
  const std::string_view rhs = s.substr(arrow + 2);
  for (std::size_t k = 0; k < rhs.size();) {
    const char c = rhs[k];
    if (is_space(c)) {
      ++k;
      continue;
    }
    if (out.machine_order == max_dist_dims) return notation_error::too_many_dims;
    machine_dim& m = out.machine[out.machine_order];
    if (c == '*') {
      m.kind = machine_dim_kind::broadcast;
      ++k;
    } else if (is_digit(c)) {  // one digit, one machine dimension: "xy->x00"
      m.kind = machine_dim_kind::fixed;
      m.fixed = c - '0';
      ++k;
    } else if (c == '(') {  // a constant of several digits: "x->x(12)"
      m.kind = machine_dim_kind::fixed;
      m.fixed = 0;
      std::size_t e = k + 1;
      for (; e < rhs.size() && is_digit(rhs[e]); ++e) {
        if (m.fixed > 100000000) return notation_error::bad_machine_name;
        m.fixed = m.fixed * 10 + (rhs[e] - '0');
      }
      if (e == k + 1 || e == rhs.size() || rhs[e] != ')') return notation_error::bad_machine_name;
      k = e + 1;
    } else if (is_letter(c)) {
      std::size_t d = 0;
      while (d < out.tensor_order && out.tensor_names[d] != c) ++d;
      if (d == out.tensor_order) return notation_error::unknown_machine_name;
      for (std::size_t j = 0; j < out.machine_order; ++j)
        if (out.machine[j].kind == machine_dim_kind::partition && out.machine[j].tensor_dim == d)
          return notation_error::duplicate_machine_name;
      m.kind = machine_dim_kind::partition;
      m.tensor_dim = d;
      ++k;
    } else {
      return notation_error::bad_machine_name;
    }
    ++out.machine_order;
  }
  if (out.machine_order == 0) return notation_error::empty_machine_side;
  return notation_error::none;
}
}  // namespace detail

/// Parses one statement or a bracketed, comma-separated hierarchy.
constexpr parsed_notation parse_notation(std::string_view s) {
  parsed_notation p;
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && detail::is_space(s[b])) ++b;
  while (e > b && detail::is_space(s[e - 1])) --e;
  s = s.substr(b, e - b);
  const bool list = !s.empty() && s.front() == '[';
  if (list) {
    if (s.back() != ']') {
      p.error = notation_error::bad_list;
      return p;
    }
    s = s.substr(1, s.size() - 2);
  } else if (detail::index_of(s, ",") != std::string_view::npos || detail::index_of(s, "]") != std::string_view::npos) {
    p.error = notation_error::bad_list;
    return p;
  }
  while (true) {
    const std::size_t comma = detail::index_of(s, ",");
    if (p.levels == max_dist_dims) {
      p.error = notation_error::too_many_dims;
      return p;
    }
    p.error = detail::parse_statement(s.substr(0, comma), p.level[p.levels]);
    if (p.error != notation_error::none) return p;
    if (p.levels > 0 && p.level[p.levels].tensor_order != p.level[0].tensor_order) {
      p.error = notation_error::orders_differ;
      return p;
    }
    ++p.levels;
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  return p;
}

/// A tensor distribution notation statement, validated at compile time.
template <fixed_string S>
struct distribution {
  static constexpr parsed_notation parsed = parse_notation(S.view());
  static_assert(parsed.error != notation_error::no_arrow,
                "tensorlev::dist::distribution: a statement needs '->' between the tensor's and the machine's "
                "dimension names, as in \"xy->x\"");
  static_assert(parsed.error != notation_error::empty_tensor_side,
                "tensorlev::dist::distribution: name each tensor dimension left of '->' (|X| = order of the tensor)");
  static_assert(parsed.error != notation_error::empty_machine_side,
                "tensorlev::dist::distribution: give one entry per machine dimension right of '->' (|Y| = "
                "dimensions of the machine)");
  static_assert(parsed.error != notation_error::bad_tensor_name,
                "tensorlev::dist::distribution: tensor dimension names (left of '->') are single letters");
  static_assert(parsed.error != notation_error::bad_machine_name,
                "tensorlev::dist::distribution: a machine dimension (right of '->') is a tensor dimension's name, a "
                "constant index or '*'");
  static_assert(parsed.error != notation_error::duplicate_tensor_name,
                "tensorlev::dist::distribution: a tensor dimension name appears twice left of '->' (X must not "
                "repeat a name)");
  static_assert(parsed.error != notation_error::duplicate_machine_name,
                "tensorlev::dist::distribution: a tensor dimension is partitioned over two machine dimensions (Y "
                "must not repeat a name)");
  static_assert(parsed.error != notation_error::unknown_machine_name,
                "tensorlev::dist::distribution: a name right of '->' is not a dimension of the tensor (every name in "
                "Y must appear in X)");
  static_assert(parsed.error != notation_error::too_many_dims,
                "tensorlev::dist::distribution: at most 8 dimensions per side and 8 levels");
  static_assert(parsed.error != notation_error::bad_list,
                "tensorlev::dist::distribution: a hierarchy is a bracketed list of statements, as in "
                "\"[xy->xy, zw->z]\"");
  static_assert(parsed.error != notation_error::orders_differ,
                "tensorlev::dist::distribution: every level of a hierarchy must name the same number of tensor "
                "dimensions");

  static constexpr std::size_t levels = parsed.levels;
  static constexpr std::size_t tensor_order = parsed.level[0].tensor_order;
  /// Machine dimensions of level l.
  static constexpr std::size_t machine_order(std::size_t l = 0) { return parsed.level[l].machine_order; }
  static constexpr const dist_statement& statement(std::size_t l = 0) { return parsed.level[l]; }
  static constexpr std::string_view text = S.view();
};

/// Bounds of piece k of n components split into `parts` contiguous pieces
/// whose sizes differ by at most one (the larger ones first).
[[nodiscard]] constexpr std::array<long long, 2> block_bounds(long long n, long long parts, long long k) {
  const long long q = n / parts;
  const long long r = n % parts;
  const long long lo = k * q + (k < r ? k : r);
  return {lo, lo + q + (k < r ? 1 : 0)};
}

/// Split points (parts + 1 of them, from 0 to the extent) of rows whose
/// stored entries are counted by `row_ptr` (rows + 1 prefix sums, as a CSR
/// row map): each cut is the row boundary nearest k * nnz / parts, so each
/// piece holds about nnz / parts entries (SuperTaco's balanced load). Pieces may be empty when a row holds more than a share.
template <class I>
[[nodiscard]] std::vector<long long> balanced_splits(std::span<const I> row_ptr, long long parts) {
  if (parts <= 0) throw shape_error("balanced_splits: " + std::to_string(parts) + " parts (must be positive)");
  if (row_ptr.empty()) throw shape_error("balanced_splits: row_ptr is empty (needs rows + 1 entries)");
  const long long rows = static_cast<long long>(row_ptr.size()) - 1;
  const long long nnz = static_cast<long long>(row_ptr[static_cast<std::size_t>(rows)]);
  std::vector<long long> split(static_cast<std::size_t>(parts) + 1, rows);
  split[0] = 0;
  long long row = 0;
  for (long long k = 1; k < parts; ++k) {
    // First row whose start reaches k/parts of the entries.
    const long long target = (nnz / parts) * k + ((nnz % parts) * k) / parts;  // nnz * k / parts, no overflow
    const auto start = [&](long long r) { return static_cast<long long>(row_ptr[static_cast<std::size_t>(r)]); };
    while (row < rows && start(row) < target) ++row;
    // The row boundary nearest the target: this one or the one before it.
    long long cut = row;
    if (row > split[static_cast<std::size_t>(k) - 1] && target - start(row - 1) < start(row) - target) cut = row - 1;
    split[static_cast<std::size_t>(k)] = cut;
    row = cut;
  }
  return split;
}

/// A box of tensor coordinates: [lo[d], hi[d]) in each dimension.
struct block_box {
  std::vector<long long> lo;
  std::vector<long long> hi;
  [[nodiscard]] long long extent(std::size_t d) const { return hi[d] - lo[d]; }
  [[nodiscard]] bool contains(std::span<const long long> x) const {
    for (std::size_t d = 0; d < lo.size(); ++d)
      if (x[d] < lo[d] || x[d] >= hi[d]) return false;
    return true;
  }
  friend bool operator==(const block_box&, const block_box&) = default;
};

/// A statement applied to tensor and machine extents: P (coordinate ->
/// color), F (color -> processors) and each processor's box. Level
/// `level` of the distribution D; `dims` are the tensor's extents (for
/// inner levels of a hierarchy, the extents of the outer level's piece).
template <class D>
class distribution_map {
 public:
  using color = std::vector<long long>;       ///< block index per partitioning machine dimension
  using processor = std::vector<long long>;   ///< a machine coordinate

  distribution_map(std::vector<long long> dims, std::vector<long long> machine, std::size_t level = 0)
      : st_(D::statement(level < D::levels ? level : 0)), dims_(std::move(dims)), machine_(std::move(machine)) {
    const std::string where = "tensorlev::dist::distribution<\"" + std::string(D::text) + "\">: ";
    if (level >= D::levels)
      throw shape_error(where + "level " + std::to_string(level) + " of a " + std::to_string(D::levels) +
                        "-level distribution");
    if (dims_.size() != st_.tensor_order)
      throw shape_error(where + "a tensor of order " + std::to_string(dims_.size()) + " for " +
                        std::to_string(st_.tensor_order) + " tensor dimension names");
    if (machine_.size() != st_.machine_order)
      throw shape_error(where + "a machine of " + std::to_string(machine_.size()) + " dimensions for " +
                        std::to_string(st_.machine_order) + " machine dimension entries");
    for (std::size_t d = 0; d < dims_.size(); ++d)
      if (dims_[d] < 0) throw shape_error(where + "tensor dimension " + std::to_string(d) + " is negative");
    splits_.resize(dims_.size());
    for (std::size_t m = 0; m < machine_.size(); ++m) {
      if (machine_[m] <= 0)
        throw shape_error(where + "machine dimension " + std::to_string(m) + " has " + std::to_string(machine_[m]) +
                          " processors");
      const machine_dim& md = st_.machine[m];
      if (md.kind == machine_dim_kind::fixed && md.fixed >= machine_[m])
        throw shape_error(where + "fixed index " + std::to_string(md.fixed) + " is outside machine dimension " +
                          std::to_string(m) + " of " + std::to_string(machine_[m]) + " processors");
      if (md.kind == machine_dim_kind::partition) {
        const long long n = dims_[md.tensor_dim];
        auto& s = splits_[md.tensor_dim];
        s.resize(static_cast<std::size_t>(machine_[m]) + 1);
        for (long long k = 0; k <= machine_[m]; ++k)
          s[static_cast<std::size_t>(k)] = k == machine_[m] ? n : block_bounds(n, machine_[m], k)[0];
      }
    }
  }

  /// Non-uniform split points for partitioned tensor dimension d: one more
  /// than the processors of its machine dimension, from 0 to the extent,
  /// non-decreasing.
  void set_splits(std::size_t d, std::vector<long long> points) {
    const std::string where = "tensorlev::dist::distribution<\"" + std::string(D::text) + "\">::set_splits: ";
    if (d >= dims_.size() || !st_.partitioned(d))
      throw shape_error(where + "tensor dimension " + std::to_string(d) + " is not partitioned");
    if (points.size() != splits_[d].size())
      throw shape_error(where + std::to_string(points.size()) + " split points for " +
                        std::to_string(splits_[d].size() - 1) + " pieces (need pieces + 1)");
    if (points.front() != 0 || points.back() != dims_[d])
      throw shape_error(where + "split points must run from 0 to the extent " + std::to_string(dims_[d]));
    for (std::size_t k = 1; k < points.size(); ++k)
      if (points[k] < points[k - 1])
        throw shape_error(where + "split points decrease at " + std::to_string(k));
    splits_[d] = std::move(points);
  }
  [[nodiscard]] const std::vector<long long>& splits(std::size_t d) const { return splits_[d]; }

  [[nodiscard]] const std::vector<long long>& dims() const noexcept { return dims_; }
  [[nodiscard]] const std::vector<long long>& machine() const noexcept { return machine_; }
  [[nodiscard]] const dist_statement& statement() const noexcept { return st_; }

  /// P: the color of tensor coordinate x.
  [[nodiscard]] color color_of(std::span<const long long> x) const {
    color c;
    for (std::size_t m = 0; m < machine_.size(); ++m) {
      const machine_dim& md = st_.machine[m];
      if (md.kind != machine_dim_kind::partition) continue;
      const auto& s = splits_[md.tensor_dim];
      const long long v = x[md.tensor_dim];
      // Last piece whose start is <= v (empty pieces are skipped).
      std::size_t lo = 0;
      std::size_t hi = s.size() - 1;
      while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        (s[mid] <= v ? lo : hi) = mid;
      }
      c.push_back(static_cast<long long>(lo));
    }
    return c;
  }

  /// F: the processors that hold color c (more than one where broadcast).
  [[nodiscard]] std::vector<processor> processors_of(const color& c) const {
    std::vector<processor> out(1);
    std::size_t ci = 0;
    for (std::size_t m = 0; m < machine_.size(); ++m) {
      const machine_dim& md = st_.machine[m];
      if (md.kind == machine_dim_kind::broadcast) {
        std::vector<processor> next;
        for (const auto& p : out)
          for (long long k = 0; k < machine_[m]; ++k) {
            next.push_back(p);
            next.back().push_back(k);
          }
        out = std::move(next);
      } else {
        const long long v = md.kind == machine_dim_kind::fixed ? md.fixed : c[ci++];
        for (auto& p : out) p.push_back(v);
      }
    }
    return out;
  }

  /// The box of tensor coordinates processor p holds, or nullopt if it holds
  /// nothing (it is off the face a fixed dimension selects).
  [[nodiscard]] std::optional<block_box> box_of(std::span<const long long> p) const {
    block_box b{std::vector<long long>(dims_.size(), 0), dims_};
    for (std::size_t m = 0; m < machine_.size(); ++m) {
      const machine_dim& md = st_.machine[m];
      if (md.kind == machine_dim_kind::fixed && p[m] != md.fixed) return std::nullopt;
      if (md.kind == machine_dim_kind::partition) {
        const auto& s = splits_[md.tensor_dim];
        b.lo[md.tensor_dim] = s[static_cast<std::size_t>(p[m])];
        b.hi[md.tensor_dim] = s[static_cast<std::size_t>(p[m]) + 1];
      }
    }
    return b;
  }

  /// Whether p is the one processor of its color that owns the piece when
  /// pieces are gathered (broadcast copies other than index 0 are not).
  [[nodiscard]] bool is_owner(std::span<const long long> p) const {
    for (std::size_t m = 0; m < machine_.size(); ++m) {
      const machine_dim& md = st_.machine[m];
      if (md.kind == machine_dim_kind::fixed && p[m] != md.fixed) return false;
      if (md.kind == machine_dim_kind::broadcast && p[m] != 0) return false;
    }
    return true;
  }

 private:
  dist_statement st_;
  std::vector<long long> dims_;
  std::vector<long long> machine_;
  std::vector<std::vector<long long>> splits_;  // per partitioned tensor dimension
};

}  // namespace tensorlev::dist
