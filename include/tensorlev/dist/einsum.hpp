#pragma once
/// @file dist/einsum.hpp
/// Einsum strings and the planning Deinsum (seed 002) does before any data
/// moves; no MPI here.
///
///     using mttkrp = tensorlev::dist::einsum<"ijk,ja,ka->ia">;   // checked at compile time
///     auto path = optimal_path(mttkrp::spec, extents);             // binary contractions, by FLOPs
///     std::cout << path.to_string(mttkrp::spec);                    // "ijk,ja->ika" ...
///     auto tile = soap_tiling(group, S);                            // I/O lower bound (SOAP)
///     auto grid = soap_grid(group, extents, P);                     // one grid per contraction group
///
/// - `parse_einsum` reads `"in1,in2,...->out"`: letters only, one per
///   dimension, no letter twice in one operand, every output letter in
///   some input (the output may be empty: a full contraction). `einsum<S>`
///   parses at compile time and a malformed string does not compile (the
///   static_assert names the rule).
/// - `optimal_path`: the order of binary contractions with the fewest
///   FLOPs, by dynamic programming over subsets of the inputs (opt_einsum's
///   "optimal"): a step over the union of its operands' indices costs their
///   extents' product, twice that when it sums an index out (a multiply and
///   an add). An intermediate keeps the indices that a later operand or the
///   output still reads.
/// - `soap_tiling`: Deinsum's SOAP bound for one contraction group (its
///   iteration space and the access sets of its operands *and output*,
///   seeds_002_004.md 1.3): the tile t that maximizes the iteration volume
///   |V(X)| = prod t_v with sum over tensors of prod_{v in T} t_v <= X, the
///   X0 > S minimizing |V(X)| / (X - S), the intensity rho = |V(X0)| /
///   (X0 - S), and Q >= |V| / rho words of I/O for the whole space.
/// - `soap_grid`: the processor grid for P ranks, one factor per index, each
///   at most its extent: the factorization of P whose per-rank tile (the
///   extents divided by the factors, rounded up) has the smallest sum of
///   access sets, i.e. the largest intensity for the same per-rank volume.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../codegen.hpp"
#include "../error.hpp"
#include "notation.hpp"

namespace tensorlev::dist {

/// The most input operands of an einsum, and distinct indices in one.
inline constexpr std::size_t max_einsum_inputs = 8;
inline constexpr std::size_t max_einsum_indices = 16;

enum class einsum_error : unsigned char {
  none,
  no_arrow,            // no "->"
  bad_character,       // not a letter, ',' or "->"
  empty_input,         // an input with no index ("ij,,jk->ik")
  too_many_inputs,     // more than max_einsum_inputs
  operand_order,       // an operand with more than max_dist_dims indices
  too_many_indices,    // more than max_einsum_indices distinct letters
  repeated_index,      // a letter twice in one operand
  output_not_in_input  // an output letter no input has
};

/// A parsed einsum. Indices are numbered in order of first appearance
/// (inputs left to right, then the output); masks have bit v for index v.
struct einsum_spec {
  einsum_error error = einsum_error::none;
  std::size_t position = 0;  // where the error is, in the string
  std::size_t ninputs = 0;
  std::array<std::array<int, max_dist_dims>, max_einsum_inputs> input{};  // index numbers per dimension
  std::array<std::size_t, max_einsum_inputs> input_order{};
  std::array<int, max_dist_dims> output{};
  std::size_t output_order = 0;
  std::array<char, max_einsum_indices> letter{};  // index number -> letter
  std::size_t nindices = 0;

  [[nodiscard]] constexpr std::uint32_t input_mask(std::size_t k) const {
    std::uint32_t m = 0;
    for (std::size_t d = 0; d < input_order[k]; ++d) m |= std::uint32_t{1} << input[k][d];
    return m;
  }
  [[nodiscard]] constexpr std::uint32_t output_mask() const {
    std::uint32_t m = 0;
    for (std::size_t d = 0; d < output_order; ++d) m |= std::uint32_t{1} << output[d];
    return m;
  }
  /// The letters of the indices in mask m, in index order.
  [[nodiscard]] std::string letters(std::uint32_t m) const {
    std::string s;
    for (std::size_t v = 0; v < nindices; ++v)
      if ((m >> v) & 1U) s += letter[v];
    return s;
  }
};

namespace detail {
constexpr bool einsum_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace detail

/// Parses "in1,in2,...->out" (see the file's comment); `error` says what is
/// wrong and `position` where.
constexpr einsum_spec parse_einsum(std::string_view s) {
  einsum_spec e{};
  auto fail = [&](einsum_error err, std::size_t at) {
    e.error = err;
    e.position = at;
    return e;
  };
  const std::size_t arrow = s.find("->");
  if (arrow == std::string_view::npos) return fail(einsum_error::no_arrow, s.size());
  auto index_of = [&](char c) -> int {
    for (std::size_t v = 0; v < e.nindices; ++v)
      if (e.letter[v] == c) return static_cast<int>(v);
    return -1;
  };
  // Inputs.
  std::size_t k = 0, d = 0;
  for (std::size_t at = 0; at <= arrow; ++at) {
    if (at == arrow || s[at] == ',') {
      if (d == 0) return fail(einsum_error::empty_input, at);
      e.input_order[k] = d;
      ++k, d = 0;
      if (at != arrow && k == max_einsum_inputs) return fail(einsum_error::too_many_inputs, at);
      continue;
    }
    const char c = s[at];
    if (!detail::einsum_letter(c)) return fail(einsum_error::bad_character, at);
    if (d == max_dist_dims) return fail(einsum_error::operand_order, at);
    for (std::size_t q = 0; q < d; ++q)
      if (e.letter[static_cast<std::size_t>(e.input[k][q])] == c) return fail(einsum_error::repeated_index, at);
    int v = index_of(c);
    if (v < 0) {
      if (e.nindices == max_einsum_indices) return fail(einsum_error::too_many_indices, at);
      e.letter[e.nindices] = c;
      v = static_cast<int>(e.nindices++);
    }
    e.input[k][d++] = v;
  }
  e.ninputs = k;
  // Output.
  for (std::size_t at = arrow + 2; at < s.size(); ++at) {
    const char c = s[at];
    if (!detail::einsum_letter(c)) return fail(einsum_error::bad_character, at);
    if (e.output_order == max_dist_dims) return fail(einsum_error::operand_order, at);
    const int v = index_of(c);
    if (v < 0) return fail(einsum_error::output_not_in_input, at);
    for (std::size_t q = 0; q < e.output_order; ++q)
      if (e.output[q] == v) return fail(einsum_error::repeated_index, at);
    e.output[e.output_order++] = v;
  }
  return e;
}

/// An einsum string checked at compile time: `einsum<"ij,jk->ik">::spec`.
template <fixed_string S>
struct einsum {
  static constexpr einsum_spec spec = parse_einsum(S.view());
  static_assert(spec.error != einsum_error::no_arrow, "tensorlev::dist::einsum: the string needs \"->\" before the output's indices");
  static_assert(spec.error != einsum_error::bad_character,
                "tensorlev::dist::einsum: indices are letters, operands are separated by ',' and the output follows \"->\"");
  static_assert(spec.error != einsum_error::empty_input, "tensorlev::dist::einsum: an input operand has no index");
  static_assert(spec.error != einsum_error::too_many_inputs, "tensorlev::dist::einsum: at most 8 input operands");
  static_assert(spec.error != einsum_error::operand_order, "tensorlev::dist::einsum: an operand has more than 8 indices");
  static_assert(spec.error != einsum_error::too_many_indices, "tensorlev::dist::einsum: at most 16 distinct indices");
  static_assert(spec.error != einsum_error::repeated_index,
                "tensorlev::dist::einsum: an index appears twice in one operand (diagonals are not supported)");
  static_assert(spec.error != einsum_error::output_not_in_input,
                "tensorlev::dist::einsum: every output index must appear in some input");
  static constexpr std::size_t inputs = spec.ninputs;
};

/// Throws tensorlev::error naming the rule and position, for strings given
/// at run time.
inline einsum_spec parse_einsum_checked(std::string_view s) {
  const einsum_spec e = parse_einsum(s);
  if (e.error == einsum_error::none) return e;
  const char* what = "";
  switch (e.error) {
    case einsum_error::no_arrow: what = "no \"->\" before the output's indices"; break;
    case einsum_error::bad_character: what = "not a letter, ',' or \"->\""; break;
    case einsum_error::empty_input: what = "an input operand with no index"; break;
    case einsum_error::too_many_inputs: what = "more than 8 input operands"; break;
    case einsum_error::operand_order: what = "an operand with more than 8 indices"; break;
    case einsum_error::too_many_indices: what = "more than 16 distinct indices"; break;
    case einsum_error::repeated_index: what = "an index twice in one operand"; break;
    case einsum_error::output_not_in_input: what = "an output index that no input has"; break;
    case einsum_error::none: break;
  }
  throw error("einsum \"" + std::string(s) + "\": " + what + " at character " + std::to_string(e.position));
}

// ---- the einsum as one statement ----------------------------------------------------

namespace detail {
template <class T>
constexpr std::size_t einsum_order() {
  if constexpr (requires { T::order; })
    return T::order;
  else
    return 0;  // scalar<V>
}
template <fixed_string S, std::size_t K, class T, std::size_t... D>
auto einsum_access(T& t, std::index_sequence<D...>) {
  constexpr einsum_spec e = parse_einsum(S.view());
  return t(index_var<e.letter[static_cast<std::size_t>(e.input[K][D])]>{}...);
}
template <fixed_string S, class T, std::size_t... D>
auto einsum_output(T& t, std::index_sequence<D...>) {
  constexpr einsum_spec e = parse_einsum(S.view());
  return t(index_var<e.letter[static_cast<std::size_t>(e.output[D])]>{}...);
}
}  // namespace detail

/// The einsum as an index-notation statement without running it: for
/// dist_tensors, the same `dist_assignment` as writing the accesses out
/// (`einsum_statement<"ik,kj->ij">(C, A, B)` is `C(i,j) = A(i,k) * B(k,j)`),
/// which `dist::compute(statement, schedule)` runs on the engine. The
/// string is checked at compile time, the orders of the tensors too.
template <fixed_string S, class Out, class... In>
auto einsum_statement(Out& out, const In&... in) {
  using E = einsum<S>;
  constexpr einsum_spec e = E::spec;
  static_assert(sizeof...(In) == e.ninputs,
                "tensorlev::dist::einsum_statement / einsum_compute: one tensor per input of the einsum string");
  static_assert(detail::einsum_order<std::remove_cvref_t<Out>>() == e.output_order,
                "tensorlev::dist::einsum_statement / einsum_compute: the output's order must match the einsum's "
                "output indices");
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    static_assert(((detail::einsum_order<std::remove_cvref_t<In>>() == e.input_order[K]) && ...),
                  "tensorlev::dist::einsum_statement / einsum_compute: each input's order must match its indices in "
                  "the einsum string");
    return detail::einsum_output<S>(out, std::make_index_sequence<e.output_order>{}) =
               (detail::einsum_access<S, K>(in, std::make_index_sequence<e.input_order[K]>{}) * ...);
  }(std::index_sequence_for<In...>{});
}

/// Computes the einsum on one node as one index-notation statement: `out`
/// gets the product of the inputs' accesses, every index not in the output
/// summed (`einsum_compute<"ijk,ja,ka->ia">(M, X, A, B)` is `M(i,a) =
/// X(i,j,k) * A(j,a) * B(k,a)`); with `add`, `+=`. One loop nest over all
/// the indices, as the generator plans it: no contraction order.
template <fixed_string S, class Out, class... In>
void einsum_compute(Out& out, const In&... in) {
  (void)einsum_statement<S>(out, in...);
}

// ---- contraction order ------------------------------------------------------------

/// One binary contraction: the inputs below each side (masks over the
/// einsum's inputs), the indices the result keeps, its FLOPs.
struct contraction_step {
  std::uint32_t left = 0, right = 0;
  std::uint32_t left_indices = 0, right_indices = 0, result_indices = 0;
  double flops = 0;
};

/// The binary contractions in the order they run (each step's operands are
/// inputs or earlier results).
struct contraction_path {
  std::vector<contraction_step> steps;
  double flops = 0;
  /// One line per step, "ijk,jka->ia  (2.0e+04 FLOPs)", the result's
  /// indices in the einsum's index order (the output's order for the last).
  [[nodiscard]] std::string to_string(const einsum_spec& e) const {
    std::string s;
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const contraction_step& st = steps[k];
      std::string out;
      if (k + 1 == steps.size()) {
        for (std::size_t d = 0; d < e.output_order; ++d) out += e.letter[static_cast<std::size_t>(e.output[d])];
      } else {
        out = e.letters(st.result_indices);
      }
      auto side = [&](std::uint32_t inputs, std::uint32_t idx) {
        if (std::has_single_bit(inputs)) {  // an input: its own index order
          const auto in = static_cast<std::size_t>(std::countr_zero(inputs));
          std::string t;
          for (std::size_t d = 0; d < e.input_order[in]; ++d) t += e.letter[static_cast<std::size_t>(e.input[in][d])];
          return t;
        }
        return e.letters(idx);
      };
      char flops[48];
      std::snprintf(flops, sizeof flops, "  (%.3g FLOPs)\n", st.flops);
      s += side(st.left, st.left_indices) + "," + side(st.right, st.right_indices) + "->" + out + flops;
    }
    return s;
  }
};

/// The order of binary contractions with the fewest FLOPs (see the file's
/// comment); `extent[v]` is index v's extent. One input: no steps.
inline contraction_path optimal_path(const einsum_spec& e, std::span<const long long> extent) {
  if (e.error != einsum_error::none) throw error("optimal_path: the einsum did not parse");
  if (extent.size() < e.nindices) throw error("optimal_path: an extent per index is needed");
  for (std::size_t v = 0; v < e.nindices; ++v)
    if (extent[v] < 0) throw error("optimal_path: index " + std::string(1, e.letter[v]) + " has a negative extent");
  const std::size_t n = e.ninputs;
  const std::uint32_t all = (std::uint32_t{1} << n) - 1;
  std::vector<std::uint32_t> idx(std::size_t{1} << n, 0);  // indices the inputs in a subset read
  for (std::uint32_t u = 1; u <= all; ++u)
    for (std::size_t k = 0; k < n; ++k)
      if ((u >> k) & 1U) idx[u] |= e.input_mask(k);
  // What a subset's result keeps: indices read outside it, or by the output.
  auto kept = [&](std::uint32_t u) { return idx[u] & (idx[all & ~u] | e.output_mask()); };
  // A step's operand: an input's indices, or what an intermediate keeps.
  auto operand = [&](std::uint32_t u) {
    return std::has_single_bit(u) ? e.input_mask(static_cast<std::size_t>(std::countr_zero(u))) : kept(u);
  };
  auto volume = [&](std::uint32_t m) {
    double p = 1;
    for (std::size_t v = 0; v < e.nindices; ++v)
      if ((m >> v) & 1U) p *= static_cast<double>(extent[v]);
    return p;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> cost(std::size_t{1} << n, inf);
  std::vector<std::uint32_t> split(std::size_t{1} << n, 0);
  for (std::size_t k = 0; k < n; ++k) cost[std::uint32_t{1} << k] = 0;
  for (std::uint32_t u = 1; u <= all; ++u) {
    if (std::has_single_bit(u)) continue;
    const std::uint32_t res = u == all ? e.output_mask() : kept(u);
    // Each unordered split once: the side with u's lowest input is `a`.
    const std::uint32_t low = u & (~u + 1);
    for (std::uint32_t a = (u - 1) & u; a != 0; a = (a - 1) & u) {
      if ((a & low) == 0) continue;
      const std::uint32_t b = u & ~a;
      const std::uint32_t span = operand(a) | operand(b);
      const double f = volume(span) * ((span & ~res) != 0 ? 2.0 : 1.0);
      const double c = cost[a] + cost[b] + f;
      if (c < cost[u]) cost[u] = c, split[u] = a;
    }
  }
  contraction_path path;
  if (n < 2) return path;
  // Post-order: the steps below each side, then the step joining them.
  auto emit = [&](auto&& self, std::uint32_t u) -> void {
    if (std::has_single_bit(u)) return;
    const std::uint32_t a = split[u], b = u & ~a;
    self(self, a);
    self(self, b);
    contraction_step st;
    st.left = a, st.right = b;
    st.left_indices = operand(a);
    st.right_indices = operand(b);
    st.result_indices = u == all ? e.output_mask() : kept(u);
    const std::uint32_t span = st.left_indices | st.right_indices;
    st.flops = volume(span) * ((span & ~st.result_indices) != 0 ? 2.0 : 1.0);
    path.steps.push_back(st);
  };
  emit(emit, all);
  path.flops = cost[all];
  return path;
}

// ---- running a path on one node: dense contractions at run time --------------------

/// A dense row-major tensor over einsum indices: `idx[d]` is dimension d's
/// index number, `ext[d]` its extent. The local operand of a contraction
/// step (an input, an intermediate, a block of either on a rank).
template <class V>
struct dense_operand {
  std::vector<int> idx;
  std::vector<long long> ext;
  std::vector<V> data;

  [[nodiscard]] long long size() const {
    long long n = 1;
    for (const long long e : ext) n *= e;
    return n;
  }
};

namespace detail {
// Row-major strides of a dense operand, per index number (0 where absent).
template <class V>
std::array<long long, max_einsum_indices> einsum_strides(const dense_operand<V>& t) {
  std::array<long long, max_einsum_indices> s{};
  long long st = 1;
  for (std::size_t d = t.idx.size(); d-- > 0;) {
    s[static_cast<std::size_t>(t.idx[d])] = st;
    st *= t.ext[d];
  }
  return s;
}
// The zero result over indices `out` (each in mask `have`, the operands'
// indices), extents from `extent`; shape_error naming `what` otherwise.
template <class V>
dense_operand<V> zero_output(std::uint32_t have, const std::vector<int>& out, std::span<const long long> extent,
                             const char* what) {
  dense_operand<V> c;
  c.idx = out;
  for (const int v : out) {
    if (v < 0 || v >= static_cast<int>(max_einsum_indices) || ((have >> v) & 1U) == 0)
      throw shape_error(std::string(what) + ": an output index neither operand has");
    c.ext.push_back(extent[static_cast<std::size_t>(v)]);
  }
  c.data.assign(static_cast<std::size_t>(c.size()), V{});
  return c;
}
// Throws shape_error (naming `what`) unless t's indices, extents and
// values agree and each extent is its index's.
template <class V>
void check_operand(const dense_operand<V>& t, std::span<const long long> extent, const char* what) {
  if (t.idx.size() != t.ext.size() || static_cast<long long>(t.data.size()) != t.size())
    throw shape_error(std::string(what) + ": its indices, extents and values disagree");
  for (std::size_t d = 0; d < t.idx.size(); ++d)
    if (t.idx[d] < 0 || static_cast<std::size_t>(t.idx[d]) >= extent.size() ||
        t.ext[d] != extent[static_cast<std::size_t>(t.idx[d])])
      throw shape_error(std::string(what) + ": dimension " + std::to_string(d) + " does not have its index's extent");
}
}  // namespace detail

/// The binary contraction of a and b into the indices `out` (in that
/// order; each from a or b): out = sum over the other indices of a * b.
/// Indices in both operands and the output are batch indices (a KRP's),
/// in both and not the output contracted, in one only and not the output
/// summed on their own. `extent[v]` is index v's extent. One pass over
/// the index space of a and b with strided reads: the reference for the
/// distributed engine's local steps, not a tuned GEMM.
template <class V>
dense_operand<V> contract_pair(const dense_operand<V>& a, const dense_operand<V>& b, const std::vector<int>& out,
                               std::span<const long long> extent) {
  detail::check_operand(a, extent, "contract_pair: operand a");
  detail::check_operand(b, extent, "contract_pair: operand b");
  std::uint32_t ma = 0, mb = 0;
  for (const int v : a.idx) ma |= std::uint32_t{1} << v;
  for (const int v : b.idx) mb |= std::uint32_t{1} << v;
  dense_operand<V> c = detail::zero_output<V>(ma | mb, out, extent, "contract_pair");
  const auto sa = detail::einsum_strides(a), sb = detail::einsum_strides(b), sc = detail::einsum_strides(c);
  std::vector<int> vars;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if (((ma | mb) >> v) & 1U) vars.push_back(static_cast<int>(v));
  long long total = 1;
  for (const int v : vars) total *= extent[static_cast<std::size_t>(v)];
  if (total == 0) return c;
  std::vector<long long> x(vars.size(), 0);
  long long pa = 0, pb = 0, pc = 0;
  for (long long n = 0; n < total; ++n) {
    c.data[static_cast<std::size_t>(pc)] += a.data[static_cast<std::size_t>(pa)] * b.data[static_cast<std::size_t>(pb)];
    for (std::size_t q = vars.size(); q-- > 0;) {  // odometer, the last index fastest
      const auto v = static_cast<std::size_t>(vars[q]);
      if (++x[q] < extent[v]) {
        pa += sa[v], pb += sb[v], pc += sc[v];
        break;
      }
      pa -= sa[v] * (extent[v] - 1), pb -= sb[v] * (extent[v] - 1), pc -= sc[v] * (extent[v] - 1);
      x[q] = 0;
    }
  }
  return c;
}

/// Runs a contraction path on one node: each step's operands (inputs, in
/// their einsum index order, or earlier results) contracted into the
/// indices the step keeps, the last into the output's order. One input:
/// the output is that input with the indices the output lacks summed.
template <class V>
dense_operand<V> run_path(const einsum_spec& e, const contraction_path& path, std::span<const long long> extent,
                          std::vector<dense_operand<V>> inputs) {
  if (inputs.size() != e.ninputs) throw shape_error("run_path: one operand per input of the einsum");
  std::vector<int> out(e.output.begin(), e.output.begin() + static_cast<std::ptrdiff_t>(e.output_order));
  if (e.ninputs == 1) {
    dense_operand<V> one{{}, {}, {V{1}}};
    return contract_pair(inputs[0], one, out, extent);
  }
  std::vector<std::pair<std::uint32_t, dense_operand<V>>> live;
  for (std::size_t k = 0; k < inputs.size(); ++k) live.emplace_back(std::uint32_t{1} << k, std::move(inputs[k]));
  auto take = [&](std::uint32_t u) {
    for (std::size_t q = 0; q < live.size(); ++q)
      if (live[q].first == u) {
        dense_operand<V> t = std::move(live[q].second);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(q));
        return t;
      }
    throw error("run_path: the path does not match the einsum");
  };
  for (std::size_t k = 0; k < path.steps.size(); ++k) {
    const contraction_step& st = path.steps[k];
    std::vector<int> keep;
    if (k + 1 == path.steps.size()) {
      keep = out;
    } else {
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if ((st.result_indices >> v) & 1U) keep.push_back(static_cast<int>(v));
    }
    const dense_operand<V> l = take(st.left), r = take(st.right);
    live.emplace_back(st.left | st.right, contract_pair(l, r, keep, extent));
  }
  if (live.size() != 1) throw error("run_path: the path does not join every input");
  return std::move(live.front().second);
}

/// Input k of the einsum over [lo[v], hi[v]) along each of its indices v
/// (a rank's block, or the whole tensor), in its own index order; entries
/// `fill(k, x)` at the global coordinates x.
template <class V, class Fill>
dense_operand<V> input_block(const einsum_spec& e, std::size_t k, const std::array<long long, max_einsum_indices>& lo,
                             const std::array<long long, max_einsum_indices>& hi, Fill&& fill) {
  dense_operand<V> t;
  const std::size_t n = e.input_order[k];
  for (std::size_t d = 0; d < n; ++d) {
    const auto v = static_cast<std::size_t>(e.input[k][d]);
    t.idx.push_back(e.input[k][d]);
    t.ext.push_back(std::max<long long>(0, hi[v] - lo[v]));
  }
  t.data.resize(static_cast<std::size_t>(t.size()));
  std::array<long long, max_dist_dims> x{};
  for (long long c = 0; c < t.size(); ++c) {
    long long q = c;
    for (std::size_t d = n; d-- > 0;) {
      x[d] = lo[static_cast<std::size_t>(e.input[k][d])] + q % t.ext[d];
      q /= t.ext[d];
    }
    t.data[static_cast<std::size_t>(c)] = static_cast<V>(fill(k, x.data()));
  }
  return t;
}

/// The einsum's inputs as whole dense operands on one node, entries from
/// `fill(k, x)`: the single-node reference for a distributed run built
/// from the same rule.
template <class V, class Fill>
std::vector<dense_operand<V>> dense_inputs(const einsum_spec& e, std::span<const long long> extent, Fill&& fill) {
  std::array<long long, max_einsum_indices> lo{}, hi{};
  for (std::size_t v = 0; v < e.nindices; ++v) hi[v] = extent[v];
  std::vector<dense_operand<V>> ops;
  for (std::size_t k = 0; k < e.ninputs; ++k) ops.push_back(input_block<V>(e, k, lo, hi, fill));
  return ops;
}

// ---- SOAP: tiles, the I/O lower bound, grids -----------------------------------

/// A contraction group: the indices of its iteration space (a mask over an
/// einsum's indices) and the access set of each tensor it reads or writes,
/// the output's included (masks).
struct contraction_group {
  std::uint32_t indices = 0;
  std::vector<std::uint32_t> access;

  /// The group of a whole einsum (all inputs and the output: Deinsum's
  /// fused MTTKRP term, ijk,ja,ka->ia) or of one step of a path.
  static contraction_group of(const einsum_spec& e) {
    contraction_group g;
    for (std::size_t k = 0; k < e.ninputs; ++k) g.access.push_back(e.input_mask(k)), g.indices |= e.input_mask(k);
    if (e.output_order > 0) g.access.push_back(e.output_mask());
    return g;
  }
  static contraction_group of(const contraction_step& s) {
    contraction_group g;
    g.indices = s.left_indices | s.right_indices;
    g.access = {s.left_indices, s.right_indices};
    if (s.result_indices != 0) g.access.push_back(s.result_indices);
    return g;
  }
};

/// The SOAP solution for local memory S (words): tile size per index (0
/// outside the group), the X0 that minimizes |V(X)| / (X - S), the
/// intensity rho, and the tile's sum of access sets at X0 (= X0). Where an
/// access set holds every index (c of them), rho = 1/c, X0 is infinite and
/// the tile is left 0.
struct soap_tile {
  std::array<double, max_einsum_indices> t{};
  double x0 = 0;
  double rho = 0;
  /// Q >= |V| / rho: words a run over the whole space moves at least.
  [[nodiscard]] double bound(double iteration_volume) const { return iteration_volume / rho; }
};

namespace detail {
// The tile maximizing prod t_v with sum_T prod_{v in T} t_v = X (a
// geometric program): at the optimum every index carries the same load
// sum_{T containing v} |T(t)| (the KKT condition), so loads are balanced
// by multiplicative steps, each followed by the common scale that meets X.
// `y` (log t_v) is the starting point and the solution: soap_tiling's
// search solves for nearby X in turn, each from the last one's tile.
inline std::array<double, max_einsum_indices> soap_solve(const contraction_group& g, double X,
                                                         std::array<double, max_einsum_indices>& y) {
  auto access_log = [&](std::uint32_t m) {
    double s = 0;
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((m >> v) & 1U) s += y[v];
    return s;
  };
  auto fit = [&] {  // the shift c of every y_v such that sum_T exp(|T| c + log|T|) = X
    double lo = -200, hi = 200;
    for (int it = 0; it < 64; ++it) {
      const double c = 0.5 * (lo + hi);
      double sum = 0;
      for (const std::uint32_t m : g.access) sum += std::exp(access_log(m) + c * std::popcount(m));
      (sum > X ? hi : lo) = c;
    }
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((g.indices >> v) & 1U) y[v] += 0.5 * (lo + hi);
  };
  fit();
  // Where no tile balances the loads (an access set holds every index, as
  // a KRP's output: the volume approaches X as some t_v goes to 0), the
  // steps drift without converging; they stop once a tile side passes
  // e^{+-30}, the volume then within a hair of its supremum.
  for (int it = 0; it < 400; ++it) {
    std::array<double, max_einsum_indices> load{};
    double mean = 0;
    int n = 0;
    for (const std::uint32_t m : g.access) {
      const double a = std::exp(access_log(m));
      for (std::size_t v = 0; v < max_einsum_indices; ++v)
        if ((m >> v) & 1U) load[v] += a;
    }
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((g.indices >> v) & 1U) mean += std::log(load[v]), ++n;
    mean /= n;
    double worst = 0;
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((g.indices >> v) & 1U) {
        const double r = mean - std::log(load[v]);
        worst = std::max(worst, std::abs(r));
        y[v] += 0.3 * r;
      }
    fit();
    if (worst < 1e-13) break;
    bool drifted = false;
    for (std::size_t v = 0; v < max_einsum_indices; ++v) drifted = drifted || std::abs(y[v]) > 30;
    if (drifted) break;
  }
  std::array<double, max_einsum_indices> t{};
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((g.indices >> v) & 1U) t[v] = std::exp(y[v]);
  return t;
}
inline double soap_volume(const contraction_group& g, const std::array<double, max_einsum_indices>& t) {
  double p = 1;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((g.indices >> v) & 1U) p *= t[v];
  return p;
}
}  // namespace detail

/// SOAP for local memory S > 0 words (see the file's comment).
inline soap_tile soap_tiling(const contraction_group& g, double S) {
  if (!(S > 0)) throw error("soap_tiling: the local memory S must be positive");
  if (g.indices == 0 || g.access.empty()) throw error("soap_tiling: the group has no index");
  for (const std::uint32_t m : g.access)
    if ((m & ~g.indices) != 0) throw error("soap_tiling: an access set reads an index outside the group");
  // An access set over every index (an output that keeps them all, as a
  // KRP's or an outer product's; c of them): |V| <= X / c, approached as
  // the tile grows without bound along a direction, so rho = 1/c (the
  // minimum of |V(X)| / (X - S) is reached as X goes to infinity).
  int full = 0;
  for (const std::uint32_t m : g.access) full += m == g.indices;
  if (full > 0) {
    soap_tile s;
    s.x0 = std::numeric_limits<double>::infinity();
    s.rho = 1.0 / full;
    return s;
  }
  // phi(u) = |V(X)| / (X - S) with X = S (1 + e^u): golden-section search
  // for its minimum (|V| grows faster than linearly in X).
  std::array<double, max_einsum_indices> y{};
  auto phi = [&](double u) {
    const double X = S * (1 + std::exp(u));
    return detail::soap_volume(g, detail::soap_solve(g, X, y)) / (X - S);
  };
  double a = -12, b = 12;
  const double r = (std::sqrt(5.0) - 1) / 2;
  double c = b - r * (b - a), d = a + r * (b - a), fc = phi(c), fd = phi(d);
  for (int it = 0; it < 80 && b - a > 1e-11; ++it) {
    if (fc < fd) {
      b = d, d = c, fd = fc;
      c = b - r * (b - a), fc = phi(c);
    } else {
      a = c, c = d, fc = fd;
      d = a + r * (b - a), fd = phi(d);
    }
  }
  soap_tile s;
  s.x0 = S * (1 + std::exp(0.5 * (a + b)));
  s.t = detail::soap_solve(g, s.x0, y);
  s.rho = detail::soap_volume(g, s.t) / (s.x0 - S);
  return s;
}

/// The rows of a block distribution on a grid (Deinsum Eqs. 10-13): along
/// index v, blocks of ceil(N_v / p_v), and the rank with row-major number
/// `rank` on the grid (p_v per index of `indices`, in index order) holds
/// [c_v B_v, min(N_v, (c_v + 1) B_v)) of it; indices outside the mask get
/// the whole extent (the operand is replicated over those grid
/// dimensions). Returns {lo, hi} per index number.
inline std::pair<std::array<long long, max_einsum_indices>, std::array<long long, max_einsum_indices>>
grid_block(std::span<const long long> extent, std::uint32_t indices, const std::array<long long, max_einsum_indices>& p,
           long long rank) {
  std::array<long long, max_einsum_indices> lo{}, hi{};
  for (std::size_t v = 0; v < max_einsum_indices && v < extent.size(); ++v) hi[v] = extent[v];
  for (std::size_t v = max_einsum_indices; v-- > 0;) {
    if (((indices >> v) & 1U) == 0) continue;
    const long long b = std::max<long long>(1, (extent[v] + p[v] - 1) / p[v]);
    const long long c = rank % p[v];
    rank /= p[v];
    lo[v] = std::min(extent[v], c * b);
    hi[v] = std::min(extent[v], lo[v] + b);
  }
  return {lo, hi};
}

/// A processor grid: ranks along each index (1 outside the group) and the
/// per-rank sum of access sets (words).
struct soap_grid_result {
  std::array<long long, max_einsum_indices> p{};
  long long words = 0;
};

namespace detail {
// The factorization search behind soap_grid: the smallest per-rank words,
// ties to the smallest tie(p) (compared with <), then the first in
// lexicographic order. words < 0 where P does not factor within the
// extents. Per-rank words saturate at 2^62 (no overflow on huge extents).
template <class Tie>
soap_grid_result soap_grid_search(const contraction_group& g, std::span<const long long> extent, long long P,
                                  Tie&& tie) {
  if (P < 1) throw error("soap_grid: the rank count must be at least 1, not " + std::to_string(P));
  std::vector<std::size_t> vars;
  for (std::size_t v = 0; v < max_einsum_indices; ++v)
    if ((g.indices >> v) & 1U) {
      if (v >= extent.size() || extent[v] < 1)
        throw error("soap_grid: index " + std::to_string(v) + " needs an extent of at least 1");
      vars.push_back(v);
    }
  if (vars.empty()) throw error("soap_grid: the group has no index");
  constexpr double cap = 4611686018427387904.0;  // 2^62
  soap_grid_result best;
  best.words = -1;
  std::array<long long, max_einsum_indices> p{};
  p.fill(1);
  decltype(tie(p)) best_tie{};
  auto words = [&] {
    double w = 0;
    for (const std::uint32_t m : g.access) {
      double a = 1;
      for (const std::size_t v : vars)
        if ((m >> v) & 1U) a = std::min(cap, a * static_cast<double>((extent[v] + p[v] - 1) / p[v]));
      w = std::min(cap, w + a);
    }
    return static_cast<long long>(w);
  };
  auto walk = [&](auto&& self, std::size_t k, long long left) -> void {
    if (k + 1 == vars.size()) {
      if (left > extent[vars[k]]) return;
      p[vars[k]] = left;
      const long long w = words();
      if (best.words >= 0 && w > best.words) return;
      auto t = tie(p);
      if (best.words < 0 || w < best.words || t < best_tie) best.p = p, best.words = w, best_tie = std::move(t);
      return;
    }
    for (long long f = 1; f <= left && f <= extent[vars[k]]; ++f)
      if (left % f == 0) {
        p[vars[k]] = f;
        self(self, k + 1, left / f);
      }
    p[vars[k]] = 1;
  };
  walk(walk, 0, P);
  if (best.words >= 0)
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if (((g.indices >> v) & 1U) == 0) best.p[v] = 1;
  return best;
}
}  // namespace detail

/// The grid for P ranks over the group's indices (see the file's comment):
/// every ordered factorization of P with each factor at most its index's
/// extent; ties go to the grid with the fewest ranks along the indices in
/// `summed` (those share a block of the result and all-reduce it), then to
/// the first in lexicographic order of the factors. Throws when P cannot
/// be factored within the extents.
inline soap_grid_result soap_grid(const contraction_group& g, std::span<const long long> extent, long long P,
                                  std::uint32_t summed = 0) {
  const soap_grid_result r = detail::soap_grid_search(g, extent, P, [&](const auto& p) {
    long long k = 1;
    for (std::size_t v = 0; v < max_einsum_indices; ++v)
      if ((summed >> v) & 1U) k *= p[v];
    return k;
  });
  if (r.words < 0) throw error("soap_grid: " + std::to_string(P) + " ranks do not factor over the group's extents");
  return r;
}

}  // namespace tensorlev::dist
