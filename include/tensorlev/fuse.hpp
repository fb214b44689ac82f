#pragma once
/// @file fuse.hpp
/// Several statements in as few loop nests as legality allows (Diffuse,
/// seed 004, Sec. 4-5, decided at compile time where the types decide and
/// at run time where only the tensors' identities do):
///
///     using namespace tensorlev::indices;
///     // One CG iteration in three loop nests:
///     fuse(defer(q(i)) = A(i, j) * p(j), defer(pq()) = p(i) * q(i));
///     const double alpha = rr / pq.value();
///     fuse(defer(x(i)) += alpha * p(i), defer(r(i)) += -alpha * q(i), defer(rs()) = r(i) * r(i));
///     fuse(defer(p(i)) = r(i) + (rs.value() / rr) * p(i));   // in place
///
/// `defer(out) = e` (and `+=`) builds a statement without running it;
/// `fuse([executor,] s...)` runs them in order. Consecutive statements
/// share one loop nest (a *fused kernel*) when each one's outer loop runs
/// over the same range of coordinates in chunks (the generated kernel's
/// chunked form: a dense output written row by row, or a scalar reduced
/// into one partial per chunk; chunks of n / 16 rows, 1024 to 4096, whatever
/// the executor) and no statement of the group reads or
/// writes, at other rows, a tensor another one writes, and none reads a
/// scalar an earlier one reduces (its value is pending until the whole
/// loop ends). The fused kernel runs, chunk by chunk of rows (on the
/// executor's threads), every statement's loop nest on
/// that chunk, in statement order: each statement sees what the earlier
/// ones wrote into its rows, and the chunk's data are still in cache when
/// the next statement reads them. Scalar partials are added in chunk order
/// (results do not depend on the number of threads).
///
/// A statement may read its own output in place when each such read is of
/// the same component it writes (`p(i) = r(i) + b * p(i)`, `x(i) += a *
/// x(i)`): it has no reduction, and either accumulates or stores every
/// component once. Any other read of the output (another component, a
/// reduction, a view that overlaps it) is refused with an error naming the
/// statement (for statements that run alone, `=`'s check: the output's own
/// object on the right). Statements that cannot be fused (sparse outputs, operands
/// converted first, terms over different reductions, outer loops over
/// positions rather than coordinates) run alone, as `=` would run them.
///
/// A `temporary<V, N>` (Diffuse's Definition 5) holds values only within
/// one fuse call: when every statement that mentions it shares the fused
/// kernel of the statement that first writes it (with `=`), its values are
/// never allocated (a chunk's rows live in a per-thread workspace);
/// otherwise fuse allocates them for the call.
///
/// `fusion_plan(s...)` prints the kernels and why each one ends, and where
/// each temporary lives;
/// `kernels_run()` (execution.hpp) counts the loop nests that ran.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "codegen.hpp"
#include "format.hpp"
#include "levels/dense.hpp"
#include "levels/window.hpp"
#include "storage.hpp"
#include "tensor.hpp"

namespace tensorlev {

/// A statement built but not run: `defer(out) = e` (Accumulate: `+=`).
template <class Out, class E, bool Accumulate>
struct statement {
  Out out;
  E e;
};

/// The left-hand side of a deferred statement (see defer).
template <class Out>
class deferred {
 public:
  explicit constexpr deferred(const Out& out) noexcept : out_(out) {}
  template <expression E>
  constexpr statement<Out, E, false> operator=(const E& e) const {  // NOLINT: builds a statement
    return {out_, e};
  }
  template <expression E>
  constexpr statement<Out, E, true> operator+=(const E& e) const {  // NOLINT: builds a statement
    return {out_, e};
  }
  template <detail::arithmetic_constant C>
  constexpr statement<Out, const_expr<C>, false> operator=(const C& c) const {  // NOLINT: builds a statement
    return {out_, const_expr<C>{c}};
  }

 private:
  Out out_;
};

/// `defer(y(i)) = A(i, j) * x(j)`: the statement, not run (see fuse).
template <class T, char... V>
constexpr deferred<access<T, V...>> defer(const access<T, V...>& out) noexcept {
  static_assert(!std::is_const_v<T>, "tensorlev: cannot assign to a const tensor");
  return deferred<access<T, V...>>(out);
}

namespace detail {
template <std::size_t N, class... L>
struct temporary_levels : temporary_levels<N - 1, L..., dense<>> {};
template <class... L>
struct temporary_levels<0, L...> {
  using type = levels<window<>, L...>;
};

// t over rows [first, first + length) of its first dimension, its values
// at data (length * the values per row).
template <class T, class V>
T window_of(const T& t, typename T::index_type first, typename T::index_type length, V* data) {
  auto lv = t.levels();
  std::get<0>(lv) = std::tuple_element_t<0, typename T::level_tuple>(t.dimension(0), first, length);
  std::size_t size = static_cast<std::size_t>(length);
  for (std::size_t d = 1; d < T::order; ++d) size *= static_cast<std::size_t>(t.dimension(d));
  return T(t.dims(), std::move(lv), std::span<V>(data, data != nullptr ? size : 0));
}
}  // namespace detail

/// A tensor whose values exist only inside one `fuse` call (Diffuse's
/// temporaries, Definition 5): dense, of order N, written by one of the
/// fused statements before any of them reads it. When every statement
/// that mentions it runs in the fused kernel of the statement that first
/// writes it, its values are never allocated: each chunk keeps its rows in
/// a per-thread workspace (chunk rows x the values per row), reused across
/// calls. Otherwise fuse allocates its values for the call (the plan says
/// why) and frees them when it returns. Its values are gone after fuse
/// returns; outside fuse a statement that mentions it does not compile.
///
///     temporary<double> c({n});
///     fuse(defer(c(i)) = a(i) + b(i), defer(e(i)) = c(i) + d(i));  // one loop; c never allocated
template <class V, std::size_t N = 1, index_type I = std::int32_t>
class temporary {
  static_assert(N >= 1, "tensorlev::temporary: the order must be at least 1 (a scalar temporary is a scalar<V>)");
  static_assert(std::is_trivially_copyable_v<V> && std::is_trivially_destructible_v<V>,
                "tensorlev::temporary: the value type must be trivially copyable and destructible (its rows live "
                "in raw workspace bytes)");

 public:
  using format = tensorlev::format<typename detail::temporary_levels<N - 1>::type>;
  using tensor_type = tensorlev::tensor<V, format, I, temporary_storage>;
  using value_type = V;
  using index_type = I;
  static constexpr std::size_t order = N;

  /// @throws shape_error for a negative dimension; overflow_error when
  /// the number of components does not fit I or its bytes a size_t.
  explicit temporary(std::array<I, N> dims) {
    I count = 1;
    for (std::size_t d = 0; d < N; ++d) {
      if (dims[d] < 0)
        throw shape_error("tensorlev::temporary: dimension " + std::to_string(d) + " is negative (" +
                          std::to_string(dims[d]) + ")");
      count = detail::checked_mul(count, dims[d], "tensorlev::temporary: number of components");
    }
    if (static_cast<std::size_t>(count) > static_cast<std::size_t>(-1) / sizeof(V))
      throw overflow_error("tensorlev::temporary: " + std::to_string(count) + " components do not fit in memory");
    typename tensor_type::level_tuple lv;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((std::get<K + 1>(lv) = std::tuple_element_t<K + 1, typename tensor_type::level_tuple>(dims[K + 1])), ...);
    }(std::make_index_sequence<N - 1>{});
    std::get<0>(lv) = window_level<I>(dims[0], 0, 0);
    t_ = tensor_type(dims, std::move(lv), std::span<V>());
  }
  temporary(const temporary&) = delete;
  temporary& operator=(const temporary&) = delete;

  /// `c(i)`: the temporary in a deferred statement (defer(c(i)) = ...).
  template <index_variable... X>
  [[nodiscard]] access<tensor_type, std::remove_cvref_t<X>::name...> operator()(X...) const noexcept {
    static_assert(sizeof...(X) == N,
                  "tensorlev: a tensor must be accessed with exactly one index variable per dimension");
    return access<tensor_type, std::remove_cvref_t<X>::name...>(&t_);
  }
  [[nodiscard]] const std::array<I, N>& dims() const noexcept { return t_.dims(); }
  /// Whether it holds values (only while a fuse call that allocates it runs).
  [[nodiscard]] bool has_values() const noexcept { return !t_.values().empty(); }

 private:
  mutable tensor_type t_;  // fuse points its values at a workspace or an allocation, for one call
};

namespace cg {

// How a statement takes part in a fused kernel.
enum class fuse_role : unsigned char {
  alone,   // runs as its own loop nests (run_statement)
  rows,    // a dense output whose first level loop 0 binds: a chunk writes its rows
  scalar,  // an order-0 output: a chunk sums into its own partial
};

template <class Out, class E, bool Accumulate, bool Uniform>
struct fuse_kernel_of {
  using type = void;
};
template <class Out, class E, bool Accumulate>
struct fuse_kernel_of<Out, E, Accumulate, true> {
  using type = kernel<Out, E, Accumulate, 0>;
};

// Whether access a is a tensor whose levels are all dense, each storing a
// dimension (mode map): component positions then follow coordinates.
template <class K>
constexpr bool all_dense_mode(std::size_t a) {
  const access_desc& x = K::D.acc[a];
  if (x.nlev == 0) return false;
  for (std::size_t k = 0; k < x.nlev; ++k)
    if (!dense_level_desc(x.lev[k]) || x.lev[k].map != map_kind::mode) return false;
  return true;
}

// Whether the chunks of loop 0 are ranges of its variable's coordinates:
// cut by coordinate, a counter over the whole extent, or an operand's
// dense root level (positions are coordinates there).
template <class K>
constexpr bool chunks_by_coordinate() {
  if (K::cut_by_coord) return true;
  const loop_plan p = plan_loop(K::D, K::O, 0, 0);
  if (p.nm != 1) return false;
  if (p.merged[0] == -1) return true;
  if (p.merged[0] < 0) return false;
  const iter_desc& it = p.it[p.merged[0]];
  if (it.lev != 0 || it.acc < 0) return false;
  const level_desc& root = K::D.acc[it.acc].lev[0];
  return dense_level_desc(root) && root.map == map_kind::mode;
}

template <class K>
constexpr fuse_role role_of() {
  if constexpr (std::is_void_v<K>) {
    return fuse_role::alone;
  } else if constexpr (K::O.error != plan_error::none || !std::is_same_v<typename K::converted, K>) {
    return fuse_role::alone;
  } else if constexpr (!K::parallel_outer) {
    return fuse_role::alone;
  } else {
    if (!chunks_by_coordinate<K>()) return fuse_role::alone;
    if (K::O.out == out_kind::scalar && K::par == par_kind::scalar) return fuse_role::scalar;
    if (K::O.out == out_kind::located && K::par == par_kind::rows && all_dense_mode<K>(0)) return fuse_role::rows;
    return fuse_role::alone;
  }
}

template <class Out, class E, bool Accumulate>
struct statement_desc_of {
  static constexpr stmt_desc D = describe<Out, E, Accumulate>();
};

template <class S>
struct fused_statement;
template <class Out, class E, bool Accumulate>
struct fused_statement<statement<Out, E, Accumulate>> {
  using desc = statement_desc_of<Out, E, Accumulate>;
  using terms = decltype(top_terms(std::declval<const E&>()));
  static constexpr bool uniform = term_groups<Out, terms>::uniform;
  using K = typename fuse_kernel_of<Out, E, Accumulate, uniform>::type;
  static constexpr fuse_role role = role_of<K>();
  static constexpr bool accumulate = Accumulate;
};

// What the plan knows of one access of a statement: the bytes of its
// values (or the scalar), and its identity as a dense tensor.
struct fuse_access {
  const void* object = nullptr;  // the tensor (or scalar) object
  std::uintptr_t lo = 0, hi = 0;  // its values' bytes (addresses as integers: arrays of different tensors compare)
  std::uint64_t layout = 0;  // the levels' dimensions and the extents (dense ones)
  bool row_local = false;    // all dense, its first level bound by loop 0
  bool same_as_out = false;  // pointwise: the output's variables, in the output's order
  bool scalar = false;
  // The same object, or values that share memory (empty ones share none).
  [[nodiscard]] bool overlaps(const fuse_access& o) const {
    return object == o.object || (lo < hi && o.lo < o.hi && lo < o.hi && o.lo < hi);
  }
  [[nodiscard]] bool same(const fuse_access& o) const { return lo == o.lo && hi == o.hi && layout == o.layout; }
};

// An access of a statement to a temporary (every role).
struct fuse_temp_use {
  std::size_t access = 0;     // 0: the output
  const void* object = nullptr;
  long long rows = 0;         // its first dimension
  std::size_t row_bytes = 0;  // bytes per row (the value size times the other dimensions)
};

struct fuse_info {
  fuse_role role = fuse_role::alone;
  long long extent = 0;           // loop 0's range
  std::vector<fuse_access> acc;   // [0]: the output
  bool in_place_ok = false;       // may read its output pointwise
  bool accumulate = false;        // +=
  std::string text;               // the statement, for the plan
  std::vector<fuse_temp_use> temps;  // its accesses to temporaries
  std::vector<int> temp_of;          // by access: its temporary's index in the plan's, or -1
};

// A temporary of a fusion, and where its values live.
struct fuse_temp {
  const void* object = nullptr;
  std::size_t writer = 0;  // the statement that first writes it
  std::size_t kernel = 0;  // that statement's kernel in the plan
  long long rows = 0;
  std::size_t row_bytes = 0;
  bool eliminated = false;  // rows of a chunk in the kernel's workspace, never allocated
  std::size_t offset = 0;   // bytes into the kernel's chunk workspace
  std::string why;          // why fuse allocates it (not eliminated)
};

template <class K, std::size_t A>
fuse_access describe_access(const typename K::state& st) {
  using T = std::remove_const_t<typename K::template op_t<A>>;
  fuse_access x;
  const auto* t = std::get<A>(st.ops);
  x.object = t;
  if constexpr (detail::is_scalar_v<T>) {
    x.lo = reinterpret_cast<std::uintptr_t>(&t->value());
    x.hi = x.lo + sizeof(t->value());
    x.scalar = true;
  } else {
    const auto vals = t->values();
    x.lo = reinterpret_cast<std::uintptr_t>(vals.data());
    x.hi = x.lo + vals.size() * sizeof(typename T::value_type);
    constexpr bool dense = all_dense_mode<K>(A);
    if constexpr (dense) {
      constexpr const access_desc& d = K::D.acc[A];
      std::uint64_t h = 1469598103934665603ULL;
      const auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
      for (std::size_t k = 0; k < d.nlev; ++k) mix(d.lev[k].dim);
      for (const auto n : t->dims()) mix(static_cast<std::uint64_t>(n));
      x.layout = h;
      x.row_local = d.lev[0].var == K::O.vars[0];
      x.same_as_out = all_dense_mode<K>(0) && K::reads_output_pointwise(A);
    } else {
      x.layout = 0;  // never the same as a dense access
    }
  }
  return x;
}

// The statement as text (K::D), tensors named by `name(access index)`.
template <class K, class Name>
std::string statement_text(const Name& name) {
  constexpr const stmt_desc& d = K::D;
  const auto acc_text = [&](int a) {
    std::string s = name(a) + "(";
    for (std::size_t v = 0; v < d.acc[a].order; ++v) s += (v ? "," : "") + std::string(1, d.acc[a].vars[v]);
    return s + ")";
  };
  const auto node_text = [&](auto self, int n) -> std::string {
    const node& x = d.nodes[n];
    switch (x.kind) {
      case node_kind::access: return acc_text(x.acc);
      case node_kind::constant: return "c";
      case node_kind::neg: return "-(" + self(self, x.a) + ")";
      case node_kind::add: return "(" + self(self, x.a) + " + " + self(self, x.b) + ")";
      case node_kind::sub: return "(" + self(self, x.a) + " - " + self(self, x.b) + ")";
      case node_kind::mul: return self(self, x.a) + " * " + self(self, x.b);
      case node_kind::div: {
        const node_kind r = d.nodes[x.b].kind;
        const std::string den = r == node_kind::mul ? "(" + self(self, x.b) + ")" : self(self, x.b);
        return "(" + self(self, x.a) + " / " + den + ")";
      }
      case node_kind::fn: return std::string(x.fn) + "(" + self(self, x.a) + ")";
    }
    return "?";
  };
  return acc_text(0) + (d.accumulate ? " += " : " = ") + (d.root >= 0 ? node_text(node_text, d.root) : "0");
}

// Why statement b cannot join a kernel that holds statement a (earlier),
// or "" when it can.
inline std::string fuse_conflict(const fuse_info& a, std::size_t ia, const fuse_info& b, std::size_t ib) {
  const std::string sa = "statement " + std::to_string(ia + 1);
  const std::string sb = "statement " + std::to_string(ib + 1);
  if (a.extent != b.extent)
    return "its outer loop runs over " + std::to_string(b.extent) + " coordinates, " + sa + "'s over " +
           std::to_string(a.extent);
  const fuse_access& wa = a.acc[0];
  const fuse_access& wb = b.acc[0];
  for (std::size_t x = 0; x < b.acc.size(); ++x) {
    if (!b.acc[x].overlaps(wa)) continue;
    if (a.role == fuse_role::scalar) return "it reads the scalar " + sa + " reduces (pending until the loop ends)";
    if (!b.acc[x].same(wa) || !b.acc[x].row_local)
      return std::string(x == 0 ? "it writes" : "it reads") + " what " + sa + " writes, at other rows";
  }
  for (std::size_t x = 0; x < a.acc.size(); ++x) {
    if (!a.acc[x].overlaps(wb)) continue;
    if (b.role == fuse_role::scalar || a.acc[x].scalar)
      return "it writes a scalar " + sa + (x == 0 ? " writes" : " reads");
    if (!a.acc[x].same(wb) || !a.acc[x].row_local)
      return "it writes what " + sa + (x == 0 ? " writes" : " reads") + ", at other rows";
  }
  (void)sb;
  return {};
}

// A statement reading its own output: only pointwise, in place.
inline void check_in_place(const fuse_info& s, std::size_t is) {
  for (std::size_t x = 1; x < s.acc.size(); ++x) {
    if (!s.acc[x].overlaps(s.acc[0])) continue;
    if (s.acc[x].same(s.acc[0]) && s.acc[x].same_as_out && s.in_place_ok) continue;
    throw error("tensorlev::fuse: statement " + std::to_string(is + 1) + " (" + s.text +
                ") reads its output other than in place (operand " + std::to_string(x) +
                (s.acc[x].same(s.acc[0]) && s.acc[x].same_as_out
                     ? ": the statement sums over a reduction, or assigns with = where some components may be "
                       "left unwritten"
                     : ": another component, or an array that overlaps it") +
                "); compute into a separate tensor");
  }
}

/// One kernel of a fusion plan: statements [begin, end).
struct fused_kernel {
  std::size_t begin = 0, end = 0;
  bool fused = false;   // the chunked fused loop (else the statement runs alone)
  long long extent = 0;
  std::string why_end;  // why the next statement starts a new kernel ("" for the last)
  std::size_t workspace = 0;  // bytes per chunk for its temporaries' rows
};

inline std::vector<fused_kernel> plan_fusion(const std::vector<fuse_info>& info) {
  std::vector<fused_kernel> ks;
  std::vector<bool> in_place(info.size(), false);
  for (std::size_t s = 0; s < info.size(); ++s) {
    check_in_place(info[s], s);
    for (std::size_t x = 1; x < info[s].acc.size(); ++x)
      in_place[s] = in_place[s] || info[s].acc[x].overlaps(info[s].acc[0]);
    if (!ks.empty() && ks.back().fused && info[s].role != fuse_role::alone) {
      std::string why;
      for (std::size_t a = ks.back().begin; a < s && why.empty(); ++a) why = fuse_conflict(info[a], a, info[s], s);
      if (why.empty()) {
        ks.back().end = s + 1;
        continue;
      }
      ks.back().why_end = "statement " + std::to_string(s + 1) + " starts a new kernel: " + why;
    } else if (!ks.empty()) {
      ks.back().why_end = info[s].role == fuse_role::alone
                              ? "statement " + std::to_string(s + 1) + " cannot be fused"
                              : "statement " + std::to_string(s + 1) + " starts a new kernel: statement " +
                                    std::to_string(s) + " cannot be fused";
    }
    fused_kernel k;
    k.begin = s;
    k.end = s + 1;
    k.fused = info[s].role != fuse_role::alone;
    k.extent = info[s].extent;
    ks.push_back(k);
  }
  // A fusable statement left alone runs as `=` runs it (no chunks), unless
  // it updates its output in place, which only the fused loop allows.
  for (fused_kernel& k : ks)
    if (k.fused && k.end == k.begin + 1 && !in_place[k.begin]) k.fused = false;
  return ks;
}

/// Rows of loop 0 per chunk of a fused kernel: n / 16, at least 1024 (the
/// fixed cost of a chunk: a state copy and a loop entry per statement) and
/// at most 4096 (the chunk's rows of a few vectors, 32 KB each, stay in the
/// L2 cache between its statements; bench/README.md "Fusion"). It does not
/// depend on the executor, so scalar partials, added in chunk order, give
/// the same sums serially and on any number of threads.
inline constexpr long long fuse_chunk_rows = 4096;
inline constexpr long long fuse_chunk_rows_min = 1024;
constexpr long long fuse_rows_per_chunk(long long n) noexcept {
  const long long r = n / 16 + (n % 16 != 0 ? 1 : 0);
  return r < fuse_chunk_rows_min ? fuse_chunk_rows_min : r > fuse_chunk_rows ? fuse_chunk_rows : r;
}

/// Bytes a chunk's rows of one eliminated temporary may take in a thread's
/// workspace (4096 rows of 32 doubles); a wider temporary is allocated.
inline constexpr std::size_t fuse_workspace_limit = std::size_t{1} << 20;

// Where each temporary lives (Definition 5): the statement that first
// mentions it must write it with `=` and not read it; it is eliminated
// when that statement's kernel is a fused loop and every statement that
// mentions it is in that kernel (the kernel's conflict rules then keep
// every access to the rows the chunk writes). The others are allocated for
// the call. Sets each kernel's workspace and each temporary's offset in it.
inline std::vector<fuse_temp> plan_temporaries(std::vector<fuse_info>& info, std::vector<fused_kernel>& ks) {
  std::vector<fuse_temp> temps;
  std::vector<std::size_t> kernel_of(info.size(), 0);
  for (std::size_t k = 0; k < ks.size(); ++k)
    for (std::size_t s = ks[k].begin; s < ks[k].end; ++s) kernel_of[s] = k;
  for (std::size_t s = 0; s < info.size(); ++s) {
    for (const fuse_temp_use& u : info[s].temps) {
      if (info[s].temp_of.size() <= u.access) info[s].temp_of.resize(u.access + 1, -1);
      auto it = std::find_if(temps.begin(), temps.end(), [&](const fuse_temp& t) { return t.object == u.object; });
      if (it == temps.end()) {
        bool read = u.access != 0;
        for (const fuse_temp_use& v : info[s].temps) read = read || (v.object == u.object && v.access != 0);
        if (read || info[s].accumulate)
          throw error("tensorlev::fuse: statement " + std::to_string(s + 1) + " (" + info[s].text + ") " +
                      (read ? "reads" : "adds (+=) into") +
                      " a temporary that no earlier statement of this fuse writes (a temporary holds values only "
                      "within one fuse call); write all of it with = first");
        fuse_temp t;
        t.object = u.object;
        t.writer = s;
        t.kernel = kernel_of[s];
        t.rows = u.rows;
        t.row_bytes = u.row_bytes;
        t.eliminated = ks[t.kernel].fused;
        temps.push_back(t);
        info[s].temp_of[u.access] = static_cast<int>(temps.size() - 1);
        continue;
      }
      if (it->why.empty() && kernel_of[s] != it->kernel) {
        it->eliminated = false;
        it->why = "statement " + std::to_string(s + 1) + " " + (u.access == 0 ? "writes" : "reads") +
                  " it in another kernel than statement " + std::to_string(it->writer + 1) + ", which writes it first";
      }
      info[s].temp_of[u.access] = static_cast<int>(it - temps.begin());
    }
  }
  for (fuse_temp& t : temps) {
    if (!t.eliminated && t.why.empty())
      t.why = "statement " + std::to_string(t.writer + 1) + ", which writes it, runs alone";
    if (!t.eliminated) continue;
    fused_kernel& k = ks[t.kernel];
    const auto rows = static_cast<std::size_t>(std::min(fuse_rows_per_chunk(k.extent), k.extent));
    // rows * row_bytes fits: the temporary's bytes fit a size_t (its constructor).
    const std::size_t bytes = (rows * t.row_bytes + 63) / 64 * 64;
    if (bytes > fuse_workspace_limit) {
      t.eliminated = false;
      t.why = "a chunk's rows of it take " + std::to_string(bytes) + " bytes, more than the workspace's " +
              std::to_string(fuse_workspace_limit) + " per temporary and thread";
      continue;
    }
    t.offset = k.workspace;
    k.workspace += bytes;
  }
  return temps;
}

// This thread's chunk workspace, at least `bytes` long (64-byte aligned),
// kept for later calls: a fused kernel's eliminated temporaries keep a
// chunk's rows in it.
inline std::byte* fuse_workspace(std::size_t bytes) {
  struct buffer {
    std::byte* p = nullptr;
    std::size_t size = 0;
    buffer() = default;
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() { ::operator delete(p, std::align_val_t{64}); }
  };
  thread_local buffer b;
  if (b.size < bytes) {
    auto* q = static_cast<std::byte*>(::operator new(bytes, std::align_val_t{64}));
    ::operator delete(b.p, std::align_val_t{64});
    b.p = q;
    b.size = bytes;
  }
  return b.p;
}

// A fusion's reducer: what a chunked scalar's sum over the chunks becomes
// before it is stored (dist::fuse sums it over the ranks).
struct no_reduce {
  template <class V>
  void operator()(V&) const noexcept {}
};

// The fusion engine over statements S...: states, plan, runs. Reduce: the
// reducer (no_reduce, or one that sums over processes, in which case every
// chunked scalar statement runs its chunked loop, alone too, so that each
// one is reduced exactly once per run, in statement order).
template <class Reduce, class... S>
class fusion {
 public:
  static constexpr std::size_t NS = sizeof...(S);
  static constexpr bool reduces = !std::is_same_v<Reduce, no_reduce>;
  template <std::size_t X>
  using info_t = fused_statement<std::tuple_element_t<X, std::tuple<S...>>>;
  template <std::size_t X>
  using K = typename info_t<X>::K;

  explicit fusion(Reduce reduce, const S&... s) : reduce_(std::move(reduce)), stmts_(&s...) {
    [&]<std::size_t... X>(std::index_sequence<X...>) { (prepare<X>(), ...); }(std::make_index_sequence<NS>{});
    plan_ = plan_fusion(info_);
    if constexpr (reduces)
      for (fused_kernel& k : plan_)
        if (info_[k.begin].role == fuse_role::scalar) k.fused = true;
    temps_ = plan_temporaries(info_, plan_);
  }
  fusion(const fusion&) = delete;
  fusion& operator=(const fusion&) = delete;
  [[nodiscard]] const std::vector<fused_kernel>& plan() const noexcept { return plan_; }
  [[nodiscard]] const std::vector<fuse_info>& info() const noexcept { return info_; }
  [[nodiscard]] const std::vector<fuse_temp>& temporaries() const noexcept { return temps_; }

  void run(const executor& ex) {
    // Temporaries that are not eliminated get values for the call.
    struct release_guard {
      fusion* f;
      explicit release_guard(fusion* x) noexcept : f(x) {}
      release_guard(const release_guard&) = delete;
      release_guard& operator=(const release_guard&) = delete;
      ~release_guard() {
        [&]<std::size_t... X>(std::index_sequence<X...>) { (f->template give_values<X>(false), ...); }(
            std::make_index_sequence<NS>{});
        f->owned_.clear();
      }
    } guard(this);
    [&]<std::size_t... X>(std::index_sequence<X...>) { (give_values<X>(true), ...); }(std::make_index_sequence<NS>{});
    for (const fused_kernel& k : plan_) {
      if (!k.fused) {
        [&]<std::size_t... X>(std::index_sequence<X...>) {
          ((X == k.begin ? run_alone<X>(ex) : void()), ...);
        }(std::make_index_sequence<NS>{});
      } else {
        run_fused(k, ex);
      }
    }
  }

 private:
  template <std::size_t X>
  const auto& stmt() const {
    return *std::get<X>(stmts_);
  }

  // The statement's operands as the kernel numbers them: the output first.
  template <std::size_t X>
  auto operands() const {
    const auto& s = stmt<X>();
    return std::tuple_cat(std::make_tuple(s.out.operand()), collect_operands(s.e));
  }

  // Statement X's temporaries that are not eliminated: values allocated
  // for the call (give), or none again (take back).
  template <std::size_t X>
  void give_values(bool give) {
    const auto ops = operands<X>();
    give_all(ops, give, std::make_index_sequence<std::tuple_size_v<decltype(ops)>>{});
  }
  template <class Ops, std::size_t... A>
  void give_all(const Ops& ops, bool give, std::index_sequence<A...>) {
    (give_one<A>(ops, give), ...);
  }
  template <std::size_t A, class Ops>
  void give_one(const Ops& ops, bool give) {
    using T = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<A, Ops>>>;
    if constexpr (detail::is_temporary_v<T>) {
      auto* t = const_cast<T*>(std::get<A>(ops));  // the temporary's mutable tensor
      const auto it = std::find_if(temps_.begin(), temps_.end(),
                                   [&](const fuse_temp& x) { return x.object == static_cast<const void*>(t); });
      if (it == temps_.end() || it->eliminated) return;
      using V = typename T::value_type;
      if (!give) {
        *t = detail::window_of(*t, 0, 0, static_cast<V*>(nullptr));
      } else if (t->values().empty() && it->rows > 0 && it->row_bytes > 0) {
        auto buf = std::make_shared<std::vector<V>>(static_cast<std::size_t>(it->rows) * it->row_bytes / sizeof(V));
        *t = detail::window_of(*t, 0, t->dimension(0), buf->data());
        owned_.push_back(std::move(buf));
      }
    }
  }

  // Statement X's accesses to temporaries, into in.temps.
  template <class Ops, std::size_t... A>
  static void record_temps(const Ops& ops, fuse_info& in, std::index_sequence<A...>) {
    (record_temp<A>(ops, in), ...);
  }
  template <std::size_t A, class Ops>
  static void record_temp(const Ops& ops, fuse_info& in) {
    using T = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<A, Ops>>>;
    if constexpr (detail::is_temporary_v<T>) {
      const T& t = *std::get<A>(ops);
      fuse_temp_use u;
      u.access = A;
      u.object = &t;
      u.rows = static_cast<long long>(t.dimension(0));
      u.row_bytes = sizeof(typename T::value_type);
      for (std::size_t d = 1; d < T::order; ++d) u.row_bytes *= static_cast<std::size_t>(t.dimension(d));
      in.temps.push_back(u);
    }
  }

  template <std::size_t X>
  void prepare() {
    using F = info_t<X>;
    const auto& s = stmt<X>();
    fuse_info in;
    in.role = F::role;
    in.accumulate = F::accumulate;
    {
      const auto ops = operands<X>();
      record_temps(ops, in, std::make_index_sequence<std::tuple_size_v<decltype(ops)>>{});
    }
    if constexpr (F::role != fuse_role::alone) {
      using KX = K<X>;
      auto& st = std::get<X>(states_);
      st = KX::make_state(s.out, s.e);
      KX::output::prepare(st);
      in.extent = static_cast<long long>(st.extent[KX::var_index(KX::O.vars[0])]);
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (in.acc.push_back(describe_access<KX, A>(st)), ...);
      }(std::make_index_sequence<KX::NA>{});
      in.in_place_ok = KX::writes_in_place;
    }
    in.text = statement_text<typename F::desc>([](int a) { return a == 0 ? std::string("out") : "t" + std::to_string(a); });
    info_.push_back(std::move(in));
  }

  template <std::size_t X>
  void run_alone(const executor& ex) {
    const auto& s = stmt<X>();
    using T = std::remove_cvref_t<decltype(s)>;
    [&]<class Out, class E, bool A>(const statement<Out, E, A>*) {
      run_statement_any<Out, A, 0>(s.out, s.e, ex);
    }(static_cast<const T*>(nullptr));
  }

  template <class T>
  struct window_slot {
    using type = char;
  };
  template <class T>
    requires detail::is_temporary_v<T>
  struct window_slot<T> {
    using type = std::remove_const_t<T>;
  };

  // Statement X's part of chunk c, rows [lo, hi); ws: the thread's chunk
  // workspace for the kernel's eliminated temporaries.
  template <std::size_t X>
  void run_chunk(std::size_t c, long long lo, long long hi, std::byte* ws) {
    using KX = K<X>;
    using I = typename KX::I;
    using V = typename KX::V;
    auto local = KX::chunk_state(std::get<X>(states_), static_cast<I>(lo), static_cast<I>(hi));
    // Eliminated temporaries: the chunk's rows, in the workspace.
    [[maybe_unused]] auto windows = [&]<std::size_t... A>(std::index_sequence<A...>) {
      return std::tuple<typename window_slot<typename KX::template op_t<A>>::type...>{};
    }(std::make_index_sequence<KX::NA>{});
    if constexpr (KX::NA > 0) {
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (
            [&] {
              using T = typename KX::template op_t<A>;
              if constexpr (detail::is_temporary_v<T>) {
                const int ti = info_[X].temp_of[A];
                if (ti < 0 || !temps_[static_cast<std::size_t>(ti)].eliminated) return;
                using W = std::remove_const_t<T>;
                using WV = typename W::value_type;
                auto& w = std::get<A>(windows);
                w = detail::window_of(*std::get<A>(local.ops), static_cast<typename W::index_type>(lo),
                                      static_cast<typename W::index_type>(hi - lo),
                                      reinterpret_cast<WV*>(ws + temps_[static_cast<std::size_t>(ti)].offset));
                std::get<A>(local.ops) = &w;
              }
            }(),
            ...);
      }(std::make_index_sequence<KX::NA>{});
      if constexpr (detail::is_temporary_v<typename KX::template op_t<0>>) KX::output::prepare(local);
    }
    KX::output::begin_chunk(local, c);
    if constexpr (info_t<X>::role == fuse_role::rows && !info_t<X>::accumulate && !KX::direct_store) {
      auto* o = std::get<0>(local.ops);
      const auto vals = o->values();
      // Rows held: all of them, or a temporary's window.
      long long first = 0, held = info_[X].extent;
      if constexpr (detail::is_temporary_v<typename KX::template op_t<0>>) {
        first = static_cast<long long>(o->template level<0>().first());
        held = static_cast<long long>(o->template level<0>().length());
      }
      const std::size_t stride = held > 0 ? vals.size() / static_cast<std::size_t>(held) : 0;
      std::fill(vals.data() + static_cast<std::size_t>(lo - first) * stride,
                vals.data() + static_cast<std::size_t>(hi - first) * stride, V{});
    }
    V acc{};
    KX::template loop<0, 0>(local, KX::root_cursor(), acc);
    if constexpr (info_t<X>::role == fuse_role::scalar) std::get<X>(partial_)[c] = acc;
  }

  template <std::size_t X>
  void finish_scalar(std::size_t nchunks) {
    if constexpr (info_t<X>::role == fuse_role::scalar) {
      using V = typename K<X>::V;
      V sum{};
      for (std::size_t c = 0; c < nchunks; ++c) sum += std::get<X>(partial_)[c];
      reduce_(sum);
      auto* o = std::get<0>(std::get<X>(states_).ops);
      if constexpr (!info_t<X>::accumulate) o->value() = V{};
      o->value() += sum;
    }
  }

  void run_fused(const fused_kernel& k, const executor& ex) {
    const long long n = k.extent;
    const long long rows = fuse_rows_per_chunk(n);
    const auto nchunks = static_cast<std::size_t>(n > 0 ? (n - 1) / rows + 1 : 0);
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (
          [&] {
            if constexpr (info_t<X>::role == fuse_role::scalar)
              if (X >= k.begin && X < k.end) std::get<X>(partial_).assign(nchunks, typename K<X>::V{});
          }(),
          ...);
    }(std::make_index_sequence<NS>{});
    struct context {
      fusion* self;
      const fused_kernel* k;
      long long n, rows;
    } ctx{this, &k, n, rows};
    detail::count_kernel();
    ex.for_chunks(
        nchunks,
        [](void* p, std::size_t c) {
          const context& x = *static_cast<const context*>(p);
          const long long lo = static_cast<long long>(c) * x.rows;
          const long long hi = std::min(x.n, lo + x.rows);
          std::byte* ws = x.k->workspace > 0 ? fuse_workspace(x.k->workspace) : nullptr;
          [&]<std::size_t... X>(std::index_sequence<X...>) {
            ((X >= x.k->begin && X < x.k->end ? x.self->template run_chunk_if<X>(c, lo, hi, ws) : void()), ...);
          }(std::make_index_sequence<NS>{});
        },
        &ctx);
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      ((X >= k.begin && X < k.end ? finish_scalar<X>(nchunks) : void()), ...);
    }(std::make_index_sequence<NS>{});
  }

 public:
  // (Public for the chunk function; statements that run alone have no chunk.)
  template <std::size_t X>
  void run_chunk_if(std::size_t c, long long lo, long long hi, std::byte* ws) {
    if constexpr (info_t<X>::role != fuse_role::alone) run_chunk<X>(c, lo, hi, ws);
  }

 private:
  template <std::size_t X>
  struct state_of {
    using type = int;
  };
  template <std::size_t X>
    requires(info_t<X>::role != fuse_role::alone)
  struct state_of<X> {
    using type = typename K<X>::state;
  };
  template <std::size_t X>
  struct partial_of {
    using type = int;
  };
  template <std::size_t X>
    requires(info_t<X>::role == fuse_role::scalar)
  struct partial_of<X> {
    using type = std::vector<typename K<X>::V>;
  };
  template <std::size_t... X>
  static auto states_type(std::index_sequence<X...>) -> std::tuple<typename state_of<X>::type...>;
  template <std::size_t... X>
  static auto partials_type(std::index_sequence<X...>) -> std::tuple<typename partial_of<X>::type...>;

  Reduce reduce_;
  std::tuple<const S*...> stmts_;
  decltype(states_type(std::make_index_sequence<NS>{})) states_{};
  decltype(partials_type(std::make_index_sequence<NS>{})) partial_{};
  std::vector<fuse_info> info_;
  std::vector<fused_kernel> plan_;
  std::vector<fuse_temp> temps_;
  std::vector<std::shared_ptr<void>> owned_;  // allocated temporaries' values, for one run
};

template <class S>
struct is_statement : std::false_type {};
template <class Out, class E, bool A>
struct is_statement<statement<Out, E, A>> : std::true_type {};

template <class... S>
consteval void check_fuse() {
  static_assert(sizeof...(S) >= 1, "tensorlev::fuse: give at least one statement");
  static_assert((is_statement<S>::value && ...),
                "tensorlev::fuse: every argument after the executor is a deferred statement: defer(y(i)) = e or "
                "defer(y(i)) += e");
}

}  // namespace cg

/// Whether a deferred statement can share a fused kernel (its role is not
/// `alone`): `fusable_v<decltype(defer(y(i)) = x(i) + z(i))>`.
template <class S>
inline constexpr bool fusable_v = cg::fused_statement<S>::role != cg::fuse_role::alone;

/// Runs the deferred statements in order, fused into as few loop nests as
/// legality allows (see the file comment), on `ex`.
template <class... S>
void fuse(const executor& ex, const S&... s) {
  cg::check_fuse<S...>();
  [&]<class... Out, class... E, bool... A>(const statement<Out, E, A>*...) {
    (cg::check_statement<Out, E, executor, A>(), ...);
  }(static_cast<const S*>(nullptr)...);
  cg::fusion<cg::no_reduce, S...> f(cg::no_reduce{}, s...);
  f.run(ex);
}
/// fuse on the calling thread.
template <class... S>
  requires(sizeof...(S) >= 1 && (cg::is_statement<S>::value && ...))
void fuse(const S&... s) {
  fuse(serial, s...);
}

/// The fused kernels `fuse(s...)` would run, one line each, and why each
/// one ends: statements are numbered from 1, tensors named t1, t2, ... by
/// their position in the statement.
template <class... S>
std::string fusion_plan(const S&... s) {
  cg::check_fuse<S...>();
  cg::fusion<cg::no_reduce, S...> f(cg::no_reduce{}, s...);
  std::string out;
  std::size_t n = 0;
  for (const cg::fused_kernel& k : f.plan()) {
    out += "kernel " + std::to_string(++n) + ": ";
    if (k.fused) {
      out += "loop over " + std::to_string(k.extent) + " rows in chunks of " +
             std::to_string(cg::fuse_rows_per_chunk(k.extent)) + ":";
      for (std::size_t x = k.begin; x < k.end; ++x)
        out += " [" + std::to_string(x + 1) + "] " + f.info()[x].text + (x + 1 < k.end ? ";" : "");
    } else {
      out += "statement " + std::to_string(k.begin + 1) + " alone (its own loop nests): " + f.info()[k.begin].text;
    }
    out += "\n";
    if (!k.why_end.empty()) out += "  " + k.why_end + "\n";
  }
  for (const cg::fuse_temp& t : f.temporaries()) {
    out += "temporary written first by statement " + std::to_string(t.writer + 1) + ": ";
    if (t.eliminated)
      out += "never allocated (a chunk's rows, " + std::to_string(t.row_bytes) + " bytes each, in kernel " +
             std::to_string(t.kernel + 1) + "'s per-thread workspace)\n";
    else
      out += "allocated for the call (" + std::to_string(static_cast<std::size_t>(t.rows) * t.row_bytes) +
             " bytes): " + t.why + "\n";
  }
  return out;
}

}  // namespace tensorlev
