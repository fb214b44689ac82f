#pragma once
/// @file codegen/output/stream.hpp
/// Output policy `stream` (every other format: ELL, DIA, BCSR, CSB outputs;
/// DCSR/COO when reductions sit between output variables; CSR when the
/// loops cannot visit the output in order): (coordinates, value) pairs are
/// collected in loop order and assembled by `pack`, which sorts and sums.
/// On a parallel executor, when loop 0 can be cut, each chunk collects its
/// own list; the lists are joined in chunk order (the serial order, so the
/// same sums) and packed. The pack itself is serial.

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct stream_output : output_base<S> {
  using V = typename S::V;
  using I = typename S::I;
  static constexpr par_kind par = S::outer_splittable ? par_kind::stream : par_kind::none;
  static constexpr bool device_form = false;  // a host list, then pack
  struct data {
    coordinate_list<V, I>* sink = nullptr;
  };

  // Every output variable is bound: one (coordinates, value) pair.
  template <class St, class Cs>
  static void emit(St& st, const Cs&, const V& value) {
    constexpr std::size_t N = S::D.acc[0].order;
    std::array<I, N> x;
    for (std::size_t d = 0; d < N; ++d) x[d] = st.var_val[S::var_index(S::D.acc[0].vars[d])];
    st.out.sink->push_back(std::span<const I>(x), value);
  }

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    std::vector<I> dims(o->dims().begin(), o->dims().end());
    coordinate_list<V, I> sink(dims);
    if constexpr (S::accumulate) sink = to_coordinate_list(*o);
    if constexpr (par == par_kind::stream) {
      if (ex.parallel()) {
        const auto bounds = K::chunk_bounds(st, cs);
        const std::size_t n = bounds.empty() ? 0 : bounds.size() - 1;
        std::vector<coordinate_list<V, I>> lists(n, coordinate_list<V, I>(dims));
        K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
          local.out.sink = &lists[c];
          V target{};
          K::template loop<0, 0>(local, cs, target);
        });
        std::vector<I> coords(sink.raw_coords());
        std::vector<V> values(sink.raw_values());
        std::size_t total = values.size();
        for (const auto& l : lists) total += l.size();
        coords.reserve(total * dims.size());
        values.reserve(total);
        for (auto& l : lists) {
          coords.insert(coords.end(), l.raw_coords().begin(), l.raw_coords().end());
          values.insert(values.end(), l.raw_values().begin(), l.raw_values().end());
          l = coordinate_list<V, I>();  // free it now
        }
        *o = pack<typename T::format_type, typename T::storage>(
            coordinate_list<V, I>(std::move(dims), std::move(coords), std::move(values)), duplicates::sum);
        return;
      }
    }
    st.out.sink = &sink;
    V unused{};
    K::template loop<0, 0>(st, cs, unused);
    *o = pack<typename T::format_type, typename T::storage>(sink, duplicates::sum);
  }
};

}  // namespace tensorlev::cg
