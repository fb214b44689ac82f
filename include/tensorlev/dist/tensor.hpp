#pragma once
/// @file dist/tensor.hpp
/// Distributed tensors: each rank of a machine grid holds an ordinary
/// tensorlev tensor (any format) for its box of a global tensor, placed by a
/// distribution (dist/notation.hpp).
///
///     using rows = tensorlev::dist::distribution<"xy->x">;
///     tensorlev::dist::distribution_map<rows> map({m, n}, grid.extents());
///     auto A = tensorlev::dist::distribute<csr>(grid, map, rank == 0 ? &global : nullptr);
///     A.local()            // a tensor<double, csr>: rows A.box()->lo[0] .. hi[0], all columns
///     auto G = tensorlev::dist::gather<csr>(A);             // the global tensor on rank 0
///     auto B = tensorlev::dist::redistribute<dense_row_major>(A, other_map);  // all-to-all
///
/// Local coordinates are global ones minus the box's lower corner. Every
/// function here is collective over the grid; an error found on one rank
/// (a global tensor of the wrong shape, a map for another grid) is thrown
/// on every rank with the same message, so no rank is left waiting.

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../coordinate_list.hpp"
#include "../format.hpp"
#include "../pack.hpp"
#include "../tensor.hpp"
#include "grid.hpp"
#include "notation.hpp"

namespace tensorlev::dist {

/// Collective: nullopt if `ok` holds on every rank of the grid, else the
/// lowest failing rank's message with its rank (on every rank). Control
/// traffic, not counted in the grid's stats.
inline std::optional<std::string> first_failure(const machine_grid& g, bool ok, const std::string& message) {
  int first_bad = ok ? g.size() : g.rank();
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &first_bad, 1, MPI_INT, MPI_MIN, g.comm()), "MPI_Allreduce");
  if (first_bad == g.size()) return std::nullopt;
  int len = first_bad == g.rank() ? static_cast<int>(message.size()) : 0;
  check_mpi(MPI_Bcast(&len, 1, MPI_INT, first_bad, g.comm()), "MPI_Bcast");
  std::string text = first_bad == g.rank() ? message : std::string(static_cast<std::size_t>(len), ' ');
  check_mpi(MPI_Bcast(text.data(), len, MPI_CHAR, first_bad, g.comm()), "MPI_Bcast");
  return text + " (reported by rank " + std::to_string(first_bad) + ")";
}

/// Throws shape_error on every rank if `ok` is false on any (collective).
inline void agree(const machine_grid& g, bool ok, const std::string& message) {
  if (auto m = first_failure(g, ok, message)) throw shape_error(*m);
}

namespace detail {
// "" when the map fits the grid and index type I; else why not.
template <class I, class D>
std::string check_map(const machine_grid& g, const distribution_map<D>& m, const char* fn) {
  if (m.machine() != g.extents())
    return std::string("tensorlev::dist::") + fn + ": distribution <" + std::string(D::text) +
           "> is for another machine shape than the " + g.shape_string() + " grid";
  for (std::size_t d = 0; d < m.dims().size(); ++d)
    if (m.dims()[d] > static_cast<long long>(std::numeric_limits<I>::max()))
      return std::string("tensorlev::dist::") + fn + ": extent " + std::to_string(m.dims()[d]) + " of dimension " +
             std::to_string(d) + " does not fit the index type (" + std::to_string(sizeof(I) * 8) + "-bit)";
  return {};
}

// Throws shape_error(message) on every rank unless every rank passed the
// same value (collective).
inline void agree_on_value(const machine_grid& g, unsigned long long v, const std::string& message) {
  unsigned long long h[2] = {v, ~v};
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, h, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, g.comm()), "MPI_Allreduce");
  if (h[1] != ~h[0]) throw shape_error(message);  // max(v) and max(~v) agree only if every v is the same
}
// FNV-1a over a sequence of integers.
struct value_hash {
  unsigned long long h = 1469598103934665603ULL;
  void mix(long long v) {
    h ^= static_cast<unsigned long long>(v);
    h *= 1099511628211ULL;
  }
};

// A hash of a map's extents and split points, to check that every rank
// passed the same one.
template <class D>
unsigned long long map_hash(const distribution_map<D>& m) {
  value_hash h;
  for (long long x : m.dims()) h.mix(x);
  for (long long x : m.machine()) h.mix(x);
  for (std::size_t d = 0; d < m.dims().size(); ++d) {
    h.mix(-1);
    for (long long x : m.splits(d)) h.mix(x);
  }
  return h.h;
}

// Throws on every rank unless every rank holds the same map.
template <class D>
void agree_on_map(const machine_grid& g, const distribution_map<D>& m, const char* fn) {
  agree_on_value(g, map_hash(m),
                 std::string("tensorlev::dist::") + fn + ": the ranks passed different distribution maps "
                 "(extents or split points differ; set the same splits on every rank)");
}
}  // namespace detail

// Index notation over distributed tensors: `C(i,j) = A(i,k) * B(k,j)`
// builds a dist_assignment, which dist::compute (compute.hpp) runs as the
// engine's statement under a schedule. Only products of accesses are
// distributed statements (the engine's leaf is their product).
template <class T, char... C>
struct dist_access;
template <class... A>
struct dist_product {
  std::tuple<A...> ops;
};
template <class Out, class Rhs>
struct dist_assignment {
  Out out;
  Rhs rhs;
};
namespace detail {
template <class T>
struct is_dist_operand : std::false_type {};
template <class T, char... C>
struct is_dist_operand<dist_access<T, C...>> : std::true_type {};
template <class... A>
struct is_dist_operand<dist_product<A...>> : std::true_type {};
template <class T>
inline constexpr bool dist_operand_v = is_dist_operand<std::remove_cvref_t<T>>::value;
template <class T>
auto dist_factors(const T& a) {
  if constexpr (requires { a.ops; }) return a.ops;
  else return std::tuple<T>(a);
}
template <class T>
inline constexpr bool no_dist_sums_v = false;  // a dependent false for static_assert
}  // namespace detail
/// `t(i, j, ...)` of a dist_tensor (T const for an input): points to t.
template <class T, char... C>
struct dist_access {
  T* tensor;
  // NOLINTNEXTLINE(google-explicit-constructor): t(i, j) returns {this}
  constexpr dist_access(T* t) noexcept : tensor(t) {}
  constexpr dist_access(const dist_access&) noexcept = default;
  /// out(...) = rhs (a product of accesses, or one access).
  template <class R>
  dist_assignment<dist_access, R> operator=(const R& rhs) const {
    static_assert(!std::is_const_v<T>, "tensorlev::dist: the output of a statement must not be const");
    static_assert(detail::dist_operand_v<R>,
                  "tensorlev::dist: the right-hand side of a distributed statement is a product of dist_tensor "
                  "accesses, e.g. C(i,j) = A(i,k) * B(k,j)");
    return {*this, rhs};
  }
  dist_assignment<dist_access, dist_access> operator=(const dist_access& rhs) const {  // a copy statement
    return operator= <dist_access>(rhs);
  }
};
/// The product of accesses (and products of them).
template <class L, class R>
  requires(detail::dist_operand_v<L> && detail::dist_operand_v<R>)
auto operator*(const L& l, const R& r) {
  return std::apply([](const auto&... f) { return dist_product<std::remove_cvref_t<decltype(f)>...>{{f...}}; },
                    std::tuple_cat(detail::dist_factors(l), detail::dist_factors(r)));
}
/// Sums, differences and negation of accesses: a readable error.
template <class L, class R>
  requires(detail::dist_operand_v<L> || detail::dist_operand_v<R>)
void operator+(const L&, const R&) {
  static_assert(detail::no_dist_sums_v<L>,
                "tensorlev::dist: a distributed statement is a product of accesses (C(i,j) = A(i,k) * B(k,j)); "
                "sums, differences and negation run as separate statements");
}
template <class L, class R>
  requires(detail::dist_operand_v<L> || detail::dist_operand_v<R>)
void operator-(const L&, const R&) {
  static_assert(detail::no_dist_sums_v<L>,
                "tensorlev::dist: a distributed statement is a product of accesses (C(i,j) = A(i,k) * B(k,j)); "
                "sums, differences and negation run as separate statements");
}
template <class L>
  requires(detail::dist_operand_v<L>)
void operator-(const L&) {
  static_assert(detail::no_dist_sums_v<L>,
                "tensorlev::dist: a distributed statement is a product of accesses (C(i,j) = A(i,k) * B(k,j)); "
                "sums, differences and negation run as separate statements");
}

/// A rank's piece of a distributed tensor of value type V in format F,
/// placed by distribution D on a machine grid.
template <class V, format_type F, class D, index_type I = std::int32_t>
class dist_tensor {
  static_assert(D::tensor_order == F::order,
                "tensorlev::dist::dist_tensor: the distribution names a different number of tensor dimensions "
                "than the format's order");
  static_assert(D::levels == 1,
                "tensorlev::dist::dist_tensor: hierarchical distributions are not supported by distributed tensors "
                "yet (level 0 places pieces on ranks; inside a rank, run the local kernels on an executor, e.g. "
                "a Kokkos one)");

 public:
  using value_type = V;
  using format_type = F;
  using distribution_type = D;
  using index_type = I;
  using map_type = distribution_map<D>;
  using local_type = tensor<V, F, I>;
  static constexpr std::size_t order = F::order;

  /// Adopts this rank's piece. @throws shape_error (on every rank) if the
  /// map is for another machine shape or the piece's dimensions are not
  /// its box's extents.
  dist_tensor(const machine_grid& g, map_type map, local_type local)
      : grid_(&g), map_(std::move(map)), local_(std::move(local)) {
    std::string why = detail::check_map<I>(g, map_, "dist_tensor");
    if (why.empty()) {
      box_ = map_.box_of(g.coord_vector());
      for (std::size_t d = 0; d < order && why.empty(); ++d) {
        const long long want = box_ ? box_->extent(d) : 0;
        if (static_cast<long long>(local_.dimension(d)) != want)
          why = "tensorlev::dist::dist_tensor: rank " + std::to_string(g.rank()) + "'s piece has extent " +
                std::to_string(local_.dimension(d)) + " in dimension " + std::to_string(d) + ", its box " +
                std::to_string(want);
      }
    }
    agree(g, why.empty(), why);
    detail::agree_on_map(g, map_, "dist_tensor");
  }

  [[nodiscard]] const machine_grid& grid() const noexcept { return *grid_; }
  [[nodiscard]] const map_type& map() const noexcept { return map_; }
  [[nodiscard]] const std::vector<long long>& dims() const noexcept { return map_.dims(); }
  [[nodiscard]] local_type& local() noexcept { return local_; }
  [[nodiscard]] const local_type& local() const noexcept { return local_; }
  /// This rank's box of global coordinates (nullopt: it holds nothing).
  [[nodiscard]] const std::optional<block_box>& box() const noexcept { return box_; }
  [[nodiscard]] bool holds() const noexcept { return box_.has_value(); }
  /// Global coordinate of local coordinate 0 in dimension d.
  [[nodiscard]] long long offset(std::size_t d) const noexcept { return box_ ? box_->lo[d] : 0; }
  /// Whether this rank's piece is the copy that gather reads (broadcast
  /// copies other than index 0 are not).
  [[nodiscard]] bool owner() const { return holds() && map_.is_owner(grid_->coord_vector()); }
  /// `t(i, j, ...)`: an access in index notation, for dist::compute's
  /// statements (C(i,j) = A(i,k) * B(k,j)); one variable per dimension.
  template <char... C>
  [[nodiscard]] dist_access<dist_tensor, C...> operator()(index_var<C>...) {
    static_assert(sizeof...(C) == order, "tensorlev::dist: access a dist_tensor with one index variable per dimension");
    return {this};
  }
  template <char... C>
  [[nodiscard]] dist_access<const dist_tensor, C...> operator()(index_var<C>...) const {
    static_assert(sizeof...(C) == order, "tensorlev::dist: access a dist_tensor with one index variable per dimension");
    return {this};
  }

 private:
  const machine_grid* grid_;
  map_type map_;
  local_type local_;
  std::optional<block_box> box_;
};

namespace detail {
// Entries bound for each rank: local coordinates (relative to the
// destination's box) and values.
template <class V, class I>
struct routed {
  std::vector<std::vector<I>> coords;
  std::vector<std::vector<V>> values;
  explicit routed(int ranks) : coords(static_cast<std::size_t>(ranks)), values(static_cast<std::size_t>(ranks)) {}
};

template <class D>
std::vector<std::optional<block_box>> boxes_by_rank(const machine_grid& g, const distribution_map<D>& m) {
  std::vector<std::optional<block_box>> boxes;
  boxes.reserve(static_cast<std::size_t>(g.size()));
  for (int r = 0; r < g.size(); ++r) boxes.push_back(m.box_of(g.coords_of(r)));
  return boxes;
}

// Routes entry (x, v) (global coordinates) to every rank holding it under m.
template <class V, class I, class D>
void route(const machine_grid& g, const distribution_map<D>& m, const std::vector<std::optional<block_box>>& boxes,
           std::span<const long long> x, const V& v, routed<V, I>& out) {
  for (const auto& p : m.processors_of(m.color_of(x))) {
    const int r = g.rank_of(p);
    const auto ur = static_cast<std::size_t>(r);
    const block_box& b = *boxes[ur];
    for (std::size_t d = 0; d < x.size(); ++d) out.coords[ur].push_back(static_cast<I>(x[d] - b.lo[d]));
    out.values[ur].push_back(v);
  }
}

// Exchanges routed entries and packs this rank's piece in format F.
template <format_type F, class V, class I, class D>
tensor<V, F, I> exchange_and_pack(const machine_grid& g, const distribution_map<D>& m, routed<V, I>& out) {
  std::vector<I> coords = g.alltoallv(out.coords);
  std::vector<V> values = g.alltoallv(out.values);
  const auto box = m.box_of(g.coord_vector());
  std::vector<I> dims(F::order, I(0));
  if (box)
    for (std::size_t d = 0; d < F::order; ++d) dims[d] = static_cast<I>(box->extent(d));  // checked by check_map
  // Whether a piece fits the format depends on this rank's data: agree on
  // the outcome so that a failure here is thrown on every rank.
  std::optional<tensor<V, F, I>> piece;
  std::string why;
  try {
    coordinate_list<V, I> list(std::move(dims), std::move(coords), std::move(values));
    piece.emplace(pack<F>(list, duplicates::sum));
  } catch (const std::exception& e) {
    why = "rank " + std::to_string(g.rank()) + "'s piece: " + e.what();
  }
  if (auto msg = first_failure(g, why.empty(), why)) throw shape_error("tensorlev::dist: packing a piece failed: " + *msg);
  return std::move(*piece);
}


}  // namespace detail

/// Distributes `global` (read on `root` only; pass nullptr elsewhere) by
/// `map` (the same on every rank): each rank receives its box in format F.
template <format_type F, class D, class V, class G, index_type I>
[[nodiscard]] dist_tensor<V, F, D, I> distribute(const machine_grid& g, distribution_map<D> map,
                                                 const tensor<V, G, I>* global, int root = 0) {
  static_assert(G::order == F::order, "tensorlev::dist::distribute: the global tensor's order differs from F's");
  std::string why = detail::check_map<I>(g, map, "distribute");
  if (why.empty() && (root < 0 || root >= g.size()))
    why = "tensorlev::dist::distribute: root " + std::to_string(root) + " is not a rank of the grid";
  if (why.empty() && g.rank() == root) {
    if (global == nullptr) why = "tensorlev::dist::distribute: no global tensor on the root rank";
    else
      for (std::size_t d = 0; d < F::order && why.empty(); ++d)
        if (static_cast<long long>(global->dimension(d)) != map.dims()[d])
          why = "tensorlev::dist::distribute: the global tensor's dimension " + std::to_string(d) + " is " +
                std::to_string(global->dimension(d)) + ", the distribution's " + std::to_string(map.dims()[d]);
  }
  agree(g, why.empty(), why);
  detail::routed<V, I> out(g.size());
  if (g.rank() == root) {
    const auto boxes = detail::boxes_by_rank(g, map);
    std::vector<long long> x(F::order);
    for_each_component(*global, [&](const auto& c, const V& v) {
      for (std::size_t d = 0; d < F::order; ++d) x[d] = c[d];
      detail::route(g, map, boxes, std::span<const long long>(x), v, out);
    });
  }
  auto local = detail::exchange_and_pack<F>(g, map, out);
  return dist_tensor<V, F, D, I>(g, std::move(map), std::move(local));
}

/// Builds a distributed tensor from per-rank parts: each rank passes the
/// entries it has (global coordinates, anywhere in the tensor), and they
/// are routed to the ranks that hold them under `map` (duplicates summed).
template <format_type F, class D, class V, index_type I>
[[nodiscard]] dist_tensor<V, F, D, I> distribute_entries(const machine_grid& g, distribution_map<D> map,
                                                         const coordinate_list<V, I>& mine) {
  std::string why = detail::check_map<I>(g, map, "distribute_entries");
  if (why.empty() && mine.order() != F::order)
    why = "tensorlev::dist::distribute_entries: entries of order " + std::to_string(mine.order()) + " for order " +
          std::to_string(F::order);
  for (std::size_t d = 0; d < mine.order() && why.empty(); ++d)
    if (static_cast<long long>(mine.dims()[d]) != map.dims()[d])
      why = "tensorlev::dist::distribute_entries: rank " + std::to_string(g.rank()) + "'s entries have dimension " +
            std::to_string(d) + " = " + std::to_string(mine.dims()[d]) + ", the distribution " +
            std::to_string(map.dims()[d]);
  agree(g, why.empty(), why);
  detail::routed<V, I> out(g.size());
  const auto boxes = detail::boxes_by_rank(g, map);
  std::vector<long long> x(F::order);
  const auto& c = mine.raw_coords();
  const auto& v = mine.raw_values();
  for (std::size_t e = 0; e < v.size(); ++e) {
    for (std::size_t d = 0; d < F::order; ++d) x[d] = c[e * F::order + d];
    detail::route(g, map, boxes, std::span<const long long>(x), v[e], out);
  }
  auto local = detail::exchange_and_pack<F>(g, map, out);
  return dist_tensor<V, F, D, I>(g, std::move(map), std::move(local));
}

/// Moves a distributed tensor to another distribution and format (one
/// all-to-all; the owner copy of each piece sends).
template <format_type F2, class D2, class V, class F, class D, index_type I>
[[nodiscard]] dist_tensor<V, F2, D2, I> redistribute(const dist_tensor<V, F, D, I>& t, distribution_map<D2> map) {
  static_assert(F2::order == F::order, "tensorlev::dist::redistribute: the target format's order differs");
  const machine_grid& g = t.grid();
  std::string why = detail::check_map<I>(g, map, "redistribute");
  if (why.empty() && map.dims() != t.dims())
    why = "tensorlev::dist::redistribute: the target distribution is for a tensor of other dimensions";
  agree(g, why.empty(), why);
  detail::routed<V, I> out(g.size());
  if (t.owner()) {
    const auto boxes = detail::boxes_by_rank(g, map);
    std::vector<long long> x(F::order);
    for_each_component(t.local(), [&](const auto& c, const V& v) {
      for (std::size_t d = 0; d < F::order; ++d) x[d] = c[d] + t.offset(d);
      detail::route(g, map, boxes, std::span<const long long>(x), v, out);
    });
  }
  auto local = detail::exchange_and_pack<F2>(g, map, out);
  return dist_tensor<V, F2, D2, I>(g, std::move(map), std::move(local));
}

/// The global tensor in format G on `root` (nullopt elsewhere).
template <format_type G, class V, class F, class D, index_type I>
[[nodiscard]] std::optional<tensor<V, G, I>> gather(const dist_tensor<V, F, D, I>& t, int root = 0) {
  const machine_grid& g = t.grid();
  agree(g, root >= 0 && root < g.size(),
        "tensorlev::dist::gather: root " + std::to_string(root) + " is not a rank of the grid");
  detail::routed<V, I> out(g.size());
  const auto ur = static_cast<std::size_t>(root);
  if (t.owner())
    for_each_component(t.local(), [&](const auto& c, const V& v) {
      for (std::size_t d = 0; d < F::order; ++d) out.coords[ur].push_back(static_cast<I>(c[d] + t.offset(d)));
      out.values[ur].push_back(v);
    });
  std::vector<I> coords = g.alltoallv(out.coords);
  std::vector<V> values = g.alltoallv(out.values);
  if (g.rank() != root) return std::nullopt;
  std::vector<I> dims(F::order);
  for (std::size_t d = 0; d < F::order; ++d) dims[d] = static_cast<I>(t.dims()[d]);
  return pack<G>(coordinate_list<V, I>(std::move(dims), std::move(coords), std::move(values)), duplicates::sum);
}

}  // namespace tensorlev::dist
