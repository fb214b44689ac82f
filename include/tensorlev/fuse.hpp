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
/// one fuse call. Written once with `=` from dense operands at its own
/// index variables, it is substituted: each later statement that reads it
/// over exactly the read's variables reads its expression instead (values
/// in registers, one loop), and its writer does not run when nothing else
/// reads it (see `substitution` for the rules; a temporary is told apart
/// by its type, so give several their own, `temporary<V, N, I, Name>`).
/// A temporary it keeps (or every one, with `fuse(keep_temporaries, ...)`)
/// is never allocated when every statement that mentions it shares the
/// fused kernel of the statement that first writes it (a chunk's rows live
/// in a per-thread workspace); otherwise fuse allocates it for the call.
///
/// `fusion_plan(s...)` prints the kernels and why each one ends, and where
/// each temporary lives;
/// `kernels_run()` (execution.hpp) counts the loop nests that ran.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "codegen.hpp"
#include "codegen/substitute.hpp"
#include "detail/owned.hpp"
#include "format.hpp"
#include "levels/dense.hpp"
#include "levels/window.hpp"
#include "storage.hpp"
#include "tensor.hpp"

namespace tensorlev {

/// A statement built but not run: `defer(out) = e` (Accumulate: `+=`).
template <class Out, class E, bool Accumulate>
struct statement {
  using out_type = Out;
  using expr_type = E;
  static constexpr bool accumulate = Accumulate;
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
/// fused statements before any of them reads it. Substituted into its
/// readers (see fuse), it has no values at all. Name (any type, usually
/// an incomplete `struct c_name`) gives it a type of its own: fuse
/// substitutes a temporary only when its type has one writer among the
/// statements. Kept, when every statement
/// that mentions it runs in the fused kernel of the statement that first
/// writes it, its values are never allocated: each chunk keeps its rows in
/// a per-thread workspace (chunk rows x the values per row), reused across
/// calls. Otherwise fuse allocates its values for the call (the plan says
/// why) and frees them when it returns. Its values are gone after fuse
/// returns; outside fuse a statement that mentions it does not compile.
///
///     temporary<double> c({n});
///     fuse(defer(c(i)) = a(i) + b(i), defer(e(i)) = c(i) + d(i));  // e(i) = (a(i) + b(i)) + d(i)
///     temporary<double, 1, std::int32_t, struct d_name> d({n});  // a type of its own
template <class V, std::size_t N = 1, index_type I = std::int32_t, class Name = void>
class temporary {
  static_assert(N >= 1, "tensorlev::temporary: the order must be at least 1 (a scalar temporary is a scalar<V>)");
  static_assert(std::is_trivially_copyable_v<V> && std::is_trivially_destructible_v<V>,
                "tensorlev::temporary: the value type must be trivially copyable and destructible (its rows live "
                "in raw workspace bytes)");

 public:
  using format = tensorlev::format<typename detail::temporary_levels<N - 1>::type>;
  using tensor_type = tensorlev::tensor<V, format, I, temporary_storage<Name>>;
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
  rows,    // a dense output whose first level loop 0 binds (or its blocks of rows): a chunk writes its rows
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
// dense root level (positions are coordinates there; the blocks of rows of
// a block_outer root when K::rows_block > 0).
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
  return dense_level_desc(root) &&
         (root.map == map_kind::mode || (K::rows_block > 0 && root.map == map_kind::block_outer));
}

// Rows of the output per coordinate of loop 0: 1, or B when loop 0 binds
// blocks of B rows (K::rows_block: BCSR, SELL, CSB, grouped rows).
template <class K>
constexpr long long rows_per_coordinate() {
  return K::rows_block > 0 ? K::rows_block : 1;
}
// The variable of the rows a chunk owns: loop 0's, or the output's first
// (computed from loop 0's blocks).
template <class K>
constexpr char row_variable() {
  return K::rows_block > 0 ? K::D.acc[0].lev[0].var : K::O.vars[0];
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
  using read_expr = E;  // the kernel's expression type (shared_reads: see shared)
  static constexpr fuse_role role = role_of<K>();
  static constexpr bool accumulate = Accumulate;
  static constexpr bool dropped = false;
};

/// A statement that writes a temporary whose every read was replaced by
/// the statement's expression (see substitution): it does not run.
template <class St>
struct substituted {
  St s;
  std::uint64_t into = 0;  // bit m: statement m + 1 read it (m < 64)
};
template <class Out, class E, bool Accumulate>
struct fused_statement<substituted<statement<Out, E, Accumulate>>> {
  using desc = statement_desc_of<Out, E, Accumulate>;
  using K = void;
  static constexpr fuse_role role = fuse_role::alone;
  static constexpr bool accumulate = Accumulate;
  static constexpr bool dropped = true;
};

/// A statement rewritten by substitution in which some accesses are copies
/// of one access of a substituted writer (the same object over the same
/// variables): its access a (kernel numbering) reads through access Src[a]
/// (shared_reads, kernel.hpp).
template <class St, int... Src>
struct shared : St {};
template <class Out, class E, bool Accumulate, int... Src>
struct fused_statement<shared<statement<Out, E, Accumulate>, Src...>> : fused_statement<statement<Out, E, Accumulate>> {
  using read_expr = shared_reads<E, Src...>;
  using K = typename fuse_kernel_of<Out, read_expr, Accumulate,
                                    fused_statement<statement<Out, E, Accumulate>>::uniform>::type;
  static constexpr fuse_role role = role_of<K>();
  // For the plan: "t3 is t1, t4 is t2".
  static std::string shared_text() {
    constexpr int src[] = {Src...};
    std::string o;
    for (std::size_t a = 0; a < sizeof...(Src); ++a)
      if (src[a] != static_cast<int>(a))
        o += (o.empty() ? "t" : ", t") + std::to_string(a) + " is t" + std::to_string(src[a]);
    return o;
  }
};

// A vector of at most N trivially copyable values, held in place: a
// statement's accesses (at most max_accesses), so that planning a fusion
// does not allocate them. The values past size() are never constructed
// (bytes that provide storage; a fusion's infos take about 1.3 KB each on
// the caller's stack).
template <class T, std::size_t N>
  requires std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>
class bounded_vector {
 public:
  bounded_vector() noexcept {}  // buf_ left uninitialized
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] bool empty() const noexcept { return n_ == 0; }
  [[nodiscard]] static constexpr std::size_t capacity() noexcept { return N; }
  void push_back(const T& x) {
    if (n_ == N) [[unlikely]]
      full();
    ::new (static_cast<void*>(reinterpret_cast<T*>(buf_) + n_)) T(x);
    ++n_;
  }
  T& operator[](std::size_t i) noexcept { return data()[i]; }
  const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  T* begin() noexcept { return data(); }
  T* end() noexcept { return data() + n_; }
  const T* begin() const noexcept { return data(); }
  const T* end() const noexcept { return data() + n_; }
  T* data() noexcept { return std::launder(reinterpret_cast<T*>(buf_)); }
  const T* data() const noexcept { return std::launder(reinterpret_cast<const T*>(buf_)); }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] static void full() {
    throw error("tensorlev::fuse: internal error: more than " + std::to_string(N) + " entries");
  }
  alignas(T) std::byte buf_[N * sizeof(T)];
  std::size_t n_ = 0;
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
  long long extent = 0;           // loop 0's range, in rows (of its variable, or of the rows its blocks hold)
  long long group = 1;            // rows per coordinate of loop 0 (blocks of rows)
  bounded_vector<fuse_access, max_accesses> acc;  // [0]: the output
  bool in_place_ok = false;       // may read its output pointwise
  bool accumulate = false;        // +=
  std::string (*text_of)() = nullptr;  // the statement's text, for the plan and errors (built when asked)
  [[nodiscard]] std::string text() const { return text_of != nullptr ? text_of() : std::string(); }
  bounded_vector<fuse_temp_use, max_accesses> temps;  // its accesses to temporaries
  std::array<int, max_accesses> temp_of = filled_minus_one();  // by access: its temporary's index in the plan's, or -1
  std::string (*shared_text)() = nullptr;  // accesses read through others (shared): "t3 is t1, ..."
  bool dropped = false;              // substituted into its readers: not run, in no kernel
  std::uint64_t into = 0;            // (dropped) bit m: statement m + 1 reads it

 private:
  static constexpr std::array<int, max_accesses> filled_minus_one() noexcept {
    std::array<int, max_accesses> a{};
    a.fill(-1);
    return a;
  }
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

// An operand's identity: the object and its values' bytes (a scalar's value).
template <class T>
fuse_access memory_of(const T* t) {
  fuse_access x;
  x.object = t;
  if constexpr (detail::is_scalar_v<T>) {
    x.lo = reinterpret_cast<std::uintptr_t>(&t->value());
    x.hi = x.lo + sizeof(t->value());
    x.scalar = true;
  } else {
    const auto vals = t->values();
    x.lo = reinterpret_cast<std::uintptr_t>(vals.data());
    x.hi = x.lo + vals.size() * sizeof(typename std::remove_const_t<T>::value_type);
  }
  return x;
}

template <class K, std::size_t A>
fuse_access describe_access(const typename K::state& st) {
  using T = std::remove_const_t<typename K::template op_t<A>>;
  const auto* t = std::get<A>(st.ops);
  fuse_access x = memory_of(t);
  if constexpr (!detail::is_scalar_v<T>) {
    constexpr bool dense = all_dense_mode<K>(A);
    if constexpr (dense) {
      constexpr const access_desc& d = K::D.acc[A];
      std::uint64_t h = 1469598103934665603ULL;
      const auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
      for (std::size_t k = 0; k < d.nlev; ++k) mix(d.lev[k].dim);
      for (const auto n : t->dims()) mix(static_cast<std::uint64_t>(n));
      x.layout = h;
      x.row_local = d.lev[0].var == row_variable<K>();
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

// The statement's text with the output named `out` and operands t1, t2,
// ...: a function of the statement's type, so a fusion records a pointer
// and builds the text only for the plan and errors (not every call).
template <class K>
std::string statement_text_default() {
  return statement_text<K>([](int a) { return a == 0 ? std::string("out") : "t" + std::to_string(a); });
}

// Statement x's operand A (a substituted writer, see substitution): its
// extents equal the output's for the same variables, as the statement's
// own kernel would check.
template <class D, std::size_t A, class Ops, class Dims>
void check_pointwise_shape(const Ops& ops, const Dims& out_dims, std::size_t x, std::string (*text)()) {
  constexpr const stmt_desc& d = D::D;
  using T = std::remove_const_t<std::remove_pointer_t<std::tuple_element_t<A, Ops>>>;
  if constexpr (!detail::is_scalar_v<T>) {
    const auto& dims = std::get<A>(ops)->dims();
    for (std::size_t k = 0; k < d.acc[A].order; ++k)
      for (std::size_t o = 0; o < d.acc[0].order; ++o)
        if (d.acc[0].vars[o] == d.acc[A].vars[k] && static_cast<long long>(dims[k]) != static_cast<long long>(out_dims[o]))
          throw shape_error("tensorlev::fuse: statement " + std::to_string(x + 1) + " (" + text() + "): index variable '" +
                            std::string(1, d.acc[A].vars[k]) + "': operand " + std::to_string(A) + " has extent " +
                            std::to_string(dims[k]) + " in dimension " + std::to_string(k) +
                            " but the output has extent " + std::to_string(out_dims[o]) + " in dimension " +
                            std::to_string(o));
  }
}
template <class D, class Ops, class Dims, std::size_t... A>
void check_pointwise_shapes_of(const Ops& ops, const Dims& out_dims, std::size_t x, std::string (*text)(),
                               std::index_sequence<A...>) {
  (check_pointwise_shape<D, A + 1>(ops, out_dims, x, text), ...);
}
template <class Out, class E, bool Accumulate>
void check_pointwise_shapes(const statement<Out, E, Accumulate>& w, std::size_t x, std::string (*text)()) {
  const auto ops = std::tuple_cat(std::make_tuple(w.out.operand()), collect_operands(w.e));
  check_pointwise_shapes_of<statement_desc_of<Out, E, Accumulate>>(
      ops, w.out.operand()->dims(), x, text, std::make_index_sequence<std::tuple_size_v<decltype(ops)> - 1>{});
}

// Why statement b cannot join a kernel that holds statement a (earlier),
// or "" when it can.
inline std::string fuse_conflict(const fuse_info& a, std::size_t ia, const fuse_info& b, std::size_t ib) {
  (void)ib;
  const auto sa = [&] { return "statement " + std::to_string(ia + 1); };  // text only for a conflict
  if (a.extent != b.extent)
    return "its outer loop runs over " + std::to_string(b.extent) + " coordinates, " + sa() + "'s over " +
           std::to_string(a.extent);
  const fuse_access& wa = a.acc[0];
  const fuse_access& wb = b.acc[0];
  for (std::size_t x = 0; x < b.acc.size(); ++x) {
    if (!b.acc[x].overlaps(wa)) continue;
    if (a.role == fuse_role::scalar) return "it reads the scalar " + sa() + " reduces (pending until the loop ends)";
    if (!b.acc[x].same(wa) || !b.acc[x].row_local)
      return std::string(x == 0 ? "it writes" : "it reads") + " what " + sa() + " writes, at other rows";
  }
  for (std::size_t x = 0; x < a.acc.size(); ++x) {
    if (!a.acc[x].overlaps(wb)) continue;
    if (b.role == fuse_role::scalar || a.acc[x].scalar)
      return "it writes a scalar " + sa() + (x == 0 ? " writes" : " reads");
    if (!a.acc[x].same(wb) || !a.acc[x].row_local)
      return "it writes what " + sa() + (x == 0 ? " writes" : " reads") + ", at other rows";
  }
  return {};
}

// A statement reading its own output: only pointwise, in place.
inline void check_in_place(const fuse_info& s, std::size_t is) {
  for (std::size_t x = 1; x < s.acc.size(); ++x) {
    if (!s.acc[x].overlaps(s.acc[0])) continue;
    if (s.acc[x].same(s.acc[0]) && s.acc[x].same_as_out && s.in_place_ok) continue;
    throw error("tensorlev::fuse: statement " + std::to_string(is + 1) + " (" + s.text() +
                ") reads its output other than in place (operand " + std::to_string(x) +
                (s.acc[x].same(s.acc[0]) && s.acc[x].same_as_out
                     ? ": the statement sums over a reduction, or assigns with = where some components may be "
                       "left unwritten"
                     : ": another component, or an array that overlaps it") +
                "); compute into a separate tensor");
  }
}

/// Rows of loop 0 per chunk of a fused kernel: n / 16, at least 1024 (the
/// fixed cost of a chunk: a state copy and a loop entry per statement) and
/// at most 4096 (the chunk's rows of a few vectors, 32 KB each, stay in the
/// L2 cache between its statements; bench/README.md "Fusion"), rounded down
/// to a multiple of `group`, at least one (statements whose loop 0 binds
/// blocks of rows get whole blocks). It does not depend on the executor, so scalar
/// partials, added in chunk order, give the same sums serially and on any
/// number of threads.
inline constexpr long long fuse_chunk_rows = 4096;
inline constexpr long long fuse_chunk_rows_min = 1024;
constexpr long long fuse_rows_per_chunk(long long n, long long group = 1) noexcept {
  const long long r0 = n / 16 + (n % 16 != 0 ? 1 : 0);
  const long long r = r0 < fuse_chunk_rows_min ? fuse_chunk_rows_min : r0 > fuse_chunk_rows ? fuse_chunk_rows : r0;
  return group > 1 ? (r >= group ? r / group * group : group) : r;
}

/// One kernel of a fusion plan: statements [begin, end).
struct fused_kernel {
  std::size_t begin = 0, end = 0;
  bool fused = false;   // the chunked fused loop (else the statement runs alone)
  long long extent = 0;
  long long group = 1;  // chunks hold a multiple of this many rows (every statement's blocks of rows)
  std::string why_end;  // why the next statement starts a new kernel ("" for the last)
  std::size_t workspace = 0;  // bytes per chunk for its temporaries' rows
  bool first_in_place = false;  // its first statement reads its own output
};

// The kernels, into ks (at least info.size() long); returns how many.
// Statements substituted into their readers (dropped) belong to no kernel
// and end none; a kernel's range [begin, end) may hold some.
inline std::size_t plan_fusion(std::span<const fuse_info> info, std::span<fused_kernel> out) {
  std::size_t nk = 0;  // kernels so far: out[0, nk)
  std::size_t last = 0;  // the last statement that runs, before s
  for (std::size_t s = 0; s < info.size(); ++s) {
    if (info[s].dropped) continue;
    check_in_place(info[s], s);
    bool in_place = false;
    for (std::size_t x = 1; x < info[s].acc.size(); ++x) in_place = in_place || info[s].acc[x].overlaps(info[s].acc[0]);
    if (nk > 0 && out[nk - 1].fused && info[s].role != fuse_role::alone) {
      std::string why;
      for (std::size_t a = out[nk - 1].begin; a < s && why.empty(); ++a)
        if (!info[a].dropped) why = fuse_conflict(info[a], a, info[s], s);
      const long long group = std::lcm(out[nk - 1].group, info[s].group);
      if (why.empty() && group > fuse_chunk_rows)
        why = "its blocks of " + std::to_string(info[s].group) + " rows and the kernel's of " +
              std::to_string(out[nk - 1].group) + " need chunks of a multiple of " + std::to_string(group) + " rows";
      if (why.empty()) {
        out[nk - 1].group = group;
        out[nk - 1].end = s + 1;
        last = s;
        continue;
      }
      out[nk - 1].why_end = "statement " + std::to_string(s + 1) + " starts a new kernel: " + why;
    } else if (nk > 0) {
      out[nk - 1].why_end = info[s].role == fuse_role::alone
                              ? "statement " + std::to_string(s + 1) + " cannot be fused"
                              : "statement " + std::to_string(s + 1) + " starts a new kernel: statement " +
                                    std::to_string(last + 1) + " cannot be fused";
    }
    last = s;
    fused_kernel k;
    k.begin = s;
    k.end = s + 1;
    k.fused = info[s].role != fuse_role::alone;
    k.extent = info[s].extent;
    k.group = info[s].group;
    k.first_in_place = in_place;
    out[nk++] = std::move(k);
  }
  // A fusable statement left alone runs as `=` runs it (no chunks), unless
  // it updates its output in place, which only the fused loop allows.
  for (fused_kernel& k : out.first(nk)) {
    std::size_t running = 0;
    for (std::size_t s = k.begin; s < k.end; ++s) running += info[s].dropped ? 0 : 1;
    if (k.fused && running == 1 && !k.first_in_place) k.fused = false;
  }
  return nk;
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
inline std::vector<fuse_temp> plan_temporaries(std::span<fuse_info> info, std::span<fused_kernel> ks) {
  std::vector<fuse_temp> temps;
  const auto kernel_of = [&](std::size_t s) {
    std::size_t k = 0;
    while (k + 1 < ks.size() && ks[k].end <= s) ++k;
    return k;
  };
  for (std::size_t s = 0; s < info.size(); ++s) {
    for (const fuse_temp_use& u : info[s].temps) {
      auto it = std::find_if(temps.begin(), temps.end(), [&](const fuse_temp& t) { return t.object == u.object; });
      if (it == temps.end()) {
        bool read = u.access != 0;
        for (const fuse_temp_use& v : info[s].temps) read = read || (v.object == u.object && v.access != 0);
        if (read || info[s].accumulate)
          throw error("tensorlev::fuse: statement " + std::to_string(s + 1) + " (" + info[s].text() + ") " +
                      (read ? "reads" : "adds (+=) into") +
                      " a temporary that no earlier statement of this fuse writes (a temporary holds values only "
                      "within one fuse call); write all of it with = first");
        fuse_temp t;
        t.object = u.object;
        t.writer = s;
        t.kernel = kernel_of(s);
        t.rows = u.rows;
        t.row_bytes = u.row_bytes;
        t.eliminated = ks[t.kernel].fused;
        temps.push_back(t);
        info[s].temp_of[u.access] = static_cast<int>(temps.size() - 1);
        continue;
      }
      if (it->why.empty() && kernel_of(s) != it->kernel) {
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
    const auto rows = static_cast<std::size_t>(std::min(fuse_rows_per_chunk(k.extent, k.group), k.extent));
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

// A chunked scalar's partial sums, one per chunk: in place up to 16
// chunks (every extent up to 65536 rows, fuse_rows_per_chunk), allocated
// beyond.
template <class V>
class chunk_partials {
 public:
  chunk_partials() = default;
  chunk_partials(const chunk_partials&) = delete;  // data_ may point into small_
  chunk_partials& operator=(const chunk_partials&) = delete;
  void assign(std::size_t n) {
    if (n <= small_.size()) {
      std::fill_n(small_.begin(), n, V{});
      data_ = small_.data();
    } else {
      big_.assign(n, V{});
      data_ = big_.data();
    }
  }
  V& operator[](std::size_t c) noexcept { return data_[c]; }

 private:
  std::array<V, 16> small_{};
  std::vector<V> big_;
  V* data_ = small_.data();
};

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
    nplan_ = plan_fusion(info_, plan_);
    if constexpr (reduces)
      for (fused_kernel& k : plan_mut())
        if (info_[k.begin].role == fuse_role::scalar) k.fused = true;
    temps_ = plan_temporaries(info_, plan_mut());
  }
  fusion(const fusion&) = delete;
  fusion& operator=(const fusion&) = delete;
  [[nodiscard]] std::span<const fused_kernel> plan() const noexcept { return {plan_.data(), nplan_}; }
  [[nodiscard]] std::span<const fuse_info> info() const noexcept { return info_; }
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
    for (const fused_kernel& k : plan()) {
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
  std::span<fused_kernel> plan_mut() noexcept { return {plan_.data(), nplan_}; }

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
    if constexpr (!info_t<X>::dropped) {
      const auto ops = operands<X>();
      give_all(ops, give, std::make_index_sequence<std::tuple_size_v<decltype(ops)>>{});
    }
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
        auto* buf = new std::vector<V>(static_cast<std::size_t>(it->rows) * it->row_bytes / sizeof(V));
        auto owner = detail::unique_erased::adopt(buf);
        owned_.push_back(std::move(owner));
        *t = detail::window_of(*t, 0, t->dimension(0), buf->data());
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
    if constexpr (F::dropped) {
      fuse_info& in = info_[X];
      in.dropped = true;
      in.into = s.into;
      in.text_of = &statement_text_default<typename F::desc>;
      check_pointwise_shapes(s.s, X, in.text_of);
    } else {
      prepare_running<X>();
    }
  }
  template <std::size_t X>
  void prepare_running() {
    using F = info_t<X>;
    const auto& s = stmt<X>();
    fuse_info& in = info_[X];
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
      in.extent = static_cast<long long>(st.extent[KX::var_index(row_variable<KX>())]);
      in.group = rows_per_coordinate<KX>();
      static_assert(KX::NA <= decltype(in.acc)::capacity(), "tensorlev::fuse: internal: too many accesses");
      [&]<std::size_t... A>(std::index_sequence<A...>) {
        (in.acc.push_back(describe_access<KX, A>(st)), ...);
      }(std::make_index_sequence<KX::NA>{});
      in.in_place_ok = KX::writes_in_place;
    }
    in.text_of = &statement_text_default<typename F::desc>;
    if constexpr (requires { F::shared_text(); }) in.shared_text = &F::shared_text;
  }

  template <std::size_t X>
  void run_alone(const executor& ex) {
    if constexpr (!info_t<X>::dropped) {
      const auto& s = stmt<X>();
      using T = std::remove_cvref_t<decltype(s)>;
      [&]<class Out, class E, bool A>(const statement<Out, E, A>*) {
        run_statement_as<Out, A, typename info_t<X>::read_expr, 0>(s.out, s.e, ex);
      }(static_cast<const T*>(nullptr));
    }
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
    // Rows [lo, hi) are blocks [lo / B, ceil(hi / B)) when loop 0 binds blocks of B rows (lo is a
    // multiple of B: fuse_rows_per_chunk's group).
    constexpr long long B = rows_per_coordinate<KX>();
    auto local = KX::chunk_state(std::get<X>(states_), static_cast<I>(lo / B), static_cast<I>((hi + B - 1) / B));
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
      using OT = std::remove_pointer_t<decltype(o)>;
      if constexpr (detail::has_gaps_v<OT>) {
        // A strided view: its rows' components, not the gaps between them.
        using OI = typename OT::index_type;
        detail::zero_components<0>(*o, OI(0), static_cast<OI>(lo), static_cast<OI>(hi));
      } else {
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
    const long long rows = fuse_rows_per_chunk(n, k.group);
    const auto nchunks = static_cast<std::size_t>(n > 0 ? (n - 1) / rows + 1 : 0);
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      (
          [&] {
            if constexpr (info_t<X>::role == fuse_role::scalar)
              if (X >= k.begin && X < k.end) std::get<X>(partial_).assign(nchunks);
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
    using type = chunk_partials<typename K<X>::V>;
  };
  template <std::size_t... X>
  static auto states_type(std::index_sequence<X...>) -> std::tuple<typename state_of<X>::type...>;
  template <std::size_t... X>
  static auto partials_type(std::index_sequence<X...>) -> std::tuple<typename partial_of<X>::type...>;

  Reduce reduce_;
  std::tuple<const S*...> stmts_;
  decltype(states_type(std::make_index_sequence<NS>{})) states_{};
  decltype(partials_type(std::make_index_sequence<NS>{})) partial_{};
  std::array<fuse_info, NS> info_;  // not value-initialized: no zeroing of the accesses' room
  std::array<fused_kernel, NS> plan_;
  std::size_t nplan_ = 0;
  std::vector<fuse_temp> temps_;
  std::vector<detail::unique_erased> owned_;  // allocated temporaries' values, for one run
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
// check_fuse, and each statement's own checks (as `=` would make them).
template <class... S>
void check_fused_statements() {
  check_fuse<S...>();
  [&]<class... Out, class... E, bool... A>(const statement<Out, E, A>*...) {
    (check_statement<Out, E, executor, A>(), ...);
  }(static_cast<const S*>(nullptr)...);
}

// ---- substitution of pointwise temporaries --------------------------------------
//
// A temporary written once, with `=`, from dense operands at its own index
// variables (`c(i) = a(i) + b(i)`) is replaced, in each later statement that
// reads it pointwise over exactly the read's variables (`s() = c(i) * d(i)`,
// `e(i) = c(i) + d(i)`), by its expression with the variables renamed:
// that statement then computes the values in registers, in its own loop.
// The writer does not run when no statement reads the temporary any more.
// Decided from the types: the temporary's type has exactly one writer
// among the statements (temporaries of one type are told apart only by
// their objects, so give each its own type, `temporary<V, N, I, Name>`, to
// substitute several); the reader's output has the temporary's value type
// (the expression is evaluated in it); a reader that sums takes only an
// expression whose every + and - has the same variables on both sides
// (each term sums over its own reduction variables: `c = a + 1.0` summed
// is sum(a + 1), spliced it would be sum(a) + 1); the writer's expression
// has no function or quotient when more than one statement reads the
// temporary (they would be computed again for each); and the rewritten
// statement fits the generator's limits and, if a scalar, stays a chunked
// reduction. It is legal when no statement from the
// writer to the reader (the reader included) writes what the expression
// reads: proved from the types where they cannot share memory (different
// types of scalars, owning tensors and temporaries), otherwise checked on
// the objects when fuse runs, which then runs the statements as written if
// any may be overwritten. A read of an object other than the writer's (a
// temporary no statement writes) is the error the plan would give.
template <class... S>
class substitution {
 public:
  static constexpr std::size_t NS = sizeof...(S);
  template <std::size_t X>
  using stmt_t = std::tuple_element_t<X, std::tuple<S...>>;
  template <std::size_t X>
  using out_t = access_tensor_t<typename stmt_t<X>::out_type>;
  template <std::size_t X>
  using accesses_t = typename expr_info<typename stmt_t<X>::expr_type>::access_types;

  template <class T>
  static constexpr std::size_t writers = (std::size_t{0} + ... + std::size_t{std::is_same_v<access_tensor_t<typename S::out_type>, T>});
  template <class T>
  static constexpr std::size_t writer_of() {
    constexpr bool w[] = {std::is_same_v<access_tensor_t<typename S::out_type>, T>...};
    for (std::size_t x = 0; x < NS; ++x)
      if (w[x]) return x;
    return NS;
  }
  // Reads of T in statements after K (as written).
  template <class T, std::size_t K>
  static constexpr std::size_t later_reads() {
    return [&]<std::size_t... X>(std::index_sequence<X...>) {
      return (std::size_t{0} + ... + (X > K ? reads_of<T, typename stmt_t<X>::expr_type>() : std::size_t{0}));
    }(std::make_index_sequence<NS>{});
  }

  template <std::size_t M>
  struct at;  // statement M rewritten: src (the writer substituted for each access, or -1) and type

  // Whether statement K (rewritten) is a pointwise writer of a temporary.
  template <std::size_t K>
  static constexpr bool writer_candidate() {
    using R = typename at<K>::type;
    using T = access_tensor_t<typename R::out_type>;
    if constexpr (R::accumulate || !detail::is_temporary_v<T>) {
      return false;
    } else if constexpr (writers<T> != 1 || reads_of<T, typename R::expr_type>() != 0) {
      return false;
    } else {
      constexpr stmt_desc D = describe<typename R::out_type, typename R::expr_type, false>();
      if (D.too_big) return false;
      const access_desc& o = D.acc[0];
      for (std::size_t x = 0; x < o.order; ++x)
        for (std::size_t y = x + 1; y < o.order; ++y)
          if (o.vars[x] == o.vars[y]) return false;
      bool used[max_levels]{};
      for (std::size_t a = 1; a < D.nacc; ++a) {
        if (!dense_operand(D.acc[a])) return false;
        for (std::size_t x = 0; x < D.acc[a].order; ++x) {
          std::size_t p = 0;
          while (p < o.order && o.vars[p] != D.acc[a].vars[x]) ++p;
          if (p == o.order) return false;  // a reduction
          used[p] = true;
        }
      }
      for (std::size_t x = 0; x < o.order; ++x)
        if (!used[x]) return false;  // a broadcast (a constant, or fewer variables)
      return !has_fn_or_div(D) || later_reads<T, K>() <= 1;
    }
  }

  // The writer substituted for access A of statement M's expression, or -1.
  template <std::size_t M, std::size_t A>
  static constexpr int source() {
    using Acc = std::tuple_element_t<A, accesses_t<M>>;
    using T = access_tensor_t<Acc>;
    if constexpr (!detail::is_temporary_v<T>) {
      return -1;
    } else if constexpr (writers<T> != 1 || writer_of<T>() >= M) {
      return -1;
    } else if constexpr (!writer_candidate<writer_of<T>()>()) {
      return -1;
    } else if constexpr (!std::is_same_v<typename T::value_type, typename out_t<M>::value_type>) {
      return -1;
    } else {
      constexpr auto w = access_tensor<Acc>::vars;
      constexpr stmt_desc D =
          describe<typename stmt_t<M>::out_type, typename stmt_t<M>::expr_type, stmt_t<M>::accumulate>();
      if (D.too_big || D.nvars != w.size()) return -1;
      // A reader that sums: only an expression whose every term has all
      // the variables (terms sum over their own reduction variables).
      using R = typename at<writer_of<T>()>::type;
      if (!without_reductions(D) &&
          !additively_uniform(describe<typename R::out_type, typename R::expr_type, false>()))
        return -1;
      for (std::size_t x = 0; x < w.size(); ++x) {
        for (std::size_t y = x + 1; y < w.size(); ++y)
          if (w[x] == w[y]) return -1;
        bool in = false;
        for (std::size_t v = 0; v < D.nvars; ++v) in = in || D.vars[v] == w[x];
        if (!in) return -1;
      }
      return static_cast<int>(writer_of<T>());
    }
  }

  template <std::size_t M>
  static constexpr auto sources() {
    return []<std::size_t... A>(std::index_sequence<A...>) {
      return std::array<int, sizeof...(A)>{source<M, A>()...};
    }(std::make_index_sequence<std::tuple_size_v<accesses_t<M>>>{});
  }

  template <std::size_t... X>
  static auto done_of(std::index_sequence<X...>) -> std::tuple<typename at<X>::type...>;
  template <std::size_t M>
  using done_t = decltype(done_of(std::make_index_sequence<M>{}));

  // Statement M's expression with the chosen accesses replaced (Src: the
  // writer of each access from Off on); done: statements 0..M-1 rewritten.
  template <auto Src, std::size_t Off, class E, class Done>
  static auto transform(const E& e, const Done& done) {
    using NT = node_traits<E>;
    if constexpr (NT::kind == node_kind::access) {
      if constexpr (Src[Off] < 0) {
        return e;
      } else {
        const auto& w = std::get<static_cast<std::size_t>(Src[Off])>(done);
        return rename_vars<access_tensor<typename std::remove_cvref_t<decltype(w)>::out_type>::vars,
                           access_tensor<E>::vars>(w.e);
      }
    } else if constexpr (NT::kind == node_kind::constant) {
      return e;
    } else if constexpr (NT::kind == node_kind::neg || NT::kind == node_kind::fn) {
      return rebuild<E>::make(transform<Src, Off>(e.e, done));
    } else {
      return rebuild<E>::make(transform<Src, Off>(e.l, done),
                              transform<Src, Off + expr_info<typename NT::left>::accesses>(e.r, done));
    }
  }

  // Where each access of statement M's rewritten expression comes from (at::origin).
  template <std::size_t M>
  static constexpr std::array<int, max_accesses> origins() {
    std::array<int, max_accesses> o{};
    std::size_t q = 0;
    [&]<std::size_t... A>(std::index_sequence<A...>) {
      (
          [&] {
            constexpr int w = at<M>::src[A];
            if constexpr (w < 0) {
              o[q++] = static_cast<int>(M * 256 + A);
            } else {
              using W = at<static_cast<std::size_t>(w)>;
              for (std::size_t x = 0; x < expr_info<typename W::type::expr_type>::accesses; ++x) o[q++] = W::origin[x];
            }
          }(),
          ...);
    }(std::make_index_sequence<at<M>::src.size()>{});
    return o;
  }

  template <std::size_t M>
  struct at {
    static constexpr auto tentative = sources<M>();
    using St = stmt_t<M>;
    using tentative_expr = decltype(transform<tentative, 0>(std::declval<const typename St::expr_type&>(),
                                                             std::declval<const done_t<M>&>()));
    static constexpr bool tentative_any = [] {
      for (int x : tentative)
        if (x >= 0) return true;
      return false;
    }();
    // Within the generator's limits, and in the same part of a fused
    // kernel as the statement as written (dist::fuse sums a scalar only
    // where it is a chunked reduction); else nothing is substituted into M.
    static constexpr bool fits = [] {
      if constexpr (!tentative_any) {
        return true;
      } else if constexpr (expr_info<tentative_expr>::accesses + 1 > max_accesses ||
                           expr_info<tentative_expr>::nodes > max_nodes) {
        return false;
      } else {
        return fused_statement<St>::role != fuse_role::scalar ||
               fused_statement<statement<typename St::out_type, tentative_expr, St::accumulate>>::role ==
                   fuse_role::scalar;
      }
    }();
    static constexpr auto src = [] {
      auto s = tentative;
      if (!fits)
        for (auto& x : s) x = -1;
      return s;
    }();
    static constexpr bool any = [] {
      for (int x : src)
        if (x >= 0) return true;
      return false;
    }();
    using type = std::conditional_t<any, statement<typename St::out_type, tentative_expr, St::accumulate>, St>;
    // Where each access of type's expression comes from: an access of a
    // statement as written (256 x the statement + its position there),
    // copied by each substitution of its writer.
    static constexpr std::array<int, max_accesses> origin = origins<M>();
  };


  // Statement M's reads (kernel numbering, 0: the output): each access
  // that is a copy of an earlier one (the same origin and access type,
  // a dense operand) reads through the first copy.
  template <std::size_t M>
  static constexpr auto read_map() {
    using R = typename at<M>::type;
    using accs = typename expr_info<typename R::expr_type>::access_types;
    constexpr std::size_t n = std::tuple_size_v<accs>;
    constexpr auto same = []<std::size_t... X>(std::index_sequence<X...>) {
      return std::array<bool, n * n>{
          std::is_same_v<std::tuple_element_t<X / n, accs>, std::tuple_element_t<X % n, accs>>...};
    }(std::make_index_sequence<n * n>{});
    constexpr stmt_desc D = describe<typename R::out_type, typename R::expr_type, R::accumulate>();
    std::array<int, n + 1> m{};
    for (std::size_t a = 1; a <= n; ++a) {
      m[a] = static_cast<int>(a);
      if (!dense_operand(D.acc[a])) continue;
      for (std::size_t b = 1; b < a; ++b) {
        if (at<M>::origin[b - 1] == at<M>::origin[a - 1] && same[(a - 1) * n + (b - 1)]) {
          m[a] = static_cast<int>(b);
          break;
        }
      }
    }
    return m;
  }
  // Whether statement M (kept, rewritten) reads some operand twice as copies.
  template <std::size_t M>
  static constexpr bool shares() {
    if constexpr (!at<M>::any || dropped<M>()) {
      return false;
    } else {
      constexpr auto m = read_map<M>();
      for (std::size_t a = 0; a < m.size(); ++a)
        if (m[a] != static_cast<int>(a)) return true;
      return false;
    }
  }
  template <std::size_t M, class Seq = std::make_index_sequence<read_map<M>().size()>>
  struct shared_of;
  template <std::size_t M, std::size_t... A>
  struct shared_of<M, std::index_sequence<A...>> {
    static constexpr auto m = read_map<M>();
    using type = shared<typename at<M>::type, m[A]...>;
  };

  // Whether writer K (a candidate) no longer runs: no statement reads its
  // temporary after the rewrite (none read it, or every read was replaced).
  template <std::size_t K>
  static constexpr bool dropped() {
    if constexpr (!writer_candidate<K>()) {
      return false;
    } else {
      using T = out_t<K>;
      return [&]<std::size_t... X>(std::index_sequence<X...>) {
        return ((X == K || reads_of<T, typename at<X>::type::expr_type>() == 0) && ...);
      }(std::make_index_sequence<NS>{});
    }
  }
  template <std::size_t K, std::size_t X>
  static constexpr std::uint64_t into_bit() {
    for (int w : at<X>::src)
      if (w == static_cast<int>(K) && X < 64) return std::uint64_t{1} << X;
    return 0;
  }
  template <std::size_t K, std::size_t... X>
  static constexpr std::uint64_t into_of(std::index_sequence<X...>) {
    return (std::uint64_t{0} | ... | into_bit<K, X>());
  }
  template <std::size_t K>
  static constexpr std::uint64_t into() {
    return into_of<K>(std::make_index_sequence<NS>{});
  }

  template <std::size_t X, bool = shares<X>()>
  struct kept_of {
    using type = typename at<X>::type;
  };
  template <std::size_t X>
  struct kept_of<X, true> {
    using type = typename shared_of<X>::type;
  };
  template <std::size_t X>
  using final_t =
      std::conditional_t<dropped<X>(), substituted<typename at<X>::type>, typename kept_of<X>::type>;

  static constexpr bool any = [] {
    return []<std::size_t... X>(std::index_sequence<X...>) { return ((at<X>::any || dropped<X>()) || ...); }(
        std::make_index_sequence<NS>{});
  }();

  // Whether replacing access A of M by writer K's expression is legal
  // whatever the objects: no statement in (K, M] writes a type the
  // expression reads, and these types cannot share memory.
  template <std::size_t Q, class Reads, std::size_t... R>
  static constexpr bool disjoint(std::index_sequence<R...>) {
    return ((!std::is_same_v<out_t<Q>, access_tensor_t<std::tuple_element_t<R, Reads>>> &&
             exclusive_memory<out_t<Q>>() && exclusive_memory<access_tensor_t<std::tuple_element_t<R, Reads>>>()) &&
            ...);
  }
  template <std::size_t K, std::size_t M, class Reads, std::size_t... Q>
  static constexpr bool proved_over(std::index_sequence<Q...>) {
    return ((Q <= K || Q > M || disjoint<Q, Reads>(std::make_index_sequence<std::tuple_size_v<Reads>>{})) && ...);
  }
  template <std::size_t K, std::size_t M>
  static constexpr bool proved() {
    using reads = typename expr_info<typename at<K>::type::expr_type>::access_types;
    return proved_over<K, M, reads>(std::make_index_sequence<NS>{});
  }
  template <std::size_t M>
  static constexpr bool proved_all() {
    return []<std::size_t... A>(std::index_sequence<A...>) {
      return ((at<M>::src[A] < 0 || proved<static_cast<std::size_t>(at<M>::src[A] < 0 ? 0 : at<M>::src[A]), M>()) &&
              ...);
    }(std::make_index_sequence<at<M>::src.size()>{});
  }
  /// Whether some substitution needs the objects to be checked (and the
  /// statements as written to run when they may alias).
  static constexpr bool checked = [] {
    return []<std::size_t... M>(std::index_sequence<M...>) { return (!proved_all<M>() || ...); }(
        std::make_index_sequence<NS>{});
  }();

  /// The rewritten statements (each writer that no longer runs wrapped in
  /// substituted), from the statements as written.
  static auto build(const S&... s) {
    const std::tuple<const S*...> in(&s...);
    auto done = build_from<0>(in, std::tuple<>{});
    return [&]<std::size_t... X>(std::index_sequence<X...>) {
      return std::tuple<final_t<X>...>{wrap<X>(std::get<X>(std::move(done)))...};
    }(std::make_index_sequence<NS>{});
  }

  /// The problem with the objects, if any: "" (substitute), "alias" (run
  /// the statements as written), or an error message (a read of a
  /// temporary no statement writes).
  /// built: what build made of them.
  template <class Built>
  static std::string check(const Built& built, const S&... s) {
    const std::tuple<const S*...> in(&s...);
    std::string why;
    [&]<std::size_t... M>(std::index_sequence<M...>) { (check_statement_reads<M>(in, built, why), ...); }(
        std::make_index_sequence<NS>{});
    return why;
  }

 private:
  template <std::size_t M, class In, class Done>
  static auto build_from(const In& in, Done&& done) {
    if constexpr (M == NS) {
      return std::move(done);
    } else {
      using R = typename at<M>::type;
      const auto& sm = *std::get<M>(in);
      if constexpr (at<M>::any) {
        R r{sm.out, transform<at<M>::src, 0>(sm.e, done)};
        return build_from<M + 1>(in, std::tuple_cat(std::move(done), std::tuple<R>(std::move(r))));
      } else {
        return build_from<M + 1>(in, std::tuple_cat(std::move(done), std::tuple<R>(sm)));
      }
    }
  }
  template <std::size_t X, class R>
  static final_t<X> wrap(R&& r) {
    if constexpr (dropped<X>())
      return final_t<X>{std::forward<R>(r), into<X>()};
    else if constexpr (shares<X>())
      return final_t<X>{std::forward<R>(r)};
    else
      return std::forward<R>(r);
  }

  template <std::size_t M, class In, class Built>
  static void check_statement_reads(const In& in, const Built& built, std::string& why) {
    if constexpr (at<M>::any) {
      const auto reads = collect_operands(std::get<M>(in)->e);
      [&]<std::size_t... A>(std::index_sequence<A...>) { (check_read<M, A>(in, built, reads, why), ...); }(
          std::make_index_sequence<at<M>::src.size()>{});
    }
  }
  // A rewritten statement's expression (kept, or its writer dropped).
  template <class St>
  static const auto& expression_of(const St& st) {
    if constexpr (requires { st.s.e; })
      return st.s.e;
    else
      return st.e;
  }
  template <std::size_t M, std::size_t A, class In, class Built, class Reads>
  static void check_read(const In& in, const Built& built, const Reads& reads, std::string& why) {
    constexpr int k = at<M>::src[A];
    if constexpr (k >= 0) {
      constexpr auto K = static_cast<std::size_t>(k);
      if (!why.empty() && why != "alias") return;
      if (static_cast<const void*>(std::get<A>(reads)) != static_cast<const void*>(std::get<K>(in)->out.operand())) {
        using D = statement_desc_of<typename stmt_t<M>::out_type, typename stmt_t<M>::expr_type, stmt_t<M>::accumulate>;
        why = "tensorlev::fuse: statement " + std::to_string(M + 1) + " (" +
              statement_text<D>([](int a) { return a == 0 ? std::string("out") : "t" + std::to_string(a); }) +
              ") reads a temporary that no earlier statement of this fuse writes (a temporary holds values only "
              "within one fuse call); write all of it with = first";
        return;
      }
      if constexpr (!proved<K, M>()) {
        if (!why.empty()) return;
        // The writer's expression, as rewritten: its operands are the
        // statement's as written, or earlier writers' (substituted).
        const auto ops = collect_operands(expression_of(std::get<K>(built)));
        check_writes<K, M>(in, ops, why, std::make_index_sequence<NS>{});
      }
    }
  }
  template <std::size_t K, std::size_t M, class In, class Ops, std::size_t... Q>
  static void check_writes(const In& in, const Ops& ops, std::string& why, std::index_sequence<Q...>) {
    (check_write<K, M, Q>(in, ops, why, std::make_index_sequence<std::tuple_size_v<Ops>>{}), ...);
  }
  template <std::size_t K, std::size_t M, std::size_t Q, class In, class Ops, std::size_t... R>
  static void check_write(const In& in, const Ops& ops, std::string& why, std::index_sequence<R...>) {
    if constexpr (Q > K && Q <= M) {
      const auto* out = std::get<Q>(in)->out.operand();
      if (why.empty() && (memory_of(out).overlaps(memory_of(std::get<R>(ops))) || ...)) why = "alias";
    }
  }
};

// The fusion a fuse call runs (statements substituted, or as written),
// handed to body as a maker: `typename M::type` is the fusion, `m.into(opt)`
// constructs it in a std::optional (or throws the plan's error), `m.with(r,
// fn)` constructs it on the stack and calls fn with it (g++ 12 zeroes an
// optional's whole storage first: 1.7 KB a call for three statements).
template <class F, class Tuple>
struct fusion_maker {
  using type = F;
  const Tuple* stmts;
  const std::string* error;
  template <class Reduce>
  void into(std::optional<F>& f, const Reduce& reduce) const {
    if (!error->empty()) throw tensorlev::error(*error);
    [&]<std::size_t... X>(std::index_sequence<X...>) { f.emplace(reduce, std::get<X>(*stmts)...); }(
        std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }
  template <class Reduce, class Fn>
  void with(const Reduce& reduce, Fn&& fn) const {
    if (!error->empty()) throw tensorlev::error(*error);
    [&]<std::size_t... X>(std::index_sequence<X...>) {
      F f(reduce, std::get<X>(*stmts)...);
      fn(f);
    }(std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }
};

template <class Reduce, class Tuple>
struct fusion_of_tuple;
template <class Reduce, class... R>
struct fusion_of_tuple<Reduce, std::tuple<R...>> {
  using type = fusion<Reduce, R...>;
};

template <class Reduce, bool Substitute = true, class Body, class... S>
void with_fusion(const Body& body, const S&... s) {
  using sub = substitution<S...>;
  if constexpr (!Substitute) {
    const std::tuple<const S&...> as_written(s...);
    const std::string none;
    body(fusion_maker<fusion<Reduce, S...>, std::tuple<const S&...>>{&as_written, &none});
  } else if constexpr (sub::any) {
    const auto stmts = sub::build(s...);
    const std::string why = sub::check(stmts, s...);
    if constexpr (sub::checked) {
      if (why == "alias") {
        const std::tuple<const S&...> as_written(s...);
        const std::string none;
        body(fusion_maker<fusion<Reduce, S...>, std::tuple<const S&...>>{&as_written, &none});
        return;
      }
    }
    using T = std::remove_const_t<decltype(stmts)>;
    body(fusion_maker<typename fusion_of_tuple<Reduce, T>::type, T>{&stmts, &why});
  } else {
    const std::tuple<const S&...> as_written(s...);
    const std::string none;
    body(fusion_maker<fusion<Reduce, S...>, std::tuple<const S&...>>{&as_written, &none});
  }
}

// fuse's body: construct, run.
struct run_fused_body {
  const executor* ex;
  template <class M>
  void operator()(const M& m) const {
    m.with(no_reduce{}, [&](typename M::type& f) { f.run(*ex); });
  }
};

}  // namespace cg

/// Whether a deferred statement can share a fused kernel (its role is not
/// `alone`): `fusable_v<decltype(defer(y(i)) = x(i) + z(i))>`.
template <class S>
inline constexpr bool fusable_v = cg::fused_statement<S>::role != cg::fuse_role::alone;

/// Runs the deferred statements in order, fused into as few loop nests as
/// legality allows (see the file comment), on `ex`.
template <class... S>
void fuse(const executor& ex, const S&... s) {
  cg::check_fused_statements<S...>();
  cg::with_fusion<cg::no_reduce>(cg::run_fused_body{&ex}, s...);
}
/// fuse on the calling thread.
template <class... S>
  requires(sizeof...(S) >= 1 && (cg::is_statement<S>::value && ...))
void fuse(const S&... s) {
  fuse(serial, s...);
}

/// `fuse(keep_temporaries, [ex,] s...)`: fuse without substituting
/// temporaries into their readers; each temporary's writer computes it
/// once, into the kernel's workspace or an allocation (for an expression
/// several statements read that costs more to compute again than to
/// load, or to measure the substitution).
struct keep_temporaries_t {
  explicit keep_temporaries_t() = default;
};
inline constexpr keep_temporaries_t keep_temporaries{};

template <class... S>
void fuse(keep_temporaries_t, const executor& ex, const S&... s) {
  cg::check_fused_statements<S...>();
  cg::with_fusion<cg::no_reduce, false>(cg::run_fused_body{&ex}, s...);
}
template <class... S>
  requires(sizeof...(S) >= 1 && (cg::is_statement<S>::value && ...))
void fuse(keep_temporaries_t k, const S&... s) {
  fuse(k, serial, s...);
}

namespace cg {
// fusion_plan's body: the plan of the fusion fuse would run, as text.
struct plan_body {
  std::string* out;
  template <class M>
  void operator()(const M& m) const {
    m.with(no_reduce{}, [&](const typename M::type& f) { print(f); });
  }
  template <class F>
  void print(const F& f) const {
    std::string& o = *out;
    std::size_t n = 0;
    const auto statements = [](std::uint64_t mask) {
      std::string t;
      for (std::size_t x = 0; x < 64; ++x)
        if ((mask >> x) & 1U) t += (t.empty() ? "" : ", ") + std::to_string(x + 1);
      return t;
    };
    for (const fused_kernel& k : f.plan()) {
      o += "kernel " + std::to_string(++n) + ": ";
      if (k.fused) {
        o += "loop over " + std::to_string(k.extent) + " rows in chunks of " +
             std::to_string(fuse_rows_per_chunk(k.extent, k.group)) + ":";
        std::string sep = " ";
        for (std::size_t x = k.begin; x < k.end; ++x) {
          if (f.info()[x].dropped) continue;
          o += sep + "[" + std::to_string(x + 1) + "] " + f.info()[x].text();
          sep = "; ";
        }
      } else {
        o += "statement " + std::to_string(k.begin + 1) + " alone (its own loop nests): " + f.info()[k.begin].text();
      }
      o += "\n";
      if (!k.why_end.empty()) o += "  " + k.why_end + "\n";
    }
    for (std::size_t x = 0; x < f.info().size(); ++x) {
      const fuse_info& in = f.info()[x];
      if (!in.dropped) continue;
      o += "temporary written first by statement " + std::to_string(x + 1) + ": never allocated (" +
           (in.into != 0 ? "substituted: statement" + std::string(std::popcount(in.into) > 1 ? "s " : " ") +
                               statements(in.into) + " read its expression instead, in registers"
                         : "no statement reads it") +
           "; statement " + std::to_string(x + 1) + " does not run: " + in.text() + ")\n";
    }
    for (std::size_t x = 0; x < f.info().size(); ++x)
      if (f.info()[x].shared_text != nullptr)
        o += "statement " + std::to_string(x + 1) + " reads each copy of a substituted operand once: " +
             f.info()[x].shared_text() + "\n";
    for (const fuse_temp& t : f.temporaries()) {
      o += "temporary written first by statement " + std::to_string(t.writer + 1) + ": ";
      if (t.eliminated)
        o += "never allocated (a chunk's rows, " + std::to_string(t.row_bytes) + " bytes each, in kernel " +
             std::to_string(t.kernel + 1) + "'s per-thread workspace)\n";
      else
        o += "allocated for the call (" + std::to_string(static_cast<std::size_t>(t.rows) * t.row_bytes) +
             " bytes): " + t.why + "\n";
    }
  }
};
}  // namespace cg

/// The fused kernels `fuse(s...)` would run, one line each, and why each
/// one ends: statements are numbered from 1, tensors named t1, t2, ... by
/// their position in the statement (after substitution: a temporary's
/// expression in place of its reads). Then where each temporary lives.
template <class... S>
  requires(sizeof...(S) >= 1 && (cg::is_statement<S>::value && ...))
std::string fusion_plan(const S&... s) {
  cg::check_fuse<S...>();
  std::string out;
  cg::with_fusion<cg::no_reduce>(cg::plan_body{&out}, s...);
  return out;
}
/// The plan of `fuse(keep_temporaries, s...)`.
template <class... S>
std::string fusion_plan(keep_temporaries_t, const S&... s) {
  cg::check_fuse<S...>();
  std::string out;
  cg::with_fusion<cg::no_reduce, false>(cg::plan_body{&out}, s...);
  return out;
}

}  // namespace tensorlev
