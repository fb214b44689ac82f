#pragma once
/// @file codegen/print.hpp
/// The loop nest a statement runs, as pseudo-C (seed 003, Figure 9b):
///
///     std::cout << loop_nest(y(i), A(i, j) * x(j), {"y", "A", "x"});
///
/// It walks the same constexpr plans (plan.hpp) as the kernel, so what is
/// printed is what runs. Level functions are inlined through each level's
/// optional `code` hook (level_concepts.hpp, level_fn); levels without one
/// print as calls. Operand names default to t0 (the output), t1, t2, ...

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "kernel.hpp"
#include "plan.hpp"

namespace tensorlev {

namespace cg {

using code_fn = std::string (*)(level_fn, std::string_view, std::string_view, std::string_view);

template <class L>
std::string level_code(level_fn f, std::string_view l, std::string_view a, std::string_view b) {
  if constexpr (requires { L::code(f, l, a, b); }) {
    return L::code(f, l, a, b);
  } else {
    const std::string L_(l), A(a), B(b);
    switch (f) {
      case level_fn::pos_begin: return L_ + ".pos_bounds(" + A + ").begin";
      case level_fn::pos_end: return L_ + ".pos_bounds(" + A + ").end";
      case level_fn::pos_access: return L_ + ".pos_access(" + A + ").coord";
      case level_fn::coord_begin: return L_ + ".coord_bounds().begin";
      case level_fn::coord_end: return L_ + ".coord_bounds().end";
      case level_fn::coord_access: return L_ + ".coord_access(" + A + ", " + B + ").pos";
      case level_fn::locate: return L_ + ".locate(" + A + ", " + B + ").pos";
    }
    return L_;
  }
}

template <class LT, std::size_t... K>
std::vector<code_fn> level_codes(std::index_sequence<K...>) {
  return std::vector<code_fn>{static_cast<code_fn>(&level_code<std::tuple_element_t<K, LT>>)...};
}

struct printer {
  const stmt_desc& d;
  const order_plan& o;
  std::vector<std::string> names;                  // per access
  std::vector<std::vector<code_fn>> code;          // per access, per level
  std::vector<std::string> pos;                    // current position expression per access
  std::vector<std::string> hi;                     // current segment end per access ("" if pos + 1)
  std::string out;
  std::string expr_text;
  bool store = false;  // the kernel stores into a dense output (each component written once)
  bool block_store = false;  // full blocks of the block workspace store into the output (located_output)
  bool split = false;  // floating-point values: split_sum applies (kernel `point`)

  void line(int indent, const std::string& s) {
    out.append(static_cast<std::size_t>(2 * indent), ' ');
    out += s;
    out += '\n';
  }
  std::string lvl(int a, int k) const { return names[static_cast<std::size_t>(a)] + std::to_string(k + 1); }
  std::string pvar(int a, int k) const { return "p" + lvl(a, k); }
  std::string fn(int a, int k, level_fn f, const std::string& x, const std::string& y = "") const {
    return code[static_cast<std::size_t>(a)][static_cast<std::size_t>(k)](f, lvl(a, k), x, y);
  }

  std::string expr(int n, mask_t abs) const {
    const node& x = d.nodes[n];
    if (!hoist_factor(d, o, n, abs)) return "1";
    switch (x.kind) {
      case node_kind::access: {
        if (d.acc[x.acc].nlev == 0) return names[static_cast<std::size_t>(x.acc)];
        const std::string v = names[static_cast<std::size_t>(x.acc)] + "_vals";
        const std::string& h = hi[static_cast<std::size_t>(x.acc)];
        if (!h.empty()) return "sum(" + v + "[" + pos[static_cast<std::size_t>(x.acc)] + " .. " + h + "))";
        return v + "[" + pos[static_cast<std::size_t>(x.acc)] + "]";
      }
      case node_kind::constant: return "c" + std::to_string(n);
      case node_kind::neg: return (abs & combine_bit) != 0 ? expr(x.a, abs) : "-(" + expr(x.a, abs) + ")";
      case node_kind::fn: return std::string(x.fn) + "(" + expr(x.a, abs) + ")";
      case node_kind::div: {
        const node_kind r = d.nodes[x.b].kind;
        const std::string den = r == node_kind::mul ? "(" + expr(x.b, abs) + ")" : expr(x.b, abs);
        return "(" + expr(x.a, abs) + " / " + den + ")";
      }
      case node_kind::mul:
        if (!hoist_factor(d, o, x.a, abs)) return expr(x.b, abs);
        if (!hoist_factor(d, o, x.b, abs)) return expr(x.a, abs);
        return expr(x.a, abs) + " * " + expr(x.b, abs);
      case node_kind::add:
      case node_kind::sub: {
        const bool l = nonzero(d, x.a, abs), r = nonzero(d, x.b, abs);
        const std::string op = x.kind == node_kind::add ? " + " : " - ";
        if (!l) return x.kind == node_kind::add ? expr(x.b, abs) : "-(" + expr(x.b, abs) + ")";
        if (!r) return expr(x.a, abs);
        return "(" + expr(x.a, abs) + op + expr(x.b, abs) + ")";
      }
    }
    return "?";
  }

  // Private variables of derived levels (DIA's diagonal, ELL's slot,
  // block coordinates) are named after their operand and level.
  std::string var_name(char c) const {
    if (!is_private_var(c)) return std::string(1, c);
    for (std::size_t a = 0; a < d.nacc; ++a)
      for (std::size_t k = 0; k < d.acc[a].nlev; ++k)
        if (d.acc[a].lev[k].var == c) return "q" + lvl(static_cast<int>(a), static_cast<int>(k));
    return "q?";
  }

  std::string out_coords() const {
    std::string s;
    for (std::size_t k = 0; k < d.acc[0].order; ++k) s += (k ? ", " : "") + std::string(1, d.acc[0].vars[k]);
    return s;
  }

  void emit(std::size_t depth, mask_t abs, int indent, const std::string& target) {
    if (static_cast<int>(depth) == o.scatter) {
      const std::string into = o.out == out_kind::workspace ? "w" : names[0];
      for (std::size_t t = 0; t < o.nterms; ++t) {
        if (!nonzero(d, d.root, abs | o.term_others[t])) continue;
        if (o.nterms > 1) line(indent, "// term " + std::to_string(t + 1) + ", scattered into " + into);
        emit_nest(depth, abs | o.term_others[t], indent, target);
      }
      return;
    }
    if (TENSORLEV_HOIST_SPECIALIZE && static_cast<int>(depth) + 1 == o.hoist && (abs & hoist_bit) == 0) {
      // kernel::fibres: the constant widths, and the buffered output row.
      const std::string v = var_name(o.vars[o.n - 1]);
      bool buffer = true;
      for (std::size_t k = 0; k < d.acc[0].order; ++k)
        if (d.acc[0].vars[k] == o.vars[depth]) buffer = false;
      std::string widths;
      for (const int w : hoist_widths) widths += (widths.empty() ? "" : ", ") + std::to_string(w);
      line(indent, "// " + v + "_extent in {" + widths + "}: the loops below with " + v + "_extent a constant" +
                       (buffer ? ", and " + names[0] + "'s row summed over " + var_name(o.vars[depth]) +
                                     " in registers, added once"
                               : std::string()) +
                       " (host code)");
    }
    if (static_cast<int>(depth) == o.hoist && (abs & hoist_bit) == 0) {
      const std::string v = var_name(o.vars[o.n - 1]);
      std::string hoisted;
      for (std::size_t a = 1; a < d.nacc; ++a)
        if ((o.hoist_outer >> a) & 1U) hoisted += (hoisted.empty() ? "" : ", ") + names[a];
      line(indent, "// hoisted: " + hoisted + " multiplied once per " + var_name(o.vars[depth - 1]) + " (" + v +
                       "_extent > 256, CUDA/HIP device code: not hoisted)");
      line(indent, TENSORLEV_HOIST_SPECIALIZE
                       ? "double t[" + v + "_extent];  // the first entry the loops below reach stores, the others add"
                       : "double t[" + v + "_extent] = {};");
      emit_nest(depth, abs | hoist_bit, indent, "t");
      line(indent, "// only if the loops above reached an entry:");
      line(indent, "for (int " + v + " = 0; " + v + " < " + v + "_extent; ++" + v + ") {");
      const auto saved_pos = pos;
      const auto saved_hi = hi;
      for (std::size_t a = 0; a < d.nacc; ++a) {
        if (d.acc[a].nlev == 0 || d.acc[a].lev[d.acc[a].nlev - 1].var != o.vars[o.n - 1]) continue;
        if (a != 0 && ((o.hoist_outer >> a) & 1U) == 0) continue;
        const int k = static_cast<int>(d.acc[a].nlev) - 1;
        const std::string q = pvar(static_cast<int>(a), k);
        line(indent + 1, "int " + q + " = " + fn(static_cast<int>(a), k, level_fn::locate, pos[a], v) + ";");
        pos[a] = q;
        hi[a].clear();
      }
      line(indent + 1, names[0] + "_vals[" + pos[0] + "] += t[" + v + "] * " + expr(d.root, abs | combine_bit) + ";");
      line(indent, "}");
      pos = saved_pos;
      hi = saved_hi;
      return;
    }
    if (o.block >= 0 && static_cast<int>(depth) == o.block + 1 && (abs & block_bit) == 0) {
      const auto c = static_cast<std::size_t>(o.block_comp);
      const std::string B = std::to_string(d.comp_block[c]), v = var_name(d.comp_var[c]);
      const std::string base = var_name(d.comp_outer[c]) + " * " + B;
      line(indent, "// block workspace: a block of " + v + " inside the extent sums into w (not in CUDA/HIP "
                   "device code)");
      line(indent, "if (" + base + " + " + B + " <= " + v + "_extent) {");
      line(indent + 1, "double w[" + B + "] = {};");
      emit_nest(depth, abs | block_bit, indent + 1, target);
      line(indent + 1, "for (int l = 0; l < " + B + "; ++l) " + names[0] + "_vals[" +
                           fn(0, 0, level_fn::locate, "0", unblocked(c, base + " + l")) + "]" +
                           (block_store ? " = " : " += ") + "w[l];");
      line(indent, "} else {");
      if (block_store)
        line(indent + 1, "for (int l = 0; " + base + " + l < " + v + "_extent; ++l) " + names[0] + "_vals[" +
                             fn(0, 0, level_fn::locate, "0", unblocked(c, base + " + l")) + "] = 0;  // " + names[0] +
                             " is not zero-filled first");
      emit_nest(depth, abs, indent + 1, target);
      line(indent, "}");
      return;
    }
    emit_nest(depth, abs, indent, target);
  }

  // Blocked coordinate `raw` of computed variable c as the row it stands
  // for: through the remapping level's permutation (SELL-C-sigma), or as is.
  // checked: rows past the permutation (a last block's padding) map to themselves.
  std::string unblocked(std::size_t c, const std::string& raw, bool checked = false) const {
    if (d.comp_remap[c] == 0) return raw;
    const std::string p = names[static_cast<std::size_t>(d.comp_acc[c])] + "_perm";
    if (checked) return "(" + raw + " < " + p + "_size ? " + p + "[" + raw + "] : " + raw + ")";
    return p + "[" + raw + "]";
  }

  void emit_nest(std::size_t depth, mask_t abs, int indent, const std::string& target) {
    if (depth == o.n) {
      if (nonzero(d, d.root, abs)) line(indent, target + " += " + expr(d.root, abs) + ";");
      return;
    }
    const loop_plan p = plan_loop(d, o, depth, abs);
    if (p.zero) return;
    const std::string v = var_name(p.var);
    auto slot_name = [&](std::size_t s) {
      return p.merged[s] < 0 ? v + "_u" : pvar(p.it[p.merged[s]].acc, p.it[p.merged[s]].lev);
    };
    // Merged iterators' ranges.
    for (std::size_t s = 0; s < p.nm; ++s) {
      if (p.merged[s] == -2) {
        const auto c = static_cast<std::size_t>(p.computed);
        const std::string raw =
            var_name(d.comp_outer[c]) + " * " + std::to_string(d.comp_block[c]) + " + " + var_name(d.comp_inner[c]);
        const bool lane = (abs & block_bit) != 0 && static_cast<int>(c) == o.block_comp;
        // Inside the workspace a remapped row is read only where another
        // operand uses it (row_read_in_block, describe.hpp); past the extent the
        // remap is the identity.
        const std::string row = !lane                  ? unblocked(c, raw, true)
                                : row_read_in_block(d, c) ? unblocked(c, raw)
                                                       : raw;
        const std::string u = "int " + v + "_u = " + row + ", " + v + "_u_end = ";
        if (lane)
          line(indent, u + v + "_u + 1;  // blocked coordinate, inside the block" +
                           (d.comp_remap[c] != 0 && !row_read_in_block(d, c) ? " (the lane's row is not read here)"
                                                                          : ""));
        else
          line(indent, u + v + "_u < " + v + "_extent ? " + v + "_u + 1 : " + v + "_u;  // blocked coordinate");
        continue;
      }
      if (p.merged[s] < 0) {
        line(indent, "int " + v + "_u = 0, " + v + "_u_end = " + v + "_extent;");
        continue;
      }
      const iter_desc& it = p.it[p.merged[s]];
      const std::string q = pvar(it.acc, it.lev);
      const std::string& par = pos[static_cast<std::size_t>(it.acc)];
      const level_desc& lv = d.acc[static_cast<std::size_t>(it.acc)].lev[static_cast<std::size_t>(it.lev)];
      if (lv.map == map_kind::block_inner && static_cast<std::size_t>(it.lev) + 1 < d.acc[it.acc].nlev &&
          d.acc[it.acc].lev[it.lev + 1].lanes_found)
        line(indent, "// where " + lvl(it.acc, it.lev + 1) + ".lanes_found(): every lane's children are found, and " +
                         "the loops below run without the found checks");
      if (it.coord && (abs & block_bit) != 0 && lv.map == map_kind::block_inner && lv.full &&
          lv.var == d.comp_inner[o.block_comp]) {
        line(indent, "int " + q + "_i = 0, " + q + "_i_end = " + std::to_string(d.comp_block[o.block_comp]) +
                         ";  // the block: a constant trip count");
      } else if (it.coord) {
        line(indent, "int " + q + "_i = " + fn(it.acc, it.lev, level_fn::coord_begin, par) + ", " + q + "_i_end = " +
                         fn(it.acc, it.lev, level_fn::coord_end, par) + ";");
      } else {
        const std::string& h = hi[static_cast<std::size_t>(it.acc)];
        const std::string end = h.empty() ? fn(it.acc, it.lev, level_fn::pos_end, par)
                                          : fn(it.acc, it.lev, level_fn::pos_end, h + " - 1");
        line(indent, "int " + q + " = " + fn(it.acc, it.lev, level_fn::pos_begin, par) + ", " + q + "_end = " + end +
                         ";");
      }
    }
    const bool appends = p.out_iter >= 0 && p.it[p.out_iter].appended && o.out == out_kind::append;
    if (appends) line(indent, "int begin_" + v + " = " + names[0] + "_count;");
    auto cur = [&](std::size_t s) {
      if (p.merged[s] < 0) return v + "_u";
      const iter_desc& it = p.it[p.merged[s]];
      return it.coord ? pvar(it.acc, it.lev) + "_i" : pvar(it.acc, it.lev);
    };
    auto coord_of = [&](std::size_t s) {
      if (p.merged[s] < 0) return v + "_u";
      const iter_desc& it = p.it[p.merged[s]];
      return it.coord ? pvar(it.acc, it.lev) + "_i" : fn(it.acc, it.lev, level_fn::pos_access, pvar(it.acc, it.lev));
    };
    if (split && split_sum(d, o, p, depth, abs))
      line(indent, "// a range of " + std::to_string(split_sum_min(d, p)) + " or more positions: " +
                       std::to_string(split_sum_ways / 2) + " partial sums over groups of " +
                       std::to_string(split_sum_ways / 2) + "; of " + std::to_string(split_sum_long) +
                       " or more, " + std::to_string(split_sum_ways) + " (vector) partial sums over groups of " +
                       std::to_string(split_sum_ways) + ", then one group of " + std::to_string(split_sum_ways / 2) +
                       " if that many remain; added into " + target +
                       ", the rest in order (not in CUDA/HIP device code)");
    for (std::size_t pt = 0; pt < p.np; ++pt) {
      const std::uint32_t pm = p.pts[pt];
      std::string cond;
      std::vector<std::size_t> members;
      for (std::size_t s = 0; s < p.nm; ++s)
        if ((pm >> s) & 1U) {
          members.push_back(s);
          cond += (cond.empty() ? "" : " && ") + cur(s) + " < " + cur(s) + "_end";
        }
      line(indent, "while (" + cond + ") {");
      const int in = indent + 1;
      for (std::size_t s : members)  // positions that hold no coordinate (block_offset past the extent)
        if (p.merged[s] >= 0 && !p.it[p.merged[s]].coord && p.it[p.merged[s]].may_miss)
          line(in, "if (!" + lvl(p.it[p.merged[s]].acc, p.it[p.merged[s]].lev) + ".pos_access(" + cur(s) +
                       ").found) { " + cur(s) + " = " + cur(s) + " + 1; continue; }");
      if (members.size() == 1) {
        line(in, "int " + v + " = " + coord_of(members[0]) + ";");
      } else {
        std::string mn;
        for (std::size_t s : members) {
          line(in, "int " + v + "_" + slot_name(s) + " = " + coord_of(s) + ";");
          mn = mn.empty() ? v + "_" + slot_name(s) : "min(" + mn + ", " + v + "_" + slot_name(s) + ")";
        }
        line(in, "int " + v + " = " + mn + ";");
      }
      for (std::size_t s : members)
        if (p.merged[s] >= 0 && p.it[p.merged[s]].segment)
          line(in, "int " + cur(s) + "_seg = " + cur(s) + " + 1; while (" + cur(s) + "_seg < " + cur(s) + "_end && " +
                       fn(p.it[p.merged[s]].acc, p.it[p.merged[s]].lev, level_fn::pos_access, cur(s) + "_seg") +
                       " == " + v + ") " + cur(s) + "_seg++;");
      bool first_case = true;
      for (std::size_t q = 0; q < p.np; ++q) {
        const std::uint32_t qm = p.pts[q];
        if ((qm & ~pm) != 0) continue;
        std::string match;
        if (members.size() > 1)
          for (std::size_t s : members)
            if ((qm >> s) & 1U) match += (match.empty() ? "" : " && ") + v + "_" + slot_name(s) + " == " + v;
        int ci = in;
        if (members.size() > 1) {
          line(in, std::string(first_case ? "if (" : "else if (") + match + ") {");
          ci = in + 1;
        }
        first_case = false;
        emit_case(p, depth, abs, qm, ci, target, v);
        if (members.size() > 1) line(in, "}");
      }
      for (std::size_t s : members) {
        const bool seg = p.merged[s] >= 0 && p.it[p.merged[s]].segment;
        const std::string next = seg ? cur(s) + "_seg" : cur(s) + " + 1";
        if (members.size() == 1)
          line(in, cur(s) + " = " + next + ";");
        else
          line(in, "if (" + v + "_" + slot_name(s) + " == " + v + ") " + cur(s) + " = " + next + ";");
      }
      line(indent, "}");
    }
    if (appends)
      line(indent, names[0] + std::to_string(d.acc[0].nlev) + ".append_edges(" + pos[0] + ", begin_" + v + ", " +
                       names[0] + "_count);");
  }

  void emit_case(const loop_plan& p, std::size_t depth, mask_t abs, std::uint32_t qm, int indent,
                 const std::string& target, const std::string& v) {
    const auto saved_pos = pos;
    const auto saved_hi = hi;
    for (std::size_t s = 0; s < p.nm; ++s) {
      if (p.merged[s] < 0 || !((qm >> s) & 1U)) continue;
      const iter_desc& it = p.it[p.merged[s]];
      const auto a = static_cast<std::size_t>(it.acc);
      if (it.coord) {
        const std::string q = pvar(it.acc, it.lev);
        line(indent, "int " + q + " = " + fn(it.acc, it.lev, level_fn::coord_access, pos[a], v) + ";");
        pos[a] = q;
        hi[a].clear();
      } else {
        pos[a] = pvar(it.acc, it.lev);
        hi[a] = it.segment ? pos[a] + "_seg" : "";
      }
    }
    std::uint32_t missable = 0;
    for (std::size_t x = 0; x < p.nit; ++x) {
      const iter_desc& it = p.it[x];
      if (!it.located) continue;
      const auto a = static_cast<std::size_t>(it.acc);
      if (it.chain) {
        for (std::size_t k = 0; k < d.acc[a].nlev; ++k) {
          const std::string q = pvar(it.acc, static_cast<int>(k));
          line(indent, "int " + q + " = " +
                           fn(it.acc, static_cast<int>(k), level_fn::locate, pos[a], var_name(d.acc[a].lev[k].var)) +
                           ";");
          pos[a] = q;
        }
      } else {
        const std::string q = pvar(it.acc, it.lev);
        line(indent, "int " + q + " = " + fn(it.acc, it.lev, level_fn::locate, pos[a], v) + ";");
        pos[a] = q;
      }
      hi[a].clear();
      if (it.may_miss) missable |= std::uint32_t{1} << x;
    }
    int in = indent;
    if (missable != 0) {
      std::string cond;
      for (std::size_t x = 0; x < p.nit; ++x)
        if ((missable >> x) & 1U) cond += (cond.empty() ? "" : " && ") + pvar(p.it[x].acc, p.it[x].lev) + "_found";
      line(indent, "if (" + cond + ") {  // else: the same with those operands absent");
      in = indent + 1;
    }
    const mask_t next = case_absent(p, abs, qm, missable);
    if (nonzero(d, d.root, next)) {
      if (p.out_done) {
        const bool reduce = depth + 1 < o.n;
        std::string slot;
        if (o.out == out_kind::stream)
          slot = names[0] + "_stream(" + out_coords() + ")";
        else if (o.out == out_kind::assemble)
          slot = names[0] + "_assemble(" + out_coords() + ")";
        else if (o.out == out_kind::insert)
          slot = names[0] + "_insert(" + out_coords() + ")";
        else if (o.out == out_kind::append)
          slot = names[0] + "_append(" + v + ")";
        else if (o.out == out_kind::workspace)
          slot = "w[" + v + "]";
        else if (o.out == out_kind::located)
          slot = names[0] + "_vals[" + pos[0] + "]";
        if ((abs & hoist_bit) != 0) slot = "t[" + v + "]";
        if ((abs & block_bit) != 0) slot = "w[" + var_name(d.comp_inner[o.block_comp]) + "]";
        const std::string op = store && o.out == out_kind::located ? " = " : " += ";
        if (reduce) {
          line(in, "double acc = 0;");
          emit(depth + 1, next, in, "acc");
          line(in, slot + op + "acc;");
        } else {
          line(in, slot + op + expr(d.root, next) + ";");
        }
      } else {
        emit(depth + 1, next, in, target);
        if (o.out == out_kind::workspace && static_cast<int>(depth) == o.ws_open)
          line(in, "append the sorted coordinates of w under " + pos[0] + "; clear w;");
      }
    }
    if (missable != 0) line(indent, "}");
    pos = saved_pos;
    hi = saved_hi;
  }
};

template <class Groups, std::size_t G, class Terms, std::size_t... M>
auto group_type_impl(std::index_sequence<M...>)
    -> decltype(sum_terms<Terms, Groups::template members<G>[M]...>(std::declval<const Terms&>()));
template <class Groups, std::size_t G, class Terms>
using group_type =
    std::remove_cvref_t<decltype(group_type_impl<Groups, G, Terms>(std::make_index_sequence<Groups::template count<G>>{}))>;

template <class Kernel>
std::string print_kernel(std::vector<std::string> names) {
  if constexpr (!std::is_same_v<typename Kernel::converted, Kernel>) {
    std::string note = "// scratch copies made first:";
    for (std::size_t a = 1; a < Kernel::NA; ++a) {
      const std::string n = a < names.size() ? names[a] : "t" + std::to_string(a);
      if ((Kernel::dense_copies >> a) & 1U) note += " " + n + " (dense)";
      if ((Kernel::sorted_copies >> a) & 1U) note += " " + n + " (ordered)";
    }
    return note + "\n" + print_kernel<typename Kernel::converted>(std::move(names));
  }
  constexpr const stmt_desc& d = Kernel::D;
  constexpr const order_plan& o = Kernel::O;
  for (std::size_t a = names.size(); a < d.nacc; ++a) names.push_back("t" + std::to_string(a));
  std::vector<std::vector<code_fn>> code(d.nacc);
  [&]<std::size_t... A>(std::index_sequence<A...>) {
    (
        [&] {
          using T = typename Kernel::template op_t<A>;
          if constexpr (!detail::is_scalar_v<T>) {
            using LT = typename T::level_tuple;
            code[A] = level_codes<LT>(std::make_index_sequence<std::tuple_size_v<LT>>{});
          }
        }(),
        ...);
  }(std::make_index_sequence<Kernel::NA>{});
  printer pr{d, o, names, code, std::vector<std::string>(d.nacc, "0"), std::vector<std::string>(d.nacc), {}, {},
             Kernel::direct_store, Kernel::block_store, std::is_floating_point_v<typename Kernel::V>};
  std::string order;
  for (std::size_t x = 0; x < o.n; ++x) order += (x ? ", " : "") + pr.var_name(o.vars[x]);
  const char* kinds[] = {"scalar",
                         "dense (located)",
                         "stream (sorted and packed)",
                         "append",
                         "workspace (Gustavson)",
                         "insert (a symbolic pass sizes the last level, then a numeric pass inserts)",
                         "assemble in order (a symbolic pass sizes every level, then a numeric pass appends)"};
  std::string kind = kinds[static_cast<int>(o.out)];
  if (o.pre != 0)
    kind = (o.out == out_kind::workspace ? "workspace w" : "dense") + std::string(", precomputed over ") +
           pr.var_name(o.pre) + " term by term";
  pr.line(0, "// loop order: " + order + "; output: " + kind);
  if constexpr (Kernel::parallel_outer) {
    using P = cg::par_kind;
    constexpr P par = Kernel::par;
    pr.line(0, std::string("// on a parallel executor: the ") + pr.var_name(o.vars[0]) + " loop runs in chunks" +
                   (Kernel::align_chunks ? " cut between runs of equal coordinates" : "") +
                   (Kernel::cut_by_coord ? " cut by ranges of " + pr.var_name(o.vars[0]) +
                                               " (each iterator finds its part by binary search)"
                                         : std::string()) +
                   (par == P::scalar    ? ", one partial sum each, added in chunk order"
                    : par == P::rows    ? ", each writing its own rows"
                    : par == P::scatter ? ", each adding into a private copy of the output; the copies are "
                                          "added afterwards"
                    : par == P::stream ? ", each collecting its own (coordinates, value) list; the lists are "
                                         "joined in chunk order and packed"
                    : par == P::collect
                        ? ", each collecting its own (coordinate, value) list; the lists are inserted in chunk order"
                    : par == P::insert
                        ? ", each owning its rows: counting their distinct coordinates (a marker array per "
                          "running chunk), then inserting into their own buckets"
                    : par == P::assemble
                        ? ", each counting its positions per level; a scan of the counts places every "
                          "chunk's entries, assembled again in place"
                        : ", each collecting its entries; a scan of their counts places them"));
  } else
    pr.line(0, "// on a parallel executor: serial (the outer loop cannot be split without races)");
  if (o.out == out_kind::scalar) {
    pr.line(0, "double acc = 0;");
    pr.emit(0, 0, 0, "acc");
    pr.line(0, names[0] + " = acc;");
  } else {
    pr.emit(0, 0, 0, names[0] + "_vals[?]");
  }
  return pr.out;
}

}  // namespace cg

/// The pseudo-C loop nest of `out = e` (`loop_nest(y(i), A(i,j) * x(j))`),
/// with optional operand names: the output first, then the right-hand
/// side's tensors in order. For statements whose top-level terms have
/// different reduction variables, one nest per group of terms is printed.
namespace cg {
template <class Out, class E, char Pre, char... Order>
std::string loop_nest_impl(std::vector<std::string> names) {
  using terms_t = decltype(cg::top_terms(std::declval<const E&>()));
  using groups = cg::term_groups<Out, terms_t>;
  if constexpr (groups::uniform) {
    return cg::print_kernel<cg::kernel<Out, E, false, Pre, Order...>>(std::move(names));
  } else {
    std::string s;
    [&]<std::size_t... G>(std::index_sequence<G...>) {
      (
          [&] {
            using group_t = cg::group_type<groups, G, terms_t>;
            s += "// term group " + std::to_string(G + 1) + (G == 0 ? " (assigns)\n" : " (accumulates)\n");
            s += cg::print_kernel<cg::kernel<Out, group_t, G != 0, Pre, Order...>>(names);
          }(),
          ...);
    }(std::make_index_sequence<groups::ngroups>{});
    return s;
  }
}
}  // namespace cg

template <class Out, expression E, char... Order>
std::string loop_nest(const Out&, const E&, loop_order<Order...> = {}, std::vector<std::string> names = {}) {
  return cg::loop_nest_impl<Out, E, 0, Order...>(std::move(names));
}
/// The loop nest of `compute(out, e, order, precompute(v))`.
template <class Out, expression E, char... Order, char P>
std::string loop_nest(const Out&, const E&, loop_order<Order...>, precompute_t<P>,
                      std::vector<std::string> names = {}) {
  return cg::loop_nest_impl<Out, E, P, Order...>(std::move(names));
}
template <class Out, expression E, char P>
std::string loop_nest(const Out&, const E&, precompute_t<P>, std::vector<std::string> names = {}) {
  return cg::loop_nest_impl<Out, E, P>(std::move(names));
}
template <class Out, expression E>
std::string loop_nest(const Out& out, const E& e, std::vector<std::string> names) {
  return loop_nest(out, e, loop_order<>{}, std::move(names));
}

}  // namespace tensorlev
