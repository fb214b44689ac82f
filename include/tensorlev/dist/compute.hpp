#pragma once
/// @file dist/compute.hpp
/// Any dense tensor-algebra statement over a machine grid, as a DISTAL
/// schedule (§3.3) says:
///
///     using namespace tensorlev::dist;
///     // TTV, A(i,j) = B(i,j,k) c(k): (i, j) over a 2D grid (DISTAL §7.2).
///     compute<"ij", "ijk", "k">(A, statement_schedule().distribute("ij"), B, c);
///     // MTTKRP on a 3D grid: every (i, j, k) block on one rank.
///     compute<"il", "ijk", "jl", "kl">(A, statement_schedule().distribute("ijk"), B, C, D);
///     // SUMMA, and Cannon (rotated steps), as statements.
///     compute<"ij", "ik", "kj">(C, statement_schedule().distribute("ij").divide('k', q), A, B);
///     compute<"ij", "ik", "kj">(C, statement_schedule().distribute("ij").divide('k', q).rotate("ij"), A, B);
///     // Inner product: the sum on every rank.
///     double s = reduce<"ijk", "ijk">(statement_schedule().distribute("ij"), B, C);
///
/// The strings name each tensor's index variables (output first); variables
/// missing from the output are summed. The schedule:
/// - `distribute(vars)`: machine dimension m divides variable vars[m] into
///   blocks, so each rank runs one block of the iteration space:
///   distributed output variables give owner-computes, a distributed
///   summed variable a distributed reduction.
/// - `divide(v, n)` / `split(v, chunk)`: the rank's range of v runs as n
///   sequential steps (at most one per index), or steps of `chunk` indices. Inputs that read v are
///   fetched one step's slice at a time (communicate under the step loop);
///   the others once.
/// - `rotate(vars)`: step t runs the rank's step (t + its coordinates on
///   the machine dimensions of the distributed vars) mod steps.
/// - `communicate(input, v)`: input number `input` (from 0) is fetched at
///   each step (v the divided variable) or once (v a distributed one).
/// Each fetch takes, for every rank, the box of the input its block (or
/// step) reads, from the nearest rank holding all of it (its own tile
/// first, then a replicated copy) or in pieces from the owners; each rank
/// runs the generated kernel on those boxes; partial outputs go to every
/// rank holding the output entries they cover, where they are summed. So
/// the same statement runs in any distributions of its tensors: when they
/// match the schedule nothing moves (TTV, TTM and innerprod in §7.2), and
/// when they do not the schedule moves what each block reads. Fetches are
/// counted as all-to-all traffic (point-to-point messages) and partial
/// outputs as reductions (`comm_stats`). A statement that is a matrix
/// product of its boxes (C = A B, TTM, TTV, matrix-vector: out = P Q,
/// first input P R, second R Q) runs its leaf as one gemm (BLAS when
/// linked, DISTAL §7.2.1); others run the generated kernel of the
/// statement. The matrix product's own schedule
/// (`matmul`, schedule.hpp) adds reorder, reuses the panel fetched at the
/// previous step (systolic shifts) and runs axis broadcasts as such.
///
/// Every tensor is dense row-major (`dense_vector`, `dense_row_major`,
/// `dense_tensor<N>`); the sparse distributed kernels are in kernels.hpp
/// and algorithms.hpp.

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "box.hpp"
#include "kernels.hpp"

namespace tensorlev::dist {

/// A schedule for compute and reduce (see the file comment).
class statement_schedule {
 public:
  /// Machine dimension m divides variable vars[m] into blocks.
  statement_schedule& distribute(std::string_view vars) {
    for (std::size_t a = 0; a < vars.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (vars[a] == vars[b])
          throw shape_error(std::string("tensorlev::dist::statement_schedule::distribute: '") + vars[a] +
                            "' is distributed twice");
    dist_.assign(vars.begin(), vars.end());
    return *this;
  }
  /// The rank's range of `var` runs as n sequential steps; the inputs that
  /// read `var` are fetched one step's slice at a time (DISTAL's divide
  /// with communicate under the outer loop).
  statement_schedule& divide(char var, long long n) {
    cut_.divide(n, "tensorlev::dist::statement_schedule");
    step_var_ = var;
    return *this;
  }
  /// The rank's range of `var` runs in steps of `chunk` indices.
  statement_schedule& split(char var, long long chunk) {
    cut_.split(chunk, "tensorlev::dist::statement_schedule");
    step_var_ = var;
    return *this;
  }
  /// Step t runs the rank's step (t + its coordinates on the machine
  /// dimensions of the distributed `vars`) mod steps (DISTAL's rotate).
  statement_schedule& rotate(std::string_view vars) {
    rot_.assign(vars.begin(), vars.end());
    return *this;
  }
  /// Input `input` (counted from 0) is fetched at each step when `var` is
  /// the divided variable (the default for inputs that read it), or once
  /// for all steps when `var` is a distributed variable.
  statement_schedule& communicate(std::size_t input, char var) {
    if (input >= max_inputs)
      throw shape_error("tensorlev::dist::statement_schedule::communicate: input " + std::to_string(input) +
                        " (a statement has at most " + std::to_string(max_inputs) + " inputs)");
    if (once_.size() <= input) once_.resize(input + 1, 0);
    once_[input] = var;
    return *this;
  }

  [[nodiscard]] const std::string& distributed() const noexcept { return dist_; }
  [[nodiscard]] char step_variable() const noexcept { return step_var_; }
  [[nodiscard]] long long parts() const noexcept { return cut_.parts; }
  [[nodiscard]] long long chunk() const noexcept { return cut_.chunk; }
  [[nodiscard]] const std::string& rotated_by() const noexcept { return rot_; }
  /// The variable input `input` is communicated under (0: the default).
  [[nodiscard]] char communicated_at(std::size_t input) const noexcept {
    return input < once_.size() ? once_[input] : 0;
  }
  [[nodiscard]] std::size_t communicate_entries() const noexcept { return once_.size(); }
  /// The most inputs communicate can name.
  static constexpr std::size_t max_inputs = 64;
  /// A hash of every command (compute checks that every rank passed the same schedule).
  [[nodiscard]] unsigned long long hash() const noexcept {
    detail::value_hash h;
    for (char c : dist_) h.mix(c);
    h.mix(-1);
    h.mix(step_var_);
    h.mix(cut_.parts);
    h.mix(cut_.chunk);
    for (char c : rot_) h.mix(c);
    h.mix(-2);
    for (char c : once_) h.mix(c);
    return h.h;
  }

 private:
  std::string dist_;
  char step_var_ = 0;
  detail::step_cut cut_;
  std::string rot_;
  std::string once_;
};

namespace detail {

template <class F>
inline constexpr bool row_major_dense_v =
    std::is_base_of_v<format<typename tensorlev::detail::chain_levels<F::order, dense<>, dense<>, dense<>>::type>, F>;


// Runs point-to-point messages of boxes: the sender copies `box` out of
// its array `src` over `src_box`. Then, for every message to this rank in
// list order (its messages to itself included), calls
// take(data, data_box, box): `box` lies in the array `data` over
// `data_box`. Counted as `kind`.
template <class V, class Take>
void exchange_boxes(const machine_grid& g, const std::vector<box_message>& msgs, std::span<const V> src,
                    const boxn& src_box, comm_kind kind, int tag, Take&& take) {
  const int me = g.rank();
  std::vector<std::vector<V>> inbox(msgs.size()), outbox;
  std::vector<MPI_Request> reqs;
  outbox.reserve(msgs.size());
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.src == m.dst) continue;
    const long long bytes = m.box.size() * static_cast<long long>(sizeof(V));
    if (m.dst == me) {
      inbox[q].resize(static_cast<std::size_t>(m.box.size()));
      reqs.emplace_back();
      check_mpi(MPI_Irecv(inbox[q].data(), mpi_count(m.box.size(), "compute"), mpi_type<V>(), m.src, tag, g.comm(),
                          &reqs.back()),
                "MPI_Irecv");
      g.stats().received(kind, bytes);
    }
    if (m.src == me) {
      outbox.emplace_back(static_cast<std::size_t>(m.box.size()));
      auto& buf = outbox.back();
      copy_box(src.data(), src_box, buf.data(), m.box, m.box);
      reqs.emplace_back();
      check_mpi(MPI_Isend(buf.data(), mpi_count(m.box.size(), "compute"), mpi_type<V>(), m.dst, tag, g.comm(),
                          &reqs.back()),
                "MPI_Isend");
      g.stats().sent(kind, bytes);
    }
  }
  check_mpi(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.dst != me) continue;
    if (m.src == me) take(src.data(), src_box, m.box);
    else take(static_cast<const V*>(inbox[q].data()), m.box, m.box);
  }
}

// Every rank's box of tensor t, and whether it owns it (replicas do not).
template <class T>
std::pair<std::vector<boxn>, std::vector<bool>> tiles_of(const T& t, const std::vector<std::vector<long long>>& coords) {
  std::vector<boxn> tiles;
  std::vector<bool> owner;
  for (const auto& c : coords) {
    tiles.push_back(to_boxn(t.map().box_of(c), t.dims().size()));
    owner.push_back(t.map().is_owner(c));
  }
  return {std::move(tiles), std::move(owner)};
}

// Fetches, for every rank, the box `need[r]` of tensor t (dense
// row-major), from the nearest rank whose tile holds all of it, or in
// pieces from the owners. Returns this rank's box, row-major.
template <class T>
auto fetch_box(const T& t, const std::vector<boxn>& need, const std::vector<std::vector<long long>>& coords) {
  using V = std::remove_const_t<typename std::remove_cvref_t<decltype(t.local().values())>::element_type>;
  const machine_grid& g = t.grid();
  const int p = g.size();
  const auto [tile, owner] = tiles_of(t, coords);
  std::vector<box_message> msgs;
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (need[ur].empty()) continue;
    int best = -1;
    long long best_d = 0;
    for (int s = 0; s < p; ++s) {
      const auto us = static_cast<std::size_t>(s);
      if (!tile[us].contains(need[ur])) continue;
      const long long d = grid_distance(g, coords[us], coords[ur]);
      if (best < 0 || d < best_d) {
        best = s;
        best_d = d;
      }
    }
    if (best >= 0) {
      msgs.push_back({best, r, need[ur]});
      continue;
    }
    for (int s = 0; s < p; ++s) {
      const auto us = static_cast<std::size_t>(s);
      if (!owner[us]) continue;
      const boxn piece = tile[us].meet(need[ur]);
      if (!piece.empty()) msgs.push_back({s, r, piece});
    }
  }
  // Every rank has the same list: a message too large for MPI is refused everywhere.
  for (const box_message& m : msgs) (void)mpi_count(m.box.size(), "compute: a fetched box");
  const int me = g.rank();
  const boxn mine = need[static_cast<std::size_t>(me)];
  std::vector<V> out(static_cast<std::size_t>(mine.size()));
  const std::span<const V> held = t.local().values();
  const boxn my_tile = tile[static_cast<std::size_t>(me)];
  exchange_boxes<V>(g, msgs, held, my_tile, comm_kind::alltoall, 701,
                    [&](const V* data, const boxn& data_box, const boxn& b) {
                      copy_box(data, data_box, out.data(), mine, b);
                    });
  return out;
}

template <class V, std::size_t N, index_type I>
tensor_view<const V, dense_tensor<N>, I> dense_view(const boxn& b, std::span<const V> data) {
  using view = tensor_view<const V, dense_tensor<N>, I>;
  return [&]<std::size_t... d>(std::index_sequence<d...>) {
    return view({static_cast<I>(b.hi[d] - b.lo[d])...},
                typename view::level_tuple(dense_level<I>(static_cast<I>(b.hi[d] - b.lo[d]))...), data);
  }(std::make_index_sequence<N>{});
}

// t(v0, v1, ...) with the variables of string S.
template <fixed_string S, class T>
auto access_of(const T& t) {
  return [&]<std::size_t... d>(std::index_sequence<d...>) {
    return t(index_var<S.chars[d]>{}...);
  }(std::make_index_sequence<S.view().size()>{});
}

// (A loop, not string_view::find: GCC 12 with -fsanitize=address rejects
// find in constant expressions, as in notation.hpp.)
constexpr bool has_char(std::string_view s, char c) {
  for (char x : s)
    if (x == c) return true;
  return false;
}

template <fixed_string Out, fixed_string... In>
consteval bool well_formed_statement() {
  constexpr std::string_view out = Out.view();
  for (std::size_t a = 0; a < out.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b)
      if (out[a] == out[b]) return false;
    if ((!has_char(In.view(), out[a]) && ...)) return false;
  }
  return true;
}

// The statement's variables and, for each, its extent and range on each rank.
struct statement_plan {
  std::string vars;
  std::vector<long long> extent;
  std::vector<std::vector<long long>> coords;                  // by rank
  std::vector<std::vector<std::array<long long, 2>>> range;    // by rank, by variable
  std::string why;
  std::size_t step_var = std::string::npos;                   // the divided variable
  std::vector<std::vector<std::array<long long, 2>>> steps;    // by rank: its steps of step_var
  std::vector<long long> shift;                                // by rank: rotation
  std::size_t nsteps = 0;                                      // the most steps of any rank
  using ranges = std::vector<std::array<long long, 2>>;
  [[nodiscard]] static boxn project(const std::vector<std::size_t>& var_index, const ranges& rg) {
    boxn b{var_index.size(), {}, {}};
    for (std::size_t d = 0; d < var_index.size(); ++d) {
      b.lo[d] = rg[var_index[d]][0];
      b.hi[d] = rg[var_index[d]][1];
    }
    return b;
  }
  [[nodiscard]] boxn box(const std::vector<std::size_t>& var_index, std::size_t r) const {
    return project(var_index, range[r]);
  }
  /// Whether rank r runs a step t.
  [[nodiscard]] bool runs_step(std::size_t r, std::size_t t) const { return t < steps[r].size(); }
  /// Rank r's variable ranges at step t (runs_step(r, t)).
  [[nodiscard]] ranges at_step(std::size_t r, std::size_t t) const {
    ranges rg = range[r];
    if (step_var != std::string::npos) {
      const auto n = static_cast<long long>(steps[r].size());
      rg[step_var] = steps[r][static_cast<std::size_t>((static_cast<long long>(t) + shift[r]) % n)];
    }
    return rg;
  }
  [[nodiscard]] bool runs(std::size_t r) const {
    for (const auto& rg : range[r])
      if (rg[1] <= rg[0]) return false;
    return true;
  }
  [[nodiscard]] std::vector<std::size_t> indices(std::string_view s) const {
    std::vector<std::size_t> ix;
    for (char c : s) ix.push_back(vars.find(c));
    return ix;
  }
};

// Variables, extents (checked across tensors) and every rank's block.
// names/dims: the output's first when has_output.
inline statement_plan plan_statement(const char* fn, const machine_grid& g, const statement_schedule& s,
                                     const std::vector<std::string_view>& names,
                                     const std::vector<const std::vector<long long>*>& dims, bool has_output) {
  const std::size_t inputs = names.size() - (has_output ? 1 : 0);
  statement_plan pl;
  const std::string where = std::string("tensorlev::dist::") + fn + ": ";
  for (std::size_t t = 0; t < names.size() && pl.why.empty(); ++t)
    for (std::size_t d = 0; d < names[t].size(); ++d) {
      const char v = names[t][d];
      const long long n = (*dims[t])[d];
      const auto at = pl.vars.find(v);
      if (at == std::string::npos) {
        pl.vars += v;
        pl.extent.push_back(n);
      } else if (pl.extent[at] != n) {
        pl.why = where + "variable '" + v + "' has extent " + std::to_string(pl.extent[at]) + " in one tensor but " +
                 std::to_string(n) + " in tensor " + std::to_string(t) + " (\"" + std::string(names[t]) +
                 (has_output ? "\", counted from 0 with the output first)" : "\", counted from 0)");
        break;
      }
    }
  const std::string& dist = s.distributed();
  if (pl.why.empty() && dist.size() != g.order())
    pl.why = where + "the schedule distributes " + std::to_string(dist.size()) + " variables (\"" + dist +
             "\") over a grid of " + std::to_string(g.order()) + " dimensions";
  for (char v : dist)
    if (pl.why.empty() && pl.vars.find(v) == std::string::npos)
      pl.why = where + "the schedule distributes '" + v + "', which is not a variable of the statement";
  const int p = g.size();
  for (int r = 0; r < p && pl.why.empty(); ++r) {
    pl.coords.push_back(g.coords_of(r));
    std::vector<std::array<long long, 2>> rg;
    for (std::size_t v = 0; v < pl.vars.size(); ++v) {
      const auto m = dist.find(pl.vars[v]);
      if (m == std::string::npos) rg.push_back({0, pl.extent[v]});
      else rg.push_back(block_bounds(pl.extent[v], g.dims()[m], pl.coords.back()[m]));
    }
    pl.range.push_back(std::move(rg));
  }
  // Sequential steps of one variable (divide / split), rotated per rank.
  const char sv = s.step_variable();
  if (pl.why.empty() && sv != 0) {
    pl.step_var = pl.vars.find(sv);
    if (pl.step_var == std::string::npos)
      pl.why = where + "the schedule divides '" + sv + "', which is not a variable of the statement";
  }
  if (pl.why.empty() && !s.rotated_by().empty() && sv == 0) pl.why = where + "rotate needs divide or split";
  for (char v : s.rotated_by())
    if (pl.why.empty() && dist.find(v) == std::string::npos)
      pl.why = where + "rotate by '" + v + "', which is not distributed";
  for (std::size_t t = 0; t < s.communicate_entries() && pl.why.empty(); ++t) {
    const char v = s.communicated_at(t);
    if (v == 0) continue;
    if (t >= inputs)
      pl.why = where + "communicate names input " + std::to_string(t) + ", but the statement has " +
               std::to_string(inputs) + " inputs";
    else if (v != sv && dist.find(v) == std::string::npos)
      pl.why = where + "communicate input " + std::to_string(t) + " at '" + v +
               "': name the divided variable (each step) or a distributed one (once)";
  }
  for (int r = 0; r < p && pl.why.empty(); ++r) {
    std::vector<std::array<long long, 2>> st;
    const auto ur = static_cast<std::size_t>(r);
    if (!pl.runs(ur)) {
      pl.steps.push_back(st);
      pl.shift.push_back(0);
      continue;
    }
    if (pl.step_var == std::string::npos) {
      st.push_back({0, 0});  // one step; the ranges are not cut
    } else {
      const auto rg = pl.range[ur][pl.step_var];
      if (s.parts() > 0) {
        // No more steps than indices (a huge n would only add empty steps).
        const long long parts = std::max(1LL, std::min(s.parts(), rg[1] - rg[0]));
        for (long long q = 0; q < parts; ++q) {
          const auto b = block_bounds(rg[1] - rg[0], parts, q);
          st.push_back({rg[0] + b[0], rg[0] + b[1]});
        }
      } else {
        for (long long k0 = rg[0]; k0 < rg[1];) {
          const long long k1 = k0 + std::min(s.chunk(), rg[1] - k0);
          st.push_back({k0, k1});
          k0 = k1;
        }
      }
    }
    long long shift = 0;
    for (char v : s.rotated_by()) shift += pl.coords[ur][dist.find(v)];
    pl.nsteps = std::max(pl.nsteps, st.size());
    pl.steps.push_back(std::move(st));
    pl.shift.push_back(shift);
  }
  return pl;
}

// Every rank's box of the tensor named by s (empty where a rank's block is).
inline std::vector<boxn> needs(const statement_plan& pl, std::string_view s) {
  const auto ix = pl.indices(s);
  std::vector<boxn> need;
  for (std::size_t r = 0; r < pl.range.size(); ++r) need.push_back(pl.runs(r) ? pl.box(ix, r) : boxn{ix.size(), {}, {}});
  return need;
}

template <fixed_string S>
struct names_tag {
  static constexpr auto value = S;
};

// For each step: fetches the inputs' boxes (in order, on every rank: per
// step for an input that reads the divided variable, else once), and
// calls run(product, ranges, spans) on the ranks that run the step, with
// the product of the inputs' accesses over the step's boxes in local
// coordinates, the step's variable ranges and the inputs' step boxes
// (row-major).
template <fixed_string... In, class Run, class... T>
void stepped_products(const statement_plan& pl, const statement_schedule& s, std::size_t me, Run&& run,
                      const T&... in) {
  using T0 = std::tuple_element_t<0, std::tuple<T...>>;
  using V = typename T0::value_type;
  using I = typename T0::index_type;
  using names = std::tuple<names_tag<In>...>;
  constexpr std::size_t n = sizeof...(In);
  const auto ins = std::forward_as_tuple(in...);
  std::array<std::vector<V>, n> data;
  std::array<std::vector<V>, n> scratch;
  std::array<boxn, n> have{};
  std::array<bool, n> per_step{};
  std::array<std::vector<std::size_t>, n> ix;
  [&]<std::size_t... t>(std::index_sequence<t...>) {
    ((ix[t] = pl.indices(std::tuple_element_t<t, names>::value.view())), ...);
  }(std::make_index_sequence<n>{});
  for (std::size_t q = 0; q < n; ++q) {
    const bool reads = pl.step_var != std::string::npos &&
                       std::find(ix[q].begin(), ix[q].end(), pl.step_var) != ix[q].end();
    const char at = s.communicated_at(q);
    per_step[q] = reads && (at == 0 || at == pl.vars[pl.step_var]);
  }
  const std::size_t p = pl.range.size();
  // This step's slice of input q, in place when it is all of the fetched box.
  const auto slice = [&](std::size_t q, const boxn& want) -> std::span<const V> {
    if (have[q] == want) return data[q];
    scratch[q].resize(static_cast<std::size_t>(want.size()));
    copy_box(data[q].data(), have[q], scratch[q].data(), want, want);
    return scratch[q];
  };
  for (std::size_t step = 0; step < pl.nsteps; ++step) {
    [&]<std::size_t... t>(std::index_sequence<t...>) {
      const auto fetch = [&](std::size_t q, const auto& tensor) {
        if (!per_step[q] && step > 0) return;
        std::vector<boxn> need;
        for (std::size_t r = 0; r < p; ++r) {
          if (!pl.runs_step(r, per_step[q] ? step : 0)) need.push_back(boxn{ix[q].size(), {}, {}});
          else need.push_back(per_step[q] ? statement_plan::project(ix[q], pl.at_step(r, step)) : pl.box(ix[q], r));
        }
        data[q] = fetch_box(tensor, need, pl.coords);
        have[q] = need[me];
      };
      (fetch(t, std::get<t>(ins)), ...);
      if (!pl.runs_step(me, step)) return;
      const auto rg = pl.at_step(me, step);
      const std::array<std::span<const V>, n> spans{slice(t, statement_plan::project(ix[t], rg))...};
      run((access_of<std::tuple_element_t<t, names>::value>(
               dense_view<V, std::tuple_element_t<t, names>::value.view().size(), I>(
                   statement_plan::project(ix[t], rg), spans[t])) *
           ...),
          rg, spans);
    }(std::make_index_sequence<n>{});
  }
}

// A statement of the form Out = P Q, In0 = P R, In1 = R Q (P, Q, R
// strings of distinct variables, R summed) is a matrix product of row-major
// boxes: rows = the extents of P, columns Q, inner R. Returns |P| (0 is
// allowed), or -1 when the statement has another shape.
template <fixed_string Out, fixed_string... In>
consteval int gemm_rows_vars() {
  if constexpr (sizeof...(In) != 2) {
    return -1;
  } else {
    constexpr std::string_view in[2] = {In.view()...};
    constexpr std::string_view out = Out.view();
    for (std::size_t np = 0; np <= out.size(); ++np) {
      const std::size_t nq = out.size() - np;
      if (in[0].size() < np || in[1].size() < nq || in[0].size() - np != in[1].size() - nq) continue;
      const std::size_t nr = in[0].size() - np;
      bool ok = in[0].substr(0, np) == out.substr(0, np) && in[1].substr(nr) == out.substr(np) &&
                in[0].substr(np) == in[1].substr(0, nr);
      const std::string_view all[3] = {out, in[0].substr(np), {}};
      for (std::size_t a = 0; a < all[0].size() + all[1].size() && ok; ++a)
        for (std::size_t b = 0; b < a && ok; ++b) {
          const char ca = a < all[0].size() ? all[0][a] : all[1][a - all[0].size()];
          const char cb = b < all[0].size() ? all[0][b] : all[1][b - all[0].size()];
          ok = ca != cb;
        }
      if (ok) return static_cast<int>(np);
    }
    return -1;
  }
}

template <class T>
struct type_tag {};

template <fixed_string Out, fixed_string... In, class FO, class... FI>
consteval void check_statement(type_tag<FO>, type_tag<FI>...) {
  static_assert(sizeof...(In) >= 1, "tensorlev::dist::compute: name the output's and each input's variables, "
                                    "e.g. compute<\"ij\", \"ijk\", \"k\">(A, schedule, B, c)");
  static_assert(sizeof...(In) == sizeof...(FI), "tensorlev::dist::compute: give one variable string per input tensor");
  static_assert(((In.view().size() == FI::order) && ...),
                "tensorlev::dist::compute: an input's variable string must name one variable per dimension");
  static_assert(Out.view().size() == FO::order,
                "tensorlev::dist::compute: the output's variable string must name one variable per dimension");
  static_assert(row_major_dense_v<FO> && (row_major_dense_v<FI> && ...),
                "tensorlev::dist::compute: every tensor must be dense row-major (dense_vector, dense_row_major, "
                "dense_tensor<N>)");
  static_assert(well_formed_statement<Out, In...>(),
                "tensorlev::dist::compute: the output's variables must be distinct and each read by an input");
}

}  // namespace detail

/// out(Out) = the product of in...(In), summed over the variables not in
/// Out, as schedule s distributes it (see the file comment). Collective;
/// out's previous values are replaced.
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void compute(const executor& ex, dist_tensor<V, FO, DO, I>& out, const statement_schedule& s,
             const dist_tensor<V, FI, DI, I>&... in) {
  detail::check_statement<Out, In...>(detail::type_tag<FO>{}, detail::type_tag<FI>{}...);
  const machine_grid& g = out.grid();
  std::string why = detail::same_grid("compute", g, in...);
  detail::statement_plan pl;
  if (why.empty()) {
    pl = detail::plan_statement("compute", g, s, {Out.view(), In.view()...}, {&out.dims(), &in.dims()...}, true);
    why = pl.why;
  }
  agree(g, why.empty(), why);
  detail::agree_on_value(g, s.hash(), "tensorlev::dist::compute: the ranks passed different schedules");
  const auto me = static_cast<std::size_t>(g.rank());
  const auto out_ix = pl.indices(Out.view());
  const std::vector<detail::boxn> part = detail::needs(pl, Out.view());  // each rank's partial output box
  std::vector<V> partial(static_cast<std::size_t>(part[me].size()), V{});
  using view = tensor_view<V, dense_tensor<Out.view().size()>, I>;
  const auto view_over = [](const detail::boxn& b, std::span<V> data) {
    return [&]<std::size_t... d>(std::index_sequence<d...>) {
      return view({static_cast<I>(b.hi[d] - b.lo[d])...},
                  typename view::level_tuple(dense_level<I>(static_cast<I>(b.hi[d] - b.lo[d]))...), data);
    }(std::make_index_sequence<Out.view().size()>{});
  };
  std::vector<V> step_out;
  detail::stepped_products<In...>(
      pl, s, me,
      [&](const auto& product, const detail::statement_plan::ranges& rg, const auto& spans) {
        const detail::boxn sb = detail::statement_plan::project(out_ix, rg);
        // The leaf: a matrix product of the boxes (BLAS when linked) when
        // the statement has that shape (GEMM, TTM, TTV), else the
        // generated kernel of the statement.
        const auto leaf = [&](std::span<V> dst) {
          constexpr int np = detail::gemm_rows_vars<Out, In...>();
          if constexpr (np >= 0) {
            long long ext[3] = {1, 1, 1};  // rows, inner, columns
            constexpr std::string_view o = Out.view();
            constexpr std::string_view a = std::get<0>(std::tuple{In.view()...});
            for (std::size_t q = 0; q < o.size(); ++q) {
              const auto& r = rg[pl.vars.find(o[q])];
              ext[q < static_cast<std::size_t>(np) ? 0 : 2] *= r[1] - r[0];
            }
            for (std::size_t q = static_cast<std::size_t>(np); q < a.size(); ++q) {
              const auto& r = rg[pl.vars.find(a[q])];
              ext[1] *= r[1] - r[0];
            }
            constexpr long long imax = std::numeric_limits<I>::max();
            if (ext[0] <= imax && ext[1] <= imax && ext[2] <= imax) {
              detail::gemm_add<V, I>(static_cast<I>(ext[0]), static_cast<I>(ext[1]), static_cast<I>(ext[2]), spans[0],
                                     spans[1], dst, ex);
              return;
            }
          }
          compute_add(ex, detail::access_of<Out>(view_over(sb, dst)), product);
        };
        if (sb == part[me]) {  // the step writes all of the partial (the divided variable is summed)
          leaf(std::span<V>(partial));
          return;
        }
        step_out.assign(static_cast<std::size_t>(sb.size()), V{});
        leaf(std::span<V>(step_out));
        detail::for_each_run(sb, part[me], sb, [&](long long of, long long ot, long long len) {
          for (long long q = 0; q < len; ++q)
            partial[static_cast<std::size_t>(ot + q)] += step_out[static_cast<std::size_t>(of + q)];
        });
      },
      in...);
  // Partials to every rank holding output entries they cover, summed there.
  const auto [otile, oowner] = detail::tiles_of(out, pl.coords);
  (void)oowner;
  std::vector<detail::box_message> msgs;
  const int p = g.size();
  for (int r = 0; r < p; ++r)
    for (int h = 0; h < p; ++h) {
      const detail::boxn piece = part[static_cast<std::size_t>(r)].meet(otile[static_cast<std::size_t>(h)]);
      if (!piece.empty()) msgs.push_back({r, h, piece});
    }
  for (const auto& m : msgs) (void)mpi_count(m.box.size(), "compute: a partial output");
  auto ov = out.local().values();
  std::fill(ov.begin(), ov.end(), V{});
  const detail::boxn my_out = otile[me];
  // Summed in the order of the sending ranks on every holder, so the
  // copies of a replicated output agree bit for bit.
  detail::exchange_boxes<V>(g, msgs, std::span<const V>(partial), part[me], comm_kind::reduce, 702,
                            [&](const V* src, const detail::boxn& from, const detail::boxn& b) {
                              detail::for_each_run(from, my_out, b, [&](long long of, long long ot, long long run) {
                                for (long long q = 0; q < run; ++q)
                                  ov[static_cast<std::size_t>(ot + q)] += src[of + q];
                              });
                            });
}

/// compute on the serial executor inside each rank.
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void compute(dist_tensor<V, FO, DO, I>& out, const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  compute<Out, In...>(serial, out, s, in...);
}

/// The sum over every variable of the product of in...(In) (an inner
/// product when the strings are equal), on every rank: each rank sums its
/// block, then one all-reduce. Collective.
template <fixed_string... In, class V, index_type I, format_type... FI, class... DI>
[[nodiscard]] V reduce(const executor& ex, const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  static_assert(sizeof...(In) >= 1 && sizeof...(In) == sizeof...(FI),
                "tensorlev::dist::reduce: give one variable string per input tensor, e.g. "
                "reduce<\"ijk\", \"ijk\">(schedule, B, C)");
  static_assert(((In.view().size() == FI::order) && ...),
                "tensorlev::dist::reduce: an input's variable string must name one variable per dimension");
  static_assert((detail::row_major_dense_v<FI> && ...),
                "tensorlev::dist::reduce: every tensor must be dense row-major (dense_vector, dense_row_major, "
                "dense_tensor<N>)");
  const machine_grid& g = std::get<0>(std::forward_as_tuple(in...)).grid();
  std::string why = detail::same_grid("reduce", g, in...);
  detail::statement_plan pl;
  if (why.empty()) {
    pl = detail::plan_statement("reduce", g, s, {In.view()...}, {&in.dims()...}, false);
    why = pl.why;
  }
  agree(g, why.empty(), why);
  detail::agree_on_value(g, s.hash(), "tensorlev::dist::reduce: the ranks passed different schedules");
  V v{};
  detail::stepped_products<In...>(
      pl, s, static_cast<std::size_t>(g.rank()),
      [&](const auto& product, const detail::statement_plan::ranges&, const auto&) {
        scalar<V> sc;
        tensorlev::compute(ex, sc(), product);
        v += sc.value();
      },
      in...);
  g.allreduce_sum(&v, 1, g.comm());
  return v;
}

/// reduce on the serial executor inside each rank.
template <fixed_string... In, class V, index_type I, format_type... FI, class... DI>
[[nodiscard]] V reduce(const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  return reduce<In...>(serial, s, in...);
}

}  // namespace tensorlev::dist
