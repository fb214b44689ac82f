#pragma once
/// @file dist/io.hpp
/// Distributed tensors read from Matrix Market (`.mtx`) and FROSTT (`.tns`)
/// files: the root rank reads the file, the dimensions are broadcast, and
/// the entries are routed to their ranks by the distribution (blocked, or
/// balanced by stored entries along each partitioned dimension).
///
///     auto A = tensorlev::dist::read_matrix_market<csr, tensorlev::dist::distribution<"xy->x">>(
///         grid, "A.mtx", tensorlev::dist::split_policy::nonzeros);
///
/// A read error on the root (missing file, malformed line) is thrown as
/// io_error on every rank, with the reader's message.

#include <cstdint>
#include <string>
#include <vector>

#include "../io/frostt.hpp"
#include "../io/matrix_market.hpp"
#include "tensor.hpp"

namespace tensorlev::dist {

/// How partitioned dimensions are split: equal index ranges, or ranges
/// holding about equal numbers of stored entries (balanced_splits).
enum class split_policy : unsigned char { blocked, nonzeros };

namespace detail {
// The map for a list read on the root (dims broadcast to every rank).
template <class D, class V, class I>
distribution_map<D> map_for(const machine_grid& g, const coordinate_list<V, I>& list, bool is_root, split_policy sp) {
  std::vector<long long> dims(D::tensor_order, 0);
  if (is_root)
    for (std::size_t d = 0; d < D::tensor_order; ++d) dims[d] = list.dims()[d];
  check_mpi(MPI_Bcast(dims.data(), static_cast<int>(dims.size()), MPI_LONG_LONG, 0, g.comm()), "MPI_Bcast");
  distribution_map<D> map(dims, g.extents());
  if (sp == split_policy::nonzeros) {
    for (std::size_t m = 0; m < D::machine_order(); ++m) {
      const machine_dim& md = D::statement().machine[m];
      if (md.kind != machine_dim_kind::partition) continue;
      const std::size_t d = md.tensor_dim;
      std::vector<long long> points(static_cast<std::size_t>(g.dims()[m]) + 1);
      std::string why;
      if (is_root) {
        try {  // a count per index: the extent comes from the file, so this may not fit in memory
          std::vector<long long> count(static_cast<std::size_t>(dims[d]) + 1, 0);
          const auto& c = list.raw_coords();
          for (std::size_t e = 0; e < list.size(); ++e)
            ++count[static_cast<std::size_t>(c[e * D::tensor_order + d]) + 1];
          for (std::size_t k = 1; k < count.size(); ++k) count[k] += count[k - 1];
          points = balanced_splits<long long>(count, g.dims()[m]);
        } catch (const std::exception& e) {
          why = "balancing dimension " + std::to_string(d) + " of extent " + std::to_string(dims[d]) +
                " by stored entries failed: " + e.what();
        }
      }
      if (auto msg = first_failure(g, why.empty(), why)) throw shape_error("tensorlev::dist: " + *msg);
      check_mpi(MPI_Bcast(points.data(), static_cast<int>(points.size()), MPI_LONG_LONG, 0, g.comm()), "MPI_Bcast");
      map.set_splits(d, std::move(points));
    }
  }
  return map;
}

template <format_type F, class D, class V, class I, class Read>
dist_tensor<V, F, D, I> read_distributed(const machine_grid& g, const std::string& path, split_policy sp, Read read) {
  static_assert(D::tensor_order == F::order, "tensorlev::dist: the distribution's order differs from the format's");
  coordinate_list<V, I> list(std::vector<I>(F::order, I(0)));
  std::string why;
  const bool root = g.rank() == 0;
  if (root) {
    try {
      list = read(path);
      if (list.order() != F::order)
        why = path + ": a tensor of order " + std::to_string(list.order()) + " for a format of order " +
              std::to_string(F::order);
    } catch (const std::exception& e) {
      why = e.what();
    }
  }
  if (auto m = first_failure(g, why.empty(), why)) throw io_error(path, 0, "read on rank 0: " + *m);
  auto map = map_for<D>(g, list, root, sp);
  if (!root) {  // no entries here, but the tensor's dimensions
    std::vector<I> dims(F::order);
    for (std::size_t d = 0; d < F::order; ++d) dims[d] = checked_index<I>(map.dims()[d], "tensorlev::dist: extent");
    list = coordinate_list<V, I>(std::move(dims));
  }
  return distribute_entries<F>(g, std::move(map), list);
}
}  // namespace detail

/// A Matrix Market file distributed by D, each rank's piece in format F.
template <format_type F, class D, class V = double, index_type I = std::int32_t>
[[nodiscard]] dist_tensor<V, F, D, I> read_matrix_market(const machine_grid& g, const std::string& path,
                                                         split_policy sp = split_policy::blocked) {
  return detail::read_distributed<F, D, V, I>(g, path, sp,
                                              [](const std::string& p) { return io::read_matrix_market<V, I>(p); });
}

/// A FROSTT `.tns` file distributed by D, each rank's piece in format F.
template <format_type F, class D, class V = double, index_type I = std::int32_t>
[[nodiscard]] dist_tensor<V, F, D, I> read_frostt(const machine_grid& g, const std::string& path,
                                                  split_policy sp = split_policy::blocked) {
  return detail::read_distributed<F, D, V, I>(g, path, sp,
                                              [](const std::string& p) { return io::read_frostt<V, I>(p); });
}

}  // namespace tensorlev::dist
