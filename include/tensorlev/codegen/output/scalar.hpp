#pragma once
/// @file codegen/output/scalar.hpp
/// Output policy `scalar` (order-0 outputs, `s() = ...`): the loops sum into
/// one accumulator. In parallel each chunk of loop 0 sums into its own
/// partial, and the partials are added in chunk order, so the result does
/// not depend on the number of threads.

#include "common.hpp"

namespace tensorlev::cg {

template <class S>
struct scalar_output : output_base<S> {
  using V = typename S::V;
  using I = typename S::I;
  static constexpr par_kind par = S::outer_splittable ? par_kind::scalar : par_kind::none;

  template <class K, class St, class Cs>
  static void run(St& st, const Cs& cs, const executor& ex) {
    auto* o = std::get<0>(st.ops);
    if constexpr (!S::accumulate) o->value() = V{};
    V acc{};
    if constexpr (par != par_kind::none) {
      if (ex.parallel()) {
        acc = run_chunked<K>(st, cs, ex);
        o->value() += acc;
        return;
      }
    }
    K::template loop<0, 0>(st, cs, acc);
    o->value() += acc;
  }

  // The device form (kernel::run_device): the chunks' partials summed by
  // the launcher, added to the scalar on the host.
  template <class K, class St, class L>
  static void run_device(const St& host, const St& st, const L& dev) {
    const auto fn = K::device_fn(st);
    const V acc = dev.template sum<V>(fn.n, fn);
    auto* o = std::get<0>(host.ops);
    if constexpr (!S::accumulate) o->value() = V{};
    o->value() += acc;
  }

  // Loop 0 in chunks, a partial sum each, added in chunk order.
  template <class K, class St, class Cs>
  static V run_chunked(const St& st, const Cs& cs, const executor& ex) {
    const auto bounds = K::chunk_bounds(st, cs);
    std::vector<V> partial(bounds.empty() ? 0 : bounds.size() - 1, V{});
    K::for_chunks(st, bounds, ex, [&](std::size_t c, St& local) {
      V acc{};
      K::template loop<0, 0>(local, cs, acc);
      partial[c] = acc;
    });
    V sum{};
    for (const V& v : partial) sum += v;
    return sum;
  }
};

}  // namespace tensorlev::cg
