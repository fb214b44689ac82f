#pragma once
/// \file
/// numeric_plan: compute_numeric repeated, with the patterns checked once.
///
/// compute_numeric (codegen/kernel.hpp) checks every product against the
/// output's pattern as it adds it: a load of the column's mark and a branch
/// per multiply-add. A plan runs that checked numeric phase once, then
/// keeps a copy of every operand's pattern and of the output's (extents,
/// bounds and coordinates: not values). A later run whose patterns equal
/// the copy (compared byte for byte, about what one pass over the patterns
/// costs) is known to put every product in the pattern, and its innermost
/// loop adds without the check; a run whose patterns differ is checked
/// again (and throws as compute_numeric does when a product leaves the
/// pattern). A trusted run also adds the products of consecutive
/// identical rows of B in one pass over their columns, from a table of
/// those rows built on the first trusted run over a pattern (the kernel's
/// jammed innermost loop), or, where the products are few per output entry,
/// adds each product straight into the output's values at the slot a table
/// recorded by the first trusted run gives (no workspace row). docs/design.md,
/// "numeric_plan", "Jammed rows" and "Slot tables".
///
///     C(i, j) = A(i, k) * B(k, j);                  // assemble the pattern
///     tensorlev::numeric_plan plan(C(i, j), A(i, k) * B(k, j));
///     for (...) { change A's and B's values; plan.run(exec); }
///
/// The plan holds the statement (references to the tensors, which must
/// outlive it) and the copy. Operands whose levels do not declare their
/// pattern as their extent and arrays (`pattern_in_arrays`: dense,
/// compressed and singleton levels over host storage) are checked every run.
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <vector>

#include "codegen/kernel.hpp"

namespace tensorlev {

namespace detail {

// Whether level L's pattern is its extent plus its arrays, on the host.
template <class L>
constexpr bool snapshot_level() {
  if constexpr (requires { L::pattern_in_arrays; }) {
    if constexpr (requires { typename L::storage; })
      return L::pattern_in_arrays && L::storage::host_accessible;
    else
      return L::pattern_in_arrays;
  } else {
    return false;
  }
}

// Calls f(data, bytes) for every piece of tensor t's pattern: its
// dimensions, each level's extent and each level's arrays (each with its
// length). Returns false
// (and calls nothing) when a level's pattern is not all there.
template <class T, class F>
bool for_each_pattern_piece(const T& t, F&& f) {
  if constexpr (!requires { t.levels(); }) {
    return false;
  } else {
    using levels_t = std::remove_cvref_t<decltype(t.levels())>;
    constexpr bool all = []<std::size_t... K>(std::index_sequence<K...>) {
      return (snapshot_level<std::remove_cvref_t<std::tuple_element_t<K, levels_t>>>() && ...);
    }(std::make_index_sequence<std::tuple_size_v<levels_t>>{});
    if constexpr (!all) {
      return false;
    } else {
      const auto& dims = t.dims();
      f(static_cast<const void*>(dims.data()), sizeof(dims));
      std::apply(
          [&](const auto&... l) {
            (
                [&] {
                  const auto n = l.dimension();
                  f(static_cast<const void*>(&n), sizeof(n));
                  if constexpr (requires { l.arrays(); })
                    std::apply(
                        [&](const auto&... a) {
                          (
                              [&] {
                                // The length first: two arrays' bytes run
                                // together otherwise (pos one shorter, crd
                                // one longer would compare equal).
                                const std::size_t bytes =
                                    a.size() * sizeof(std::remove_cvref_t<decltype(*a.data())>);
                                f(static_cast<const void*>(&bytes), sizeof(bytes));
                                f(static_cast<const void*>(a.data()), bytes);
                              }(),
                              ...);
                        },
                        l.arrays());
                }(),
                ...);
          },
          t.levels());
      return true;
    }
  }
}

// The patterns of ops (pointers to tensors and scalars), piece by piece;
// a tensor named twice (A * A) once.
template <class Ops, class F>
bool for_each_operand_pattern(const Ops& ops, F&& f) {
  return std::apply(
      [&](const auto*... x) {
        const void* seen[sizeof...(x)] = {};
        std::size_t nseen = 0;
        return (
            [&] {
              using X = std::remove_cv_t<std::remove_pointer_t<decltype(x)>>;
              if constexpr (is_scalar_v<X>) {
                return true;
              } else {
                const void* p = static_cast<const void*>(x);
                for (std::size_t q = 0; q < nseen; ++q)
                  if (seen[q] == p) return true;
                seen[nseen++] = p;
                return for_each_pattern_piece(*x, f);
              }
            }() &&
            ...);
      },
      ops);
}

}  // namespace detail

/// A numeric phase run many times over the same patterns (see the file's
/// comment): `numeric_plan plan(C(i, j), A(i, k) * B(k, j)); plan.run();`.
/// Takes what compute_numeric takes (and the same schedule arguments).
template <class Out, expression E, class... Schedule>
class numeric_plan {
 public:
  numeric_plan(const Out& out, const E& e, Schedule...) : out_(out), e_(e) {
    using terms_t = decltype(cg::top_terms(e));
    static_assert(cg::term_groups<Out, terms_t>::uniform,
                  "tensorlev: numeric_plan takes one product (its terms must sum over the same reduction "
                  "variables), as compute_numeric does");
    [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
      cg::check_no_temporaries<Out, E>();
      cg::check_statement<Out, E, executor, false, Order...>();
    }(cg::order_of<Schedule...>{}, cg::precompute_of<Schedule...>{});
  }

  /// compute_numeric(ex, out, e), without the per-product check when the
  /// patterns equal those of the last run that passed it. Throws as
  /// compute_numeric does; a run that throws leaves the plan's copy as it
  /// was.
  void run(const executor& ex) {
    const auto ops = std::tuple_cat(std::make_tuple(out_.operand()), cg::collect_operands(e_));
    const bool trust = have_ && same_patterns(ops);
    trusted_ = false;  // until the run completes
    [&]<char... Order, char P>(loop_order<Order...>, precompute_t<P>) {
      cg::kernel<Out, E, false, P, Order...>::run_numeric(out_, e_, ex, trust, &tables_);
    }(cg::order_of<Schedule...>{}, cg::precompute_of<Schedule...>{});
    trusted_ = trust;
    if (!trust) {
      tables_ = cg::numeric_tables{};  // built again on the next trusted run
      if (!slots_on_) tables_.slots.state = 2;
      // Copied after the checked run: a throw above keeps the old copy.
      std::vector<std::byte> copy;
      have_ = detail::for_each_operand_pattern(ops, [&](const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        if (n != 0) copy.insert(copy.end(), b, b + n);
      });
      copy_ = have_ ? std::move(copy) : std::vector<std::byte>{};
    }
  }
  /// run on the calling thread.
  void run() { run(serial); }
  /// Whether the last run completed without the per-product check (its
  /// patterns equal to the copy of an earlier checked run); false after a
  /// run that threw.
  [[nodiscard]] bool trusted() const noexcept { return trusted_; }
  /// Whether the plan holds a copy of the patterns (false until a checked
  /// run passed, and always for operands whose patterns it cannot copy).
  [[nodiscard]] bool holds_patterns() const noexcept { return have_; }
  /// The bytes of the copy.
  [[nodiscard]] std::size_t pattern_bytes() const noexcept { return copy_.size(); }
  /// Whether trusted runs may record and use the slot table (on by
  /// default; off: the memory it takes is not spent, and trusted runs add
  /// through the workspace row as before, with the jammed loop where it
  /// pays).
  void use_slot_table(bool on) {
    slots_on_ = on;
    if (!on) {
      tables_.slots = cg::slot_table{};
      tables_.slots.state = 2;
    } else if (tables_.slots.state == 2) {
      tables_.slots.state = 0;  // recorded (or ruled out again) by the next trusted run
    }
  }
  /// The bytes of the slot table the trusted runs add through (0: none:
  /// not recorded yet, or not used for these patterns).
  [[nodiscard]] std::size_t slot_table_bytes() const noexcept {
    const auto& t = tables_.slots;
    return t.state == 1 ? t.slots.size() * sizeof(t.slots[0]) + t.first.size() * sizeof(t.first[0]) : 0;
  }

 private:
  template <class Ops>
  bool same_patterns(const Ops& ops) const {
    std::size_t at = 0;
    bool same = true;
    const bool all = detail::for_each_operand_pattern(ops, [&](const void* p, std::size_t n) {
      if (!same || n == 0) return;
      same = at + n <= copy_.size() && std::memcmp(copy_.data() + at, p, n) == 0;
      at += n;
    });
    return all && same && at == copy_.size();
  }

  Out out_;
  E e_;
  std::vector<std::byte> copy_;
  cg::numeric_tables tables_;
  bool have_ = false;
  bool trusted_ = false;
  bool slots_on_ = true;
};

}  // namespace tensorlev
