#pragma once
// Internal helpers shared by the level headers. Not part of the public API.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../level_concepts.hpp"

namespace tensorlev::detail {
/// Bytes held by a vector (its capacity, so slack would show).
template <class T>
[[nodiscard]] std::size_t vector_bytes(const std::vector<T>& v) noexcept {
  return v.capacity() * sizeof(T);
}
/// Writes x at index p, growing v by one when p == v.size() (append order;
/// the common case, a push_back).
template <class T, class I>
TENSORLEV_ALWAYS_INLINE void put_at(std::vector<T>& v, I p, const T& x) {
  const auto up = static_cast<std::size_t>(p);
  if (up == v.size()) [[likely]] {
    v.push_back(x);
  } else if (up < v.size()) {
    v[up] = x;
  } else {
    v.resize(up + 1);
    v[up] = x;
  }
}
/// Turns per-parent child counts pos[p+1] into segment bounds (Table 3's
/// append_finalize for pos arrays).
template <class I>
void counts_to_bounds(std::vector<I>& pos, I parent_size) noexcept {
  const auto n = static_cast<std::size_t>(parent_size) + 1;
  for (std::size_t p = 1; p < n; ++p) pos[p] += pos[p - 1];
}

/// a * b, or overflow_error naming `what` if the product does not fit I.
template <class I>
[[nodiscard]] constexpr I checked_mul(I a, I b, const char* what) {
  I r{};
  if (__builtin_mul_overflow(a, b, &r))
    throw overflow_error(std::string(what) + ": " + std::to_string(a) + " * " + std::to_string(b) +
                         " does not fit the index type (" + std::to_string(sizeof(I) * 8) + "-bit)");
  return r;
}
/// Loop-nest printer text of a position-iterated level: children of parent
/// position a are positions pos[a] .. pos[a+1] (compressed) or a .. a+1
/// (singleton, `single`); `crd` is the coordinate expression's suffix.
inline std::string pos_level_code(level_fn f, std::string_view l, std::string_view a, bool single,
                                  std::string_view crd_suffix) {
  const std::string L(l), A(a);
  switch (f) {
    case level_fn::pos_begin: return single ? A : L + "_pos[" + A + "]";
    case level_fn::pos_end: return single ? A + " + 1" : L + "_pos[" + A + " + 1]";
    case level_fn::pos_access: return L + "_crd[" + A + "]" + std::string(crd_suffix);
    default: return L + ".?";
  }
}
}  // namespace tensorlev::detail
