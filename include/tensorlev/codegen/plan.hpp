#pragma once
/// @file codegen/plan.hpp
/// Lowering decisions, as constexpr functions of a statement's description
/// (seed 003, section 4):
///  - the loop order: a topological order of the iteration graph, so that
///    every operand's levels are visited outermost first (concordant);
///  - per loop and per set of operands known to be absent: which levels
///    are co-iterated (merged) and which are located into, the merge
///    lattice over the merged ones, and which non-unique levels must be
///    deduplicated (iterated by segments of equal coordinates).
/// The same functions drive the kernel (kernel.hpp) and the loop-nest
/// printer (print.hpp), so what is printed is what runs.

#include <cstddef>
#include <cstdint>

#include "describe.hpp"

namespace tensorlev::cg {

enum class plan_error : int {
  none = 0,
  no_concordant_order,     // error_acc: an operand whose level order cannot be honoured
  bad_explicit_order,      // the explicit order is not a permutation of the statement's variables
  order_not_concordant,    // error_acc: operand whose levels the explicit order visits out of order
  unordered_merge,         // error_acc: an unordered level must be co-iterated with others
  segment_needs_compact,   // error_acc: a non-unique level whose children are not contiguous
  coord_merge_unsupported, // error_acc: a coordinate-iterated level that may not hold every coordinate
  too_many_points,
  repeated_variable,       // error_acc: an access uses one index variable twice
  computed_needs_locate,   // error_acc: an operand must be co-iterated over a blocked format's computed coordinate
  computed_twice,          // two blocked operands compute the same variable
  precompute_not_last,     // precompute names a variable other than the output's last level's
  precompute_output,       // precompute needs a dense-prefix output with a dense or appended last level
};

using mask_t = std::uint64_t;  // over accesses
inline constexpr std::size_t max_points = 32;

/// How the output is written.
enum class out_kind : unsigned char {
  scalar,   // order 0: one accumulator
  located,  // every level full and locatable (dense): positions by locate
  stream,   // any other format: (coordinates, value) pairs in loop order,
            // assembled by pack (sorting and summing where loops demand it)
  append,     // dense levels, then one unique appendable level (CSR,
              // sparse vector): the last level is appended in loop order
  workspace,  // as append, but reductions run between the dense prefix and
              // the last level (Gustavson SpGEMM): a dense workspace row
  insert,     // dense levels, then one insertable level (hash rows, hash
              // vector): a symbolic pass counts each parent's children to
              // size the level, then a numeric pass inserts in any order
  assemble,   // dense levels, then ordered appendable levels (DCSR, CSF, COO):
              // output coordinates are reached in order, once each; a
              // symbolic pass counts each level's positions (sizing pos and
              // crd), then a numeric pass appends
};

/// Whether the output is written by coordinates in any loop order (the
/// output does not constrain the order).
constexpr bool by_coordinates(out_kind k) { return k == out_kind::stream || k == out_kind::insert; }
/// Whether the output is written once all its variables are bound, from
/// their values (it is not an iterator of the loops).
constexpr bool emits_coordinates(out_kind k) { return by_coordinates(k) || k == out_kind::assemble; }

struct order_plan {
  std::size_t n = 0;
  char vars[max_vars]{};
  // Random-access operands: every level locatable, positioned by locating
  // through all their levels once their last variable is bound, so they
  // do not constrain the loop order. Used only when no order is concordant
  // with every operand (e.g. CSR + dense column-major).
  std::uint64_t ra = 0;
  out_kind out = out_kind::located;
  int out_last = -1;  // loop depth binding the output's last variable (-1: scalar output)
  int ws_open = -1;   // workspace: depth of the loop binding the dense prefix's last variable (-1: none)
  // precompute: from loop depth `scatter` down, each top-level term runs its
  // own loops into the workspace (or the dense output), with the other
  // terms' accesses marked absent (term_others[t]).
  char pre = 0;
  int scatter = -1;
  std::size_t nterms = 0;
  mask_t term_others[max_nodes]{};
  // Hoisted factors (plan_hoist): below loop depth `hoist`, the innermost
  // variable's loop sums the other factors into a dense workspace t; after
  // loop `hoist`, one loop over that variable adds t times the factors in
  // `hoist_outer` (accesses bound above `hoist`) into the output.
  int hoist = -1;
  mask_t hoist_outer = 0;
  // The fibres of loop `hoist` are runs of equal coordinates (COO): every
  // non-unique level of the loops above it is iterated by segments, so that
  // loop `hoist` spans a fibre rather than one entry.
  bool hoist_runs = false;
  // Block workspace (plan_block): in a full block of the output's computed
  // variable (loop `block` binds its block coordinate), the loops below sum
  // into a local array of the block's components, added into the output
  // once per block; block_comp indexes d.comp_*.
  int block = -1;
  int block_comp = -1;
  plan_error error = plan_error::none;
  int error_acc = -1;
};

constexpr int var_pos(const order_plan& o, char v) {
  for (std::size_t x = 0; x < o.n; ++x)
    if (o.vars[x] == v) return static_cast<int>(x);
  return -1;
}

constexpr bool all_locatable(const stmt_desc& d, std::size_t a) {
  for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
    if (!d.acc[a].lev[k].locatable || d.acc[a].lev[k].map != map_kind::mode) return false;
  return d.acc[a].nlev > 0;
}

constexpr bool constrains_order(const order_plan& o, std::size_t a) {
  if (a == 0 && (by_coordinates(o.out) || o.out == out_kind::scalar)) return false;
  return ((o.ra >> a) & 1U) == 0;
}

// Kahn's algorithm over the iteration graph, skipping access `skip`'s
// edges; picks the earliest-appearing available variable first.
constexpr bool dense_level_desc(const level_desc& l) {
  return l.full && l.locatable && l.always_found && l.insertable;
}

// The output's kind before the loop order is known: append is a candidate
// that make_order may demote to workspace or stream.
constexpr out_kind output_kind(const stmt_desc& d) {
  const access_desc& o = d.acc[0];
  if (o.nlev == 0) return out_kind::scalar;
  for (std::size_t k = 0; k < o.nlev; ++k)
    if (o.lev[k].map != map_kind::mode) return out_kind::stream;
  bool dense = true;
  for (std::size_t k = 0; k < o.nlev; ++k) dense = dense && dense_level_desc(o.lev[k]);
  if (dense) return out_kind::located;
  std::size_t prefix = 0;
  while (prefix < o.nlev && dense_level_desc(o.lev[prefix])) ++prefix;
  if (prefix + 1 == o.nlev) {
    const level_desc& last = o.lev[o.nlev - 1];
    // An unordered last level (CSR with unsorted rows) takes its entries in
    // whatever order they come: the workspace then skips sorting its rows.
    if (last.appendable && last.unique && !last.branchless) return out_kind::append;
    if (last.insertable && last.locatable && last.unique) return out_kind::insert;
  }
  // Ordered appendable levels below the dense prefix; below a non-unique
  // level (COO's rows) only singletons, and a singleton only below a
  // non-unique level or another singleton (one child per parent).
  bool below_non_unique = false;
  for (std::size_t k = prefix; k < o.nlev; ++k) {
    const level_desc& l = o.lev[k];
    if (!l.appendable || !l.ordered) return out_kind::stream;
    if (l.branchless) {
      if (k == prefix || !below_non_unique) return out_kind::stream;
    } else if (below_non_unique) {
      return out_kind::stream;
    }
    if (!l.unique) below_non_unique = true;
  }
  return out_kind::assemble;
}

constexpr order_plan topo_order(const stmt_desc& d, int skip, std::uint64_t ra, out_kind out) {
  order_plan o;
  o.ra = ra;
  o.out = out;
  bool placed[max_vars]{};
  for (std::size_t step = 0; step < d.nvars; ++step) {
    int pick = -1;
    for (std::size_t v = 0; v < d.nvars && pick < 0; ++v) {
      if (placed[v]) continue;
      bool ready = true;
      // A computed variable follows its block pair.
      for (std::size_t c = 0; c < d.ncomp && ready; ++c) {
        if (d.comp_var[c] != d.vars[v]) continue;
        for (std::size_t w = 0; w < d.nvars; ++w)
          if ((d.vars[w] == d.comp_outer[c] || d.vars[w] == d.comp_inner[c]) && !placed[w]) ready = false;
      }
      for (std::size_t a = 0; a < d.nacc && ready; ++a) {
        if (static_cast<int>(a) == skip || !constrains_order(o, a)) continue;
        for (std::size_t k = 1; k < d.acc[a].nlev && ready; ++k) {
          if (d.acc[a].lev[k].var != d.vars[v]) continue;
          // every level above k must bind a placed variable
          for (std::size_t u = 0; u < k; ++u) {
            bool up_placed = false;
            for (std::size_t w = 0; w < d.nvars; ++w)
              if (d.vars[w] == d.acc[a].lev[u].var && placed[w]) up_placed = true;
            if (!up_placed) ready = false;
          }
        }
      }
      if (ready) pick = static_cast<int>(v);
    }
    if (pick < 0) {
      o.error = plan_error::no_concordant_order;
      return o;
    }
    placed[pick] = true;
    o.vars[o.n++] = d.vars[pick];
  }
  return o;
}


constexpr order_plan order_for(const stmt_desc& d, out_kind out) {
  order_plan o;
  o.out = out;
  if (d.norder > 0) {
    // Keep the statement's variables (a term split off a statement may use
    // only some of them; the statement as a whole is checked in kernel.hpp).
    for (std::size_t x = 0; x < d.norder; ++x) {
      bool used = false;
      for (std::size_t v = 0; v < d.nvars; ++v) used = used || d.vars[v] == d.order[x];
      if (used) o.vars[o.n++] = d.order[x];
    }
    bool ok = o.n == d.nvars;
    for (std::size_t v = 0; v < d.nvars && ok; ++v) ok = var_pos(o, d.vars[v]) >= 0;
    for (std::size_t x = 0; x < o.n && ok; ++x)
      for (std::size_t y = x + 1; y < o.n; ++y) ok = ok && o.vars[x] != o.vars[y];
    if (!ok) {
      o.error = plan_error::bad_explicit_order;
      return o;
    }
    auto concordant = [&](std::size_t a) {
      for (std::size_t k = 1; k < d.acc[a].nlev; ++k)
        if (var_pos(o, d.acc[a].lev[k].var) < var_pos(o, d.acc[a].lev[k - 1].var)) return false;
      for (std::size_t c = 0; c < d.ncomp; ++c)
        if (var_pos(o, d.comp_var[c]) < var_pos(o, d.comp_inner[c])) return false;
      return true;
    };
    for (std::size_t a = 0; a < d.nacc; ++a)
      if (constrains_order(o, a) && !concordant(a)) {
        if (all_locatable(d, a)) {
          o.ra |= std::uint64_t{1} << a;
        } else {
          o.error = plan_error::order_not_concordant;
          o.error_acc = static_cast<int>(a);
          return o;
        }
      }
    return o;
  }
  o = topo_order(d, -1, 0, out);
  if (o.error == plan_error::none) return o;
  std::uint64_t ra = 0;
  for (std::size_t a = 0; a < d.nacc; ++a)
    if (all_locatable(d, a)) ra |= std::uint64_t{1} << a;
  o = topo_order(d, -1, ra, out);
  if (o.error != plan_error::none) {
    // Name the operand whose removal would make the graph acyclic.
    for (std::size_t a = d.nacc; a-- > 1;)
      if (topo_order(d, static_cast<int>(a), ra, out).error == plan_error::none) {
        o.error_acc = static_cast<int>(a);
        break;
      }
  }
  return o;
}

// Whether level k of an access can be iterated by segments of equal
// coordinates if it is non-unique: the positions of the level below must
// be contiguous (a compact, position-iterated child).
constexpr bool segment_spans(const access_desc& a, std::size_t k) {
  if (a.lev[k].unique || k + 1 >= a.nlev) return true;
  const level_desc& c = a.lev[k + 1];
  return c.pos_iter && c.compact && !c.coord_iter;
}

// Whether the append output of plan o can be assembled in loop order: the
// loop over the last output variable enumerates coordinates in order, once
// each (ordered input levels; non-unique ones deduplicated by segments).
constexpr bool append_feasible(const stmt_desc& d, const order_plan& o) {
  if ((o.ra & 1U) != 0) return false;  // the output must be visited in storage order
  const char v = d.acc[0].lev[d.acc[0].nlev - 1].var;
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
      const level_desc& l = d.acc[a].lev[k];
      // Every output variable, the dense prefix's too, must be enumerated
      // in increasing order: entries are appended in visit order and the
      // positions of the prefix's rows are a scan in row order (a hash
      // vector driving the rows of a CSC result scrambled its columns).
      bool out_var = false;
      for (std::size_t x = 0; x < d.acc[0].order; ++x) out_var = out_var || d.acc[0].vars[x] == l.var;
      if (out_var && !l.ordered && !(l.locatable && l.full)) return false;
      if (l.var != v) continue;
      if (!segment_spans(d.acc[a], k)) return false;
    }
  return true;
}

// Whether the assemble output of plan o sees its coordinates in order: the
// output's variables are the outermost loops, and each enumerates its
// coordinates in increasing order (ordered or full locatable input levels).
constexpr bool assemble_feasible(const stmt_desc& d, const order_plan& o) {
  if ((o.ra & 1U) != 0) return false;
  const access_desc& out = d.acc[0];
  for (std::size_t x = 0; x < o.n; ++x) {
    bool is_out = false;
    for (std::size_t k = 0; k < out.order; ++k) is_out = is_out || out.vars[k] == o.vars[x];
    if (is_out && x >= out.order) return false;
    if (!is_out) continue;
    for (std::size_t a = 1; a < d.nacc; ++a)
      for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
        const level_desc& l = d.acc[a].lev[k];
        if (l.var != o.vars[x]) continue;
        if (!l.ordered && !(l.locatable && l.full)) return false;
        // A non-unique level is iterated by segments of equal coordinates,
        // which needs the positions of the level below to be contiguous.
        if (!segment_spans(d.acc[a], k)) return false;
      }
  }
  return true;
}

constexpr order_plan make_order(const stmt_desc& d) {
  order_plan o;
  for (std::size_t a = 0; a < d.nacc; ++a)
    for (std::size_t x = 0; x < d.acc[a].order; ++x)
      for (std::size_t y = x + 1; y < d.acc[a].order; ++y)
        if (d.acc[a].vars[x] == d.acc[a].vars[y]) {
          o.error = plan_error::repeated_variable;
          o.error_acc = static_cast<int>(a);
          return o;
        }
  for (std::size_t c = 0; c < d.ncomp; ++c)
    for (std::size_t e = c + 1; e < d.ncomp; ++e)
      if (d.comp_var[c] == d.comp_var[e]) {
        o.error = plan_error::computed_twice;
        return o;
      }
  const out_kind cand = output_kind(d);
  o = order_for(d, cand);
  if (cand == out_kind::assemble && !(o.error == plan_error::none && assemble_feasible(d, o)))
    o = order_for(d, out_kind::stream);
  if (cand == out_kind::append) {
    bool ok = o.error == plan_error::none && append_feasible(d, o);
    if (ok) {
      // Reductions between the dense prefix and the last level: workspace.
      const access_desc& out = d.acc[0];
      int prefix = -1;
      for (std::size_t k = 0; k + 1 < out.nlev; ++k)
        prefix = var_pos(o, out.lev[k].var) > prefix ? var_pos(o, out.lev[k].var) : prefix;
      const int last = var_pos(o, out.lev[out.nlev - 1].var);
      if (last < prefix) ok = false;
      // Every loop down to the prefix's last variable must bind an output
      // variable: a loop over anything else (a reduction, or a derived
      // level's private variable such as ELL's slot or DIA's diagonal) would
      // revisit output rows, and a row can be appended only once.
      for (int x = 0; x <= prefix && ok; ++x) {
        bool is_out = false;
        for (std::size_t k = 0; k < out.order; ++k) is_out = is_out || out.vars[k] == o.vars[x];
        if (!is_out) ok = false;
      }
      for (int x = prefix + 1; x < last && ok; ++x) {
        bool is_out = false;
        for (std::size_t k = 0; k < out.order; ++k) is_out = is_out || out.vars[k] == o.vars[x];
        if (!is_out) o.out = out_kind::workspace;
      }
      o.ws_open = prefix;
    }
    if (!ok) o = order_for(d, out_kind::stream);
  }
  for (std::size_t x = 0; x < d.acc[0].order; ++x)
    o.out_last = var_pos(o, d.acc[0].vars[x]) > o.out_last ? var_pos(o, d.acc[0].vars[x]) : o.out_last;
  return o;
}

// Accesses under node n.
constexpr mask_t accesses_under(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  if (x.kind == node_kind::access) return mask_t{1} << x.acc;
  mask_t m = 0;
  if (x.a >= 0) m |= accesses_under(d, x.a);
  if (x.b >= 0) m |= accesses_under(d, x.b);
  return m;
}

constexpr void collect_terms(const stmt_desc& d, int n, order_plan& o) {
  const node& x = d.nodes[n];
  if (x.kind == node_kind::add || x.kind == node_kind::sub) {
    collect_terms(d, x.a, o);
    collect_terms(d, x.b, o);
  } else {
    o.term_others[o.nterms++] = accesses_under(d, n);
  }
}

// Mask bits above every access (max_accesses <= 16) that select how the
// kernel evaluates a hoisted product (plan_hoist): `hoist_bit` in the loops
// below the hoist depth (the factors not in hoist_outer, the sum going into
// the workspace), `combine_bit` in the loop after them (hoist_outer's
// factors only).
inline constexpr mask_t hoist_bit = mask_t{1} << 63;
inline constexpr mask_t combine_bit = mask_t{1} << 62;
// Below the hoist depth, the loops under the first entry that loop `hoist`
// reaches in a fibre: they store into the workspace instead of adding (no
// zeroing of t per fibre; SPLATT's first-entry initialisation).
inline constexpr mask_t first_bit = mask_t{1} << 60;
// The loops under a block's lanes whose children are all found (a
// lanes_found level below a block_inner level said so at run time,
// kernel::nest): those levels are not missed there.
inline constexpr mask_t lanes_found_bit = mask_t{1} << 59;
// The innermost loop of a row the output trusts (a workspace row in a
// numeric_plan's run over patterns it checked before: every product lies in
// the row's pattern): the output adds without its per-product check
// (output::leaf_emit<true>). The full product's loop is instantiated
// without it, unchanged.
inline constexpr mask_t trusted_bit = mask_t{1} << 58;
// The jammed innermost loop's own instantiations (kernel::jam_scan): no
// meaning beyond making them distinct from the functions the other loops
// call, whose inlining there stays as it was (masked out of the plan
// lookup like trusted_bit).
inline constexpr mask_t jam_bit = mask_t{1} << 55;
// A numeric_plan's trusted row that adds through the plan's slot table
// (slots_bit: each product at the slot the table gives, in the output's
// values) or records it (record_bit: the first trusted run over a
// pattern): the loops from the row's opening down, an instantiation of
// their own chosen per row (kernel::slot_nest; docs/design.md, "Slot
// tables"). Masked out of the plan lookup like trusted_bit.
inline constexpr mask_t slots_bit = mask_t{1} << 54;
inline constexpr mask_t record_bit = mask_t{1} << 53;
// Whether level l may miss (report a position or coordinate not found)
// in the loops of absent set abs.
constexpr bool may_miss(const level_desc& l, mask_t abs) {
  return !l.always_found && !((abs & lanes_found_bit) != 0 && l.lanes_found);
}
// Bits 56-57: the hoisted sub-nest runs with the constant extent
// hoist_widths[code - 1] of v (kernel::fibres: chosen at run time where v's
// extent is one of them), so that the workspace and the output row's sums
// live in registers.
inline constexpr int hoist_width_shift = 56;
inline constexpr mask_t hoist_width_mask = mask_t{3} << hoist_width_shift;
inline constexpr int hoist_widths[] = {8, 16, 32};
static_assert(std::size(hoist_widths) <= 3, "tensorlev: hoist_widths are coded in two mask bits");
constexpr mask_t hoist_width_bits(int code) { return static_cast<mask_t>(code) << hoist_width_shift; }
constexpr int hoist_width(mask_t abs) {
  const int code = static_cast<int>((abs & hoist_width_mask) >> hoist_width_shift);
  return code == 0 ? 0 : hoist_widths[code - 1];
}

// Whether node n is a product of accesses, constants and negations.
constexpr bool pure_product(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  switch (x.kind) {
    case node_kind::access:
    case node_kind::constant: return true;
    case node_kind::neg: return pure_product(d, x.a);
    case node_kind::mul: return pure_product(d, x.a) && pure_product(d, x.b);
    default: return false;
  }
}

/// Factor hoisting (SPLATT's fibre sums in CSF MTTKRP, as a generated
/// precompute): for a product into a dense output whose innermost loop runs
/// over a dense variable v (the output's last level), with loop n-2 a
/// reduction, factors bound above loop n-2 (C(k,r) in A(i,r) = B(i,k,l) *
/// C(k,r) * D(l,r) with loops i,k,l,r) need not be multiplied once per
/// iteration of loop n-2: the other factors are summed over loop n-2 into
/// t(v), and the output gets t(v) times the hoisted factors once. One
/// multiplication and one load fewer per entry and value of v. Planned only
/// when some hoisted factor depends on v (otherwise nothing is saved), and
/// every level that binds v is a dense last level (the workspace and the
/// final loop locate there).
constexpr void plan_hoist(const stmt_desc& d, order_plan& o) {
  if (o.error != plan_error::none || o.out != out_kind::located || o.ra != 0 || o.scatter >= 0 || d.ncomp > 0 ||
      o.n < 3 || !pure_product(d, d.root))
    return;
  const access_desc& out = d.acc[0];
  const char v = o.vars[o.n - 1];
  const int s = static_cast<int>(o.n) - 2;
  if (out.nlev == 0 || out.lev[out.nlev - 1].var != v) return;
  for (std::size_t k = 0; k < out.order; ++k)
    if (out.vars[k] == o.vars[s]) return;
  mask_t outer = 0;
  bool outer_v = false, inner = false;
  for (std::size_t a = 0; a < d.nacc; ++a) {
    int bound = -1;
    bool has_v = false;
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
      const level_desc& l = d.acc[a].lev[k];
      if (l.map != map_kind::mode) return;
      if (l.var == v) {
        if (k + 1 != d.acc[a].nlev || !l.full || !l.locatable || !l.always_found || !l.unique) return;
        has_v = true;
      } else {
        bound = var_pos(o, l.var) > bound ? var_pos(o, l.var) : bound;
      }
    }
    if (a == 0) continue;
    if (bound < s) {
      outer |= mask_t{1} << a;
      outer_v = outer_v || has_v;
    } else {
      inner = true;
    }
  }
  // A singleton level (COO's) at loop n-2 holds one entry per position of
  // its parent: a fibre is a run of equal coordinates of the levels above,
  // which are then iterated by segments (hoist_runs; every non-unique level
  // above must have contiguous children, segment_spans). Without a
  // non-unique parent (a singleton under a unique level) fibres hold one
  // entry each, and there is nothing to sum.
  bool runs = false;
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
      const level_desc& l = d.acc[a].lev[k];
      if (l.var != o.vars[s] || !l.branchless || l.locatable) continue;
      if (k == 0 || d.acc[a].lev[k - 1].unique) return;
      runs = true;
    }
  // Every non-unique level of the loops above loop n-2, of any operand, is
  // then iterated by segments: each must have contiguous children.
  if (runs)
    for (std::size_t a = 1; a < d.nacc; ++a)
      for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
        if (var_pos(o, d.acc[a].lev[k].var) < s && !segment_spans(d.acc[a], k)) return;
  if (!outer_v || !inner) return;
  o.hoist = s;
  o.hoist_outer = outer;
  o.hoist_runs = runs;
}

// Whether node n contributes to the value evaluated under abs: every node
// outside a hoisted product; below the hoist depth (hoist_bit) the factors
// not hoisted, with the constants and signs; in the loop after it
// (combine_bit) the hoisted factors only.
constexpr bool hoist_factor(const stmt_desc& d, const order_plan& o, int n, mask_t abs) {
  if ((abs & (hoist_bit | combine_bit)) == 0) return true;
  const bool combine = (abs & combine_bit) != 0;
  const node& x = d.nodes[n];
  switch (x.kind) {
    case node_kind::access: return ((o.hoist_outer >> x.acc) & 1U) == (combine ? 1U : 0U);
    case node_kind::constant: return !combine;
    case node_kind::neg:
    case node_kind::fn: return !combine || hoist_factor(d, o, x.a, abs);
    default: return hoist_factor(d, o, x.a, abs) || hoist_factor(d, o, x.b, abs);
  }
}

// Mask bit above every access: the loops of a full block under a block
// workspace (plan_block).
inline constexpr mask_t block_bit = mask_t{1} << 61;
// The largest block a block workspace holds (values on the stack).
inline constexpr int block_ws_max = 64;

/// Block workspace (register blocking of the output): for a dense vector
/// output over a variable computed from blocks (outer * B + inner: SELL-C's
/// slices and lanes, BCSR's block rows or columns) whose inner coordinate
/// a full level binds, with at least one loop between the block
/// coordinate's loop and the inner coordinate's (a slice's slots, BCSR's
/// block columns), every value of the output's block is added once per
/// pass of those loops. In a block that lies inside the extent (the
/// last one may not), the kernel sums into a local array of B values
/// instead (no store to the output per value, no bounds test of the
/// computed coordinate, and the local cannot alias an operand, so the
/// compiler may keep it in registers or vectorize across the block), and
/// adds each of the B sums into the output once per block. The sums are
/// reassociated for `+=` (old value + (a + b ...)), not for `=`.
constexpr void plan_block(const stmt_desc& d, order_plan& o) {
  if (o.error != plan_error::none || o.out != out_kind::located || o.ra != 0 || o.scatter >= 0 || o.hoist >= 0 ||
      d.ncomp == 0)
    return;
  const access_desc& out = d.acc[0];
  if (out.nlev != 1) return;
  const level_desc& l = out.lev[0];
  if (l.map != map_kind::mode || !l.full || !l.locatable || !l.always_found || !l.unique) return;
  for (std::size_t c = 0; c < d.ncomp; ++c) {
    if (d.comp_var[c] != l.var) continue;
    const int s = var_pos(o, d.comp_outer[c]), in = var_pos(o, d.comp_inner[c]), v = var_pos(o, l.var);
    if (s < 0 || in < s + 2 || v <= in || d.comp_block[c] < 1 || d.comp_block[c] > block_ws_max) return;
    // The inner coordinate's level is full (dense): each pass of the loops
    // between adds into all B sums. A sparse one (CSB's blocks) may hold
    // a few entries per block, fewer than the B sums cleared and added.
    bool full = false;
    const access_desc& a = d.acc[static_cast<std::size_t>(d.comp_acc[c])];
    for (std::size_t k = 0; k < a.nlev; ++k)
      if (a.lev[k].var == d.comp_inner[c]) full = a.lev[k].full;
    if (!full) return;
    o.block = s;
    o.block_comp = static_cast<int>(c);
    return;
  }
}

/// The order plan with `precompute` of the expression over variable `pre`
/// (the output's last level's variable) into a dense workspace, taco's
/// workspace transformation: below the loops that bind the rest of the
/// output, every top-level term is scattered into the workspace by its own
/// loops, then the workspace is appended in order (or, for a dense output,
/// the output itself is the workspace). Gustavson SpGEMM and row-wise
/// sparse add are this schedule.
constexpr order_plan make_order(const stmt_desc& d, char pre) {
  order_plan o = make_order(d);
  if (pre == 0) plan_hoist(d, o);
  if (pre == 0) plan_block(d, o);
  if (pre == 0 || o.error != plan_error::none) return o;
  const access_desc& out = d.acc[0];
  if (out.nlev == 0 || out.lev[out.nlev - 1].var != pre) {
    o.error = plan_error::precompute_not_last;
    return o;
  }
  const out_kind cand = output_kind(d);
  if (cand == out_kind::append) {
    o = order_for(d, out_kind::append);
    if (o.error != plan_error::none) return o;
    o.out = out_kind::workspace;
  } else if (cand != out_kind::located) {
    o.error = plan_error::precompute_output;
    return o;
  }
  int prefix = -1;
  for (std::size_t k = 0; k < out.order; ++k)
    if (out.vars[k] != pre) prefix = var_pos(o, out.vars[k]) > prefix ? var_pos(o, out.vars[k]) : prefix;
  if (var_pos(o, pre) < prefix) {
    o.error = plan_error::precompute_output;
    return o;
  }
  // The loops above the workspace must bind the output's other variables
  // only (each row's workspace is flushed once).
  for (int x = 0; x <= prefix; ++x) {
    bool is_out = false;
    for (std::size_t k = 0; k < out.order; ++k) is_out = is_out || out.vars[k] == o.vars[x];
    if (!is_out && o.out == out_kind::workspace) {
      o.error = plan_error::precompute_output;
      return o;
    }
  }
  if (o.out == out_kind::workspace) o.ws_open = prefix;
  o.out_last = -1;
  for (std::size_t x = 0; x < out.order; ++x)
    o.out_last = var_pos(o, out.vars[x]) > o.out_last ? var_pos(o, out.vars[x]) : o.out_last;
  o.pre = pre;
  o.scatter = prefix + 1;
  collect_terms(d, d.root, o);
  mask_t all = 0;
  for (std::size_t t = 0; t < o.nterms; ++t) all |= o.term_others[t];
  for (std::size_t t = 0; t < o.nterms; ++t) o.term_others[t] = all & ~o.term_others[t];
  return o;
}

// Bit mask (over d.vars) of the variables used under node n.
constexpr std::uint32_t vars_under(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  std::uint32_t m = 0;
  if (x.kind == node_kind::access) {
    // The access's logical variables, and the private variables of its
    // derived levels (iterated only by it).
    for (std::size_t k = 0; k < d.acc[x.acc].order; ++k)
      for (std::size_t v = 0; v < d.nvars; ++v)
        if (d.vars[v] == d.acc[x.acc].vars[k]) m |= std::uint32_t{1} << v;
    for (std::size_t k = 0; k < d.acc[x.acc].nlev; ++k)
      for (std::size_t v = 0; v < d.nvars; ++v)
        if (d.vars[v] == d.acc[x.acc].lev[k].var && is_private_var(d.vars[v])) m |= std::uint32_t{1} << v;
    return m;
  }
  if (x.a >= 0) m |= vars_under(d, x.a);
  if (x.b >= 0) m |= vars_under(d, x.b);
  return m;
}

constexpr std::uint32_t output_vars(const stmt_desc& d) {
  std::uint32_t m = 0;
  for (std::size_t k = 0; k < d.acc[0].order; ++k)
    for (std::size_t v = 0; v < d.nvars; ++v)
      if (d.vars[v] == d.acc[0].vars[k]) m |= std::uint32_t{1} << v;
  return m;
}

// Whether every access under node n is dense (its levels full and
// locatable, each storing a dimension) or a scalar.
constexpr bool dense_under(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  if (x.kind == node_kind::access) {
    const access_desc& a = d.acc[x.acc];
    for (std::size_t k = 0; k < a.nlev; ++k)
      if (!dense_level_desc(a.lev[k]) || !a.lev[k].unique || a.lev[k].map != map_kind::mode) return false;
    return true;
  }
  return (x.a < 0 || dense_under(d, x.a)) && (x.b < 0 || dense_under(d, x.b));
}

// Whether the statement divides or applies a function anywhere.
constexpr bool has_functions(const stmt_desc& d) {
  for (std::size_t n = 0; n < d.nnodes; ++n)
    if (d.nodes[n].kind == node_kind::fn || d.nodes[n].kind == node_kind::div) return true;
  return false;
}

// Whether every operand's levels each store one dimension (no ELL or SELL
// padding, DIA diagonals or BCSR/CSB blocks, whose stored zeros a quotient
// or a function's value would multiply or divide: 0 / 0 and 0 * log(0)
// are NaN where a format without them gives 0).
constexpr bool mode_maps_only(const stmt_desc& d) {
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
      if (d.acc[a].lev[k].map != map_kind::mode) return false;
  return true;
}

// Whether every function argument and divisor under node n is dense (see
// node_kind): the iteration treats f(e) as e and l / r as l * r, which is
// exact only where e and r are present at every point.
constexpr bool functions_dense(const stmt_desc& d, int n) {
  const node& x = d.nodes[n];
  if (x.kind == node_kind::fn && !dense_under(d, x.a)) return false;
  if (x.kind == node_kind::div && !dense_under(d, x.b)) return false;
  return (x.kind == node_kind::access || x.a < 0 || functions_dense(d, x.a)) &&
         (x.kind == node_kind::access || x.b < 0 || functions_dense(d, x.b));
}

// Whether every + or - below a product (or below the root, if `top` is
// false) has the same reduction variables on both sides. Sums over a
// reduction variable then commute with every + and one loop nest computes
// the statement; top-level terms that differ are split by the runner.
constexpr bool reductions_uniform(const stmt_desc& d, int n, bool top) {
  const node& x = d.nodes[n];
  const std::uint32_t out = output_vars(d);
  switch (x.kind) {
    case node_kind::access:
    case node_kind::constant: return true;
    case node_kind::neg: return reductions_uniform(d, x.a, top);
    case node_kind::fn: return reductions_uniform(d, x.a, false);  // f applies per point: no sum splits through it
    case node_kind::mul:
    case node_kind::div: return reductions_uniform(d, x.a, false) && reductions_uniform(d, x.b, false);
    case node_kind::add:
    case node_kind::sub:
      if (!top && (vars_under(d, x.a) & ~out) != (vars_under(d, x.b) & ~out)) return false;
      return reductions_uniform(d, x.a, top) && reductions_uniform(d, x.b, top);
  }
  return true;
}

// ---- per-loop plans ----------------------------------------------------------

struct iter_desc {
  int acc = -1;
  int lev = -1;
  bool merged = false;   // co-iterated
  bool coord = false;    // merged by coordinate value iteration (dense driver)
  bool located = false;  // positioned by locate
  bool segment = false;  // non-unique, iterated by runs of equal coordinates
  bool chain = false;    // random-access operand: locate through every level here
  bool appended = false; // the output's appended last level (append, workspace)
  bool may_miss = false; // located, or merged, and the level may report not found
};

struct loop_plan {
  char var = 0;
  std::size_t nit = 0;
  iter_desc it[max_accesses]{};
  bool universe = false;  // a merged counter over the variable's whole extent
  int computed = -1;      // the variable is computed from blocks (index into d.comp_*): one coordinate
  std::size_t nm = 0;
  int merged[max_accesses + 1]{};  // iterator index per merged slot; -1: the universe counter
  std::size_t np = 0;
  std::uint32_t pts[max_points]{};  // lattice points over merged slots, largest first
  bool zero = false;                // the expression is zero: nothing to do
  int out_iter = -1;                // iterator index of the output, if it binds the variable
  bool out_done = false;            // the output's last level is bound in this loop
  plan_error error = plan_error::none;
  int error_acc = -1;
};

constexpr bool absent(mask_t m, int a) { return a >= 0 && ((m >> a) & 1U) != 0; }

constexpr bool nonzero(const stmt_desc& d, int n, mask_t abs) {
  const node& x = d.nodes[n];
  switch (x.kind) {
    case node_kind::access: return !absent(abs, x.acc);
    case node_kind::constant: return true;
    case node_kind::mul:
    case node_kind::div: return nonzero(d, x.a, abs) && nonzero(d, x.b, abs);
    case node_kind::add:
    case node_kind::sub: return nonzero(d, x.a, abs) || nonzero(d, x.b, abs);
    case node_kind::neg:
    case node_kind::fn: return nonzero(d, x.a, abs);
  }
  return false;
}

// Levels consumed by access a before loop depth `depth`.
constexpr std::size_t consumed(const stmt_desc& d, const order_plan& o, std::size_t a, std::size_t depth) {
  std::size_t k = 0;
  while (k < d.acc[a].nlev && var_pos(o, d.acc[a].lev[k].var) < static_cast<int>(depth)) ++k;
  return k;
}

struct cover_t {
  bool zero = false;
  bool all = false;
  std::uint32_t set = 0;  // over iterator indices
};

// A set of iterators whose coordinates include every coordinate where node
// n can be nonzero (`all`: no iterator bounds it).
constexpr cover_t cover(const stmt_desc& d, int n, mask_t abs, const int* iter_of_acc, const loop_plan& p) {
  const node& x = d.nodes[n];
  switch (x.kind) {
    case node_kind::access: {
      if (absent(abs, x.acc)) return {true, false, 0};
      const int it = iter_of_acc[x.acc];
      if (it < 0) return {false, true, 0};
      return {false, false, std::uint32_t{1} << it};
    }
    case node_kind::constant: return {false, true, 0};
    case node_kind::neg:
    case node_kind::fn: return cover(d, x.a, abs, iter_of_acc, p);
    case node_kind::mul:
    case node_kind::div: {
      const cover_t l = cover(d, x.a, abs, iter_of_acc, p), r = cover(d, x.b, abs, iter_of_acc, p);
      if (l.zero || r.zero) return {true, false, 0};
      if (l.all) return r;
      if (r.all) return l;
      auto cost = [&](std::uint32_t s) {
        int c = 0;
        for (std::size_t i = 0; i < p.nit; ++i) {
          if (!((s >> i) & 1U)) continue;
          const level_desc& lv = d.acc[p.it[i].acc].lev[p.it[i].lev];
          c += !lv.locatable ? 0 : (lv.full ? 10 : 1);
        }
        return c;
      };
      return cost(r.set) < cost(l.set) ? r : l;
    }
    case node_kind::add:
    case node_kind::sub: {
      const cover_t l = cover(d, x.a, abs, iter_of_acc, p), r = cover(d, x.b, abs, iter_of_acc, p);
      if (l.zero) return r;
      if (r.zero) return l;
      if (l.all || r.all) return {false, true, 0};
      return {false, false, l.set | r.set};
    }
  }
  return {};
}

struct lattice_t {
  std::size_t n = 0;
  std::uint32_t pts[max_points]{};
  bool overflow = false;
  constexpr void add(std::uint32_t m) {
    for (std::size_t i = 0; i < n; ++i)
      if (pts[i] == m) return;
    if (n == max_points) {
      overflow = true;
      return;
    }
    pts[n++] = m;
  }
};

// Merge lattice of node n over merged slots: intersection for *, union
// for + and -. An empty point means "present without any merged iterator".
constexpr lattice_t lattice(const stmt_desc& d, int n, mask_t abs, const int* slot_of_acc) {
  const node& x = d.nodes[n];
  lattice_t out;
  switch (x.kind) {
    case node_kind::access:
      if (absent(abs, x.acc)) return out;
      out.add(slot_of_acc[x.acc] >= 0 ? std::uint32_t{1} << slot_of_acc[x.acc] : 0U);
      return out;
    case node_kind::constant: out.add(0); return out;
    case node_kind::neg:
    case node_kind::fn: return lattice(d, x.a, abs, slot_of_acc);
    case node_kind::mul:
    case node_kind::div:
    case node_kind::add:
    case node_kind::sub: {
      const lattice_t l = lattice(d, x.a, abs, slot_of_acc), r = lattice(d, x.b, abs, slot_of_acc);
      for (std::size_t i = 0; i < l.n; ++i)
        for (std::size_t j = 0; j < r.n; ++j) out.add(l.pts[i] | r.pts[j]);
      if (x.kind != node_kind::mul && x.kind != node_kind::div) {
        for (std::size_t i = 0; i < l.n; ++i) out.add(l.pts[i]);
        for (std::size_t j = 0; j < r.n; ++j) out.add(r.pts[j]);
      }
      out.overflow = out.overflow || l.overflow || r.overflow;
      return out;
    }
  }
  return out;
}

constexpr int popcount32(std::uint32_t m) {
  int c = 0;
  for (; m; m &= m - 1) ++c;
  return c;
}

constexpr loop_plan plan_loop(const stmt_desc& d, const order_plan& o, std::size_t depth, mask_t abs) {
  loop_plan p;
  p.var = o.vars[depth];
  int iter_of_acc[max_accesses];
  for (auto& x : iter_of_acc) x = -1;
  // Iterators: present accesses whose next level binds the variable.
  if (emits_coordinates(o.out)) p.out_done = static_cast<int>(depth) == o.out_last;
  for (std::size_t a = 0; a < d.nacc; ++a) {
    if (absent(abs, static_cast<int>(a))) continue;
    if (a == 0 && emits_coordinates(o.out)) continue;
    if ((o.ra >> a) & 1U) {
      int last = -1;
      for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
        last = var_pos(o, d.acc[a].lev[k].var) > last ? var_pos(o, d.acc[a].lev[k].var) : last;
      if (last != static_cast<int>(depth)) continue;
      iter_of_acc[a] = static_cast<int>(p.nit);
      iter_desc& it = p.it[p.nit++];
      it.acc = static_cast<int>(a);
      it.lev = 0;
      it.chain = true;
      if (a == 0) p.out_iter = static_cast<int>(p.nit - 1), p.out_done = true;
      continue;
    }
    const std::size_t k = consumed(d, o, a, depth);
    if (k >= d.acc[a].nlev || d.acc[a].lev[k].var != p.var) continue;
    iter_of_acc[a] = static_cast<int>(p.nit);
    iter_desc& it = p.it[p.nit++];
    it.acc = static_cast<int>(a);
    it.lev = static_cast<int>(k);
    if (a == 0) {
      p.out_iter = static_cast<int>(p.nit - 1);
      p.out_done = k + 1 == d.acc[0].nlev;
      it.appended = p.out_done && (o.out == out_kind::append || o.out == out_kind::workspace);
    }
  }
  // The output's own level is not an input: it takes no part in covers.
  iter_of_acc[0] = -1;
  const bool out_var_loop = [&] {
    for (std::size_t k = 0; k < d.acc[0].order; ++k)
      if (d.acc[0].vars[k] == p.var) return true;
    return false;
  }();
  p.zero = !nonzero(d, d.root, abs);
  for (std::size_t c = 0; c < d.ncomp; ++c)
    if (d.comp_var[c] == p.var) p.computed = static_cast<int>(c);
  if (p.computed >= 0) {
    // One coordinate, computed from the block pair: locate every operand.
    for (std::size_t i = 0; i < p.nit; ++i) {
      const level_desc& lv = d.acc[p.it[i].acc].lev[p.it[i].lev];
      if (p.it[i].appended) continue;
      if (!lv.locatable && !p.it[i].chain) {
        p.error = plan_error::computed_needs_locate;
        p.error_acc = p.it[i].acc;
      }
      p.it[i].located = true;
      p.it[i].may_miss = may_miss(lv, abs);
      if (p.it[i].chain)
        for (std::size_t k = 0; k < d.acc[p.it[i].acc].nlev; ++k)
          p.it[i].may_miss = p.it[i].may_miss || may_miss(d.acc[p.it[i].acc].lev[k], abs);
    }
    p.merged[p.nm++] = -2;
    if (!p.zero) p.pts[p.np++] = 1U;
    return p;
  }
  // Non-locatable levels are co-iterated; the output and locatable levels
  // are located.
  for (std::size_t i = 0; i < p.nit; ++i) {
    const level_desc& lv = d.acc[p.it[i].acc].lev[p.it[i].lev];
    if (p.it[i].appended) continue;
    if (p.it[i].acc != 0 && !lv.locatable && !p.it[i].chain) {
      p.it[i].merged = true;
      p.it[i].coord = lv.coord_iter && !lv.pos_iter;
    } else
      p.it[i].located = true;
  }
  // Drivers: iterators needed to enumerate every coordinate where the
  // expression can be nonzero that are not merged already.
  const cover_t c = cover(d, d.root, abs, iter_of_acc, p);
  std::uint32_t need = 0;
  bool want_universe = false;
  if (!p.zero) {
    if (c.all) {
      want_universe = true;
    } else {
      for (std::size_t i = 0; i < p.nit; ++i)
        if (((c.set >> i) & 1U) && !p.it[i].merged) need |= std::uint32_t{1} << i;
    }
  }
  std::uint32_t chains = 0;
  for (std::size_t i = 0; i < p.nit; ++i)
    if (p.it[i].chain) chains |= std::uint32_t{1} << i;
  auto full_in = [&](std::uint32_t s) {
    for (std::size_t i = 0; i < p.nit; ++i)
      if (((s >> i) & 1U) && p.it[i].acc != 0 && !p.it[i].chain && d.acc[p.it[i].acc].lev[p.it[i].lev].full &&
          d.acc[p.it[i].acc].lev[p.it[i].lev].coord_iter)
        return static_cast<int>(i);
    return -1;
  };
  std::size_t merged_count = 0;
  for (std::size_t i = 0; i < p.nit; ++i) merged_count += p.it[i].merged;
  auto make_driver = [&](int i) {
    const level_desc& lv = d.acc[p.it[i].acc].lev[p.it[i].lev];
    p.it[i].located = false;
    p.it[i].merged = true;
    p.it[i].coord = lv.coord_iter && !lv.pos_iter ? true : (lv.coord_iter && lv.full);
  };
  if (want_universe) {
    // A full rhs level enumerates the whole extent; otherwise a counter.
    std::uint32_t all_rhs = 0;
    for (std::size_t i = 0; i < p.nit; ++i)
      if (p.it[i].acc != 0) all_rhs |= std::uint32_t{1} << i;
    const int f = full_in(all_rhs);
    if (f >= 0 && !p.it[f].merged)
      make_driver(f);
    else if (f < 0)
      p.universe = true;
  } else if (need != 0) {
    const int f = full_in(need);
    if (f >= 0) {
      make_driver(f);
    } else if (need & chains) {
      p.universe = true;  // random-access operands are located at every coordinate
    } else {
      int count = 0, one = -1;
      for (std::size_t i = 0; i < p.nit; ++i)
        if ((need >> i) & 1U) ++count, one = static_cast<int>(i);
      if (merged_count == 0 && count == 1) {
        make_driver(one);
      } else {
        p.universe = true;  // locate every needed level at every coordinate
      }
    }
  }
  // Merged slots.
  int slot_of_acc[max_accesses];
  for (auto& x : slot_of_acc) x = -1;
  for (std::size_t i = 0; i < p.nit; ++i)
    if (p.it[i].merged) {
      slot_of_acc[p.it[i].acc] = static_cast<int>(p.nm);
      p.merged[p.nm++] = static_cast<int>(i);
    }
  if (p.universe) p.merged[p.nm++] = -1;
  for (std::size_t i = 0; i < p.nit; ++i) {
    iter_desc& it = p.it[i];
    const access_desc& ad = d.acc[it.acc];
    const level_desc& lv = ad.lev[it.lev];
    it.may_miss = may_miss(lv, abs);
    if (it.chain)
      for (std::size_t k = 0; k < ad.nlev; ++k) it.may_miss = it.may_miss || may_miss(ad.lev[k], abs);
    if (!it.merged) continue;
    if (p.nm > 1 && !lv.ordered) {
      p.error = plan_error::unordered_merge;
      p.error_acc = it.acc;
    }
    if (it.coord && !lv.always_found) {
      p.error = plan_error::coord_merge_unsupported;
      p.error_acc = it.acc;
    }
    // Deduplicate non-unique levels when merged with others, and when the
    // loop appends or assembles output coordinates or binds a workspace's
    // dense prefix (each row must be appended, or flushed, once). Assembled
    // without segments, a repeated row of COO driving `O(i,j) = T(i,n) +
    // x(j)` visited the j loop once per entry of the row and reached the
    // output's coordinates out of order, which the in-order assembly
    // dropped.
    // And above a hoisted sub-nest whose fibres are runs (hoist_runs).
    const bool dedup = p.nm > 1 || (o.hoist_runs && static_cast<int>(depth) < o.hoist) ||
                       (out_var_loop && (o.out == out_kind::append || o.out == out_kind::assemble ||
                                         (o.out == out_kind::workspace && static_cast<int>(depth) <= o.ws_open)));
    if (dedup && !it.coord && !lv.unique) {
      it.segment = true;
      if (!segment_spans(ad, static_cast<std::size_t>(it.lev))) {
        p.error = plan_error::segment_needs_compact;
        p.error_acc = it.acc;
      }
    }
  }
  if (p.zero) return p;
  // Lattice over merged slots, pruned of points that miss a full driver.
  lattice_t lat = lattice(d, d.root, abs, slot_of_acc);
  if (lat.overflow) p.error = plan_error::too_many_points;
  std::uint32_t full_slots = 0;
  for (std::size_t s = 0; s < p.nm; ++s)
    if (p.merged[s] >= 0 && p.it[p.merged[s]].coord && d.acc[p.it[p.merged[s]].acc].lev[p.it[p.merged[s]].lev].full)
      full_slots |= std::uint32_t{1} << s;
  const std::uint32_t universe_bit = p.universe ? std::uint32_t{1} << (p.nm - 1) : 0U;
  // A full driver (a dense level, or the universe counter) sits at every
  // coordinate, so every case that occurs includes it: it is added to each
  // point rather than the points without it dropped. (Dropped, a driver
  // that only a zero term reads, as in `T1(j,i) + T3(k)*T4(j)` with T4
  // missing, left no point, and the loop emitted nothing for T1.)
  for (std::size_t i = 0; i < lat.n; ++i) {
    const std::uint32_t m = lat.pts[i] | universe_bit | full_slots;
    if (m == 0) continue;
    bool dup = false;
    for (std::size_t j = 0; j < p.np; ++j) dup = dup || p.pts[j] == m;
    if (!dup) p.pts[p.np++] = m;
  }
  // Largest points first (stable).
  for (std::size_t i = 1; i < p.np; ++i)
    for (std::size_t j = i; j > 0 && popcount32(p.pts[j]) > popcount32(p.pts[j - 1]); --j) {
      const std::uint32_t t = p.pts[j];
      p.pts[j] = p.pts[j - 1];
      p.pts[j - 1] = t;
    }
  if (p.np == 0) p.zero = true;
  return p;
}

// Whether loop `depth` of plan p sums into the kernel's accumulator with
// several partial sums (kernel `point`, host code, floating-point values):
// the innermost loop, a reduction (the output is bound above it, or is a
// scalar), driven by the extent alone or by one level that is full (dense:
// every range has the same length, so the kernel's test of the length is
// predictable) or declares long ranges (sparse_options::long_ranges), not
// over segments of equal coordinates, outside a hoisted sub-nest. The sum
// is reassociated: a range of split_sum_min(d, p) or more positions runs
// split_sum_ways / 2 partial sums over groups of that many positions
// (position q + k of a group into sum k); a range of split_sum_long or
// more, split_sum_ways sums over groups of that many, then one half group
// into the first half of the sums if that many remain; the sums are added
// pairwise (split_sum_combine), then the remainder (fewer than
// split_sum_ways / 2) in order (docs/design.md, "Split sums").
constexpr bool split_sum(const stmt_desc& d, const order_plan& o, const loop_plan& p, std::size_t depth, mask_t abs) {
  if (depth + 1 != o.n || p.out_done || (abs & hoist_bit) != 0 || p.computed >= 0) return false;
  if (p.nm != 1 || p.np != 1 || p.pts[0] != 1U || p.merged[0] < -1) return false;
  if (p.merged[0] == -1) return true;
  const iter_desc& it = p.it[static_cast<std::size_t>(p.merged[0])];
  const level_desc& l = d.acc[static_cast<std::size_t>(it.acc)].lev[static_cast<std::size_t>(it.lev)];
  return !it.segment && (l.full || l.long_ranges);
}
inline constexpr int split_sum_ways = 8;
static_assert(split_sum_ways >= 2 && (split_sum_ways & (split_sum_ways - 1)) == 0,
              "split_sum_ways is a power of two, at least 2");
// Ranges of this many positions or more take split_sum_ways sums, shorter
// ones split_sum_ways / 2 (bench/README.md, "Split sums with a length
// rule": thresholds of 16 and 24 made rows of 16-31 1.35-1.7x slower).
inline constexpr int split_sum_long = 32;
static_assert(split_sum_long >= split_sum_ways);
// The partial sums added pairwise, neighbours first: ((s0 + s1) + (s2 + s3))
// for four, the same tree whatever the executor.
template <class V, std::size_t W>
constexpr V split_sum_combine(const V (&part)[W]) {
  if constexpr (W == 1) {
    return part[0];
  } else {
    V half[W / 2]{};
    for (std::size_t k = 0; k < W / 2; ++k) half[k] = part[2 * k] + part[2 * k + 1];
    return split_sum_combine(half);
  }
}
// The shortest range that splits (where split_sum holds): every range of a
// dense driver has the same length, so the test never mispredicts and one
// half group already pays (dense rows of 4: 1.4x faster than with a
// threshold of 8 here); a long_ranges level's rows vary, so a whole group
// or more (bench/README.md).
constexpr int split_sum_min(const stmt_desc& d, const loop_plan& p) {
  if (p.merged[0] < 0) return split_sum_ways / 2;
  const iter_desc& it = p.it[static_cast<std::size_t>(p.merged[0])];
  return d.acc[static_cast<std::size_t>(it.acc)].lev[static_cast<std::size_t>(it.lev)].full ? split_sum_ways / 2
                                                                                              : split_sum_ways;
}

// Accesses that some reachable loop plan would have to co-iterate through
// an unordered level (plan_error::unordered_merge). The kernel converts
// those operands into ordered scratch copies first. Walks every lattice
// case and found/missing combination, up to a budget.
struct walk_result {
  std::uint64_t unordered = 0;
  int budget = 4096;
};

constexpr std::uint32_t missable_located(const loop_plan& p);
constexpr mask_t case_absent(const loop_plan& p, mask_t abs, std::uint32_t q, std::uint32_t found);

constexpr void walk_plans(const stmt_desc& d, const order_plan& o, std::size_t depth, mask_t abs, walk_result& w,
                          bool split = false) {
  if (depth == o.n || w.budget-- <= 0) return;
  if (static_cast<int>(depth) == o.scatter && !split) {
    for (std::size_t t = 0; t < o.nterms; ++t) walk_plans(d, o, depth, abs | o.term_others[t], w, true);
    return;
  }
  const loop_plan p = plan_loop(d, o, depth, abs);
  if (p.error == plan_error::unordered_merge) w.unordered |= std::uint64_t{1} << p.error_acc;
  if (p.zero) return;
  const std::uint32_t miss = missable_located(p);
  for (std::size_t q = 0; q < p.np; ++q)
    for (std::uint32_t found = miss;; found = (found - 1) & miss) {
      walk_plans(d, o, depth + 1, case_absent(p, abs, p.pts[q], found), w);
      if (found == 0) break;
    }
}

constexpr std::uint64_t unordered_merges(const stmt_desc& d, const order_plan& o) {
  bool any = false;
  for (std::size_t a = 1; a < d.nacc; ++a)
    for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
      any = any || (!d.acc[a].lev[k].ordered && !d.acc[a].lev[k].locatable);
  if (!any || o.error != plan_error::none) return 0;
  walk_result w;
  walk_plans(d, o, 0, 0, w);
  return w.unordered;
}

/// Absent set for the body of lattice case `q` in plan p, with `found` the
/// located iterators (may_miss ones) that were found, by iterator index.
constexpr mask_t case_absent(const loop_plan& p, mask_t abs, std::uint32_t q, std::uint32_t found) {
  mask_t out = abs;
  for (std::size_t s = 0; s < p.nm; ++s)
    if (p.merged[s] >= 0 && !((q >> s) & 1U)) out |= mask_t{1} << p.it[p.merged[s]].acc;
  for (std::size_t i = 0; i < p.nit; ++i)
    if (p.it[i].located && p.it[i].may_miss && !((found >> i) & 1U)) out |= mask_t{1} << p.it[i].acc;
  return out;
}

/// Iterators located in plan p whose locate may miss (one runtime branch each).
constexpr std::uint32_t missable_located(const loop_plan& p) {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < p.nit; ++i)
    if (p.it[i].located && p.it[i].may_miss) m |= std::uint32_t{1} << i;
  return m;
}

}  // namespace tensorlev::cg
