#pragma once
/// @file codegen/output/stream.hpp
/// Output policy `stream` (every other format: ELL, DIA, BCSR, CSB outputs;
/// DCSR/COO when reductions sit between output variables; CSR when the
/// loops cannot visit the output in order): (coordinates, value) pairs are
/// collected in loop order and assembled by `pack`, which sorts and sums.
/// Serial on every executor.

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct stream_output : output_base<S> {
  using V = typename S::V;
  using I = typename S::I;
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
  static void run(St& st, const Cs& cs, const executor&) {
    auto* o = std::get<0>(st.ops);
    using T = typename S::template op_t<0>;
    coordinate_list<V, I> sink(std::vector<I>(o->dims().begin(), o->dims().end()));
    if constexpr (S::accumulate) sink = to_coordinate_list(*o);
    st.out.sink = &sink;
    V unused{};
    K::template loop<0, 0>(st, cs, unused);
    *o = pack<typename T::format_type, typename T::storage>(sink, duplicates::sum);
  }
};

}  // namespace tensorlev::cg
