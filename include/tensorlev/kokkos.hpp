#pragma once
/// @file kokkos.hpp
/// Generated kernels on a Kokkos execution space (link `tensorlev::kokkos`).
///
///     Kokkos::ScopeGuard kokkos(argc, argv);
///     tensorlev::compute(tensorlev::kokkos_executor<Kokkos::OpenMP>{}, y(i), A(i, j) * x(j));
///
/// The kernel's chunks (execution.hpp) become the iterations of one
/// `Kokkos::parallel_for` with a dynamic schedule over the space; the call
/// returns after the space is fenced. Host execution spaces only for now:
/// the tensors' level arrays live in host memory (std::vector).
///
/// Arrays held in Kokkos Views (in any memory space) are used through
/// non-owning tensor views (view.hpp): `vector_view(v)` over a rank-1 View,
/// `csr_view(rows, cols, row_map, entries, values)` over the three arrays of
/// a CSR matrix (the layout of KokkosSparse::CrsMatrix). Kernels over them
/// run on an executor whose space can reach that memory.

#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "error.hpp"
#include "execution.hpp"
#include "formats.hpp"
#include "view.hpp"

namespace tensorlev {

/// An executor on a Kokkos execution space. Must outlive the kernels it
/// runs (a temporary in the `compute` call does).
template <class Space = Kokkos::DefaultHostExecutionSpace>
class kokkos_executor {
  static_assert(Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible,
                "tensorlev::kokkos_executor: the execution space must reach host memory (tensors live in host "
                "memory for now)");

 public:
  using execution_space = Space;
  explicit kokkos_executor(Space space = Space()) : space_(std::move(space)) {}

  // NOLINTNEXTLINE(google-explicit-constructor): converts where an executor is expected
  operator executor() const noexcept {
    return executor(this, &run, static_cast<std::size_t>(space_.concurrency()));
  }
  [[nodiscard]] const Space& space() const noexcept { return space_; }

 private:
  static void run(const void* self, std::size_t n, executor::chunk_fn fn, void* ctx) {
    const auto& me = *static_cast<const kokkos_executor*>(self);
    Kokkos::parallel_for("tensorlev::kernel",
                         Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>(me.space_, 0, n),
                         [=](std::size_t c) { fn(ctx, c); });
    me.space_.fence();
  }
  Space space_;
};

namespace detail {
template <class View>
inline constexpr bool is_rank1_view_v = Kokkos::is_view<View>::value && View::rank == 1;

inline void check_extent(const char* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string("tensorlev::csr_view: ") + what + " has " + std::to_string(got) +
                                " entries, expected " + std::to_string(want));
}
}  // namespace detail

/// A dense vector viewing a rank-1 Kokkos View (a const value type gives a
/// read-only operand; a non-const one may be a kernel's output). Index type
/// I must hold the extent.
template <index_type I = std::int32_t, class View>
[[nodiscard]] tensor_view<typename View::value_type, dense_vector, I> vector_view(const View& v) {
  static_assert(detail::is_rank1_view_v<View>, "tensorlev::vector_view: needs a rank-1 Kokkos::View");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft> ||
                    std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "tensorlev::vector_view: the View must be contiguous (LayoutLeft or LayoutRight)");
  const auto n = checked_index<I>(static_cast<long long>(v.extent(0)), "tensorlev::vector_view: extent");
  using V = typename View::value_type;
  return tensor_view<V, dense_vector, I>({n}, {dense_level<I>(n)}, std::span<V>(v.data(), v.extent(0)));
}

/// A CSR matrix viewing three rank-1 Kokkos Views: row_map (rows + 1
/// offsets), entries (column of each stored value) and values, which must
/// outlive the view. Row offsets and columns may have different integer
/// types (KokkosSparse::CrsMatrix's size_type and ordinal_type); the view
/// computes with int32 when both are 32-bit signed, int64 otherwise. Only
/// the extents are checked here (the arrays may live in memory the host
/// cannot read): their contents must encode a valid CSR matrix (sorted,
/// unique columns in each row).
template <class RowMap, class Entries, class Values>
  requires(Kokkos::is_view<RowMap>::value && Kokkos::is_view<Entries>::value && Kokkos::is_view<Values>::value)
[[nodiscard]] auto csr_view(long long rows, long long cols, const RowMap& row_map, const Entries& entries,
                            const Values& values) {
  static_assert(detail::is_rank1_view_v<RowMap> && detail::is_rank1_view_v<Entries> && detail::is_rank1_view_v<Values>,
                "tensorlev::csr_view: row_map, entries and values must be rank-1 Kokkos::Views");
  using P = typename RowMap::non_const_value_type;
  using C = typename Entries::non_const_value_type;
  static_assert(std::is_integral_v<P> && std::is_integral_v<C>,
                "tensorlev::csr_view: row_map and entries must hold integers");
  using I = detail::view_index_t<P, C>;
  using V = typename Values::value_type;
  using S = detail::borrowed_for<P, C, I>;
  const I m = checked_index<I>(rows, "tensorlev::csr_view: rows");
  const I n = checked_index<I>(cols, "tensorlev::csr_view: columns");
  if (m < 0 || n < 0) throw std::invalid_argument("tensorlev::csr_view: negative dimension");
  detail::check_extent("row_map", row_map.extent(0), static_cast<std::size_t>(m) + 1);
  detail::check_extent("values", values.extent(0), entries.extent(0));
  (void)checked_index<I>(static_cast<long long>(entries.extent(0)), "tensorlev::csr_view: number of entries");
  if (!std::in_range<C>(cols))
    throw overflow_error("tensorlev::csr_view: " + std::to_string(cols) + " columns do not fit the entries' type");
  using view_t = tensor<V, csr, I, S>;
  using levels_t = typename view_t::level_tuple;
  using comp = std::tuple_element_t<1, levels_t>;
  return view_t({m, n},
                levels_t(dense_level<I>(m), comp(n, typename comp::pos_array(row_map.data(), row_map.extent(0)),
                                                 typename comp::crd_array(entries.data(), entries.extent(0)))),
                std::span<V>(values.data(), values.extent(0)));
}

}  // namespace tensorlev
