#pragma once
/// @file print.hpp
/// Readable text for formats and tensors.
///
///     to_string<csr>()     ->  "CSR = (dense d0, compressed d1)"
///     to_string<coo>()     ->  "COO = (compressed{non-unique} d0, singleton d1)"
///     to_string<dia>()     ->  "DIA = (dense diag(d1-d0), range d0, offset d1)"
///     std::cout << A;      // header line, then one "(i,j): v" line per stored component

#include <complex>
#include <cstddef>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "format.hpp"
#include "tensor.hpp"

namespace tensorlev {

namespace detail {
inline std::string map_label(const level_map_info& m) {
  const std::string d = "d" + std::to_string(m.dim);
  switch (m.kind) {
    case map_kind::mode: return d;
    case map_kind::block_outer: return d + "/" + std::to_string(m.block);
    case map_kind::block_inner: return d + "%" + std::to_string(m.block);
    case map_kind::diagonal: return "diag(d" + std::to_string(m.dim2) + "-" + d + ")";
    case map_kind::slot: return "slot(" + d + ")";
  }
  return d;
}

template <class L>
std::string level_label() {
  std::string s(L::name);
  std::string props;
  if (!L::is_unique) props += "non-unique";
  if (!L::is_ordered) props += std::string(props.empty() ? "" : ",") + "unordered";
  // Full is the nature of value-iterated levels (dense); on a position-
  // iterated level it is a configured promise worth showing.
  if (L::is_full && pos_iterable_level<L>) props += std::string(props.empty() ? "" : ",") + "full";
  return props.empty() ? s : s + "{" + props + "}";
}
}  // namespace detail

template <format_type F>
std::string to_string() {
  using LT = typename F::template level_tuple<std::int32_t>;
  std::string s;
  if constexpr (requires { F::name; }) s = std::string(F::name) + " = ";
  s += "(";
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    ((s += (K ? ", " : "") + detail::level_label<std::tuple_element_t<K, LT>>() + " " +
           detail::map_label(F::maps[K])),
     ...);
  }(std::make_index_sequence<F::num_levels>{});
  return s + ")";
}

/// Prints a header line (value type size, dimensions, format, stored count)
/// then every stored component as "(c0,c1,...): value", in storage order.
template <class V, class F, class I>
std::ostream& operator<<(std::ostream& os, const tensor<V, F, I>& t) {
  os << "tensor ";
  for (std::size_t d = 0; d < F::order; ++d) os << (d ? "x" : "") << t.dimension(d);
  os << " " << to_string<F>() << ", " << t.stored() << " stored\n";
  for_each_component(t, [&](const auto& x, const V& v) {
    os << "  (";
    for (std::size_t d = 0; d < F::order; ++d) os << (d ? "," : "") << x[d];
    os << "): " << v << "\n";
  });
  return os;
}

/// The tensor as text (see operator<<).
template <class V, class F, class I>
std::string to_string(const tensor<V, F, I>& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

}  // namespace tensorlev
