#pragma once
/// @file coordinate_list.hpp
/// An unsorted list of (coordinates, value) entries of a tensor of any order:
/// the interchange type between file readers, user data and `pack`.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/message.hpp"
#include "error.hpp"

namespace tensorlev {

/// Index types tensorlev accepts for coordinates and positions.
template <class I>
concept index_type = std::is_integral_v<I> && std::is_signed_v<I> && (sizeof(I) >= 4);

/// Entries of a tensor with run-time order, stored entry-major:
/// coordinates of entry e are `coords[e*order() .. e*order()+order())`.
/// Entries may be unsorted and may repeat coordinates.
/// @pre every coordinate c of dimension d satisfies 0 <= c < dims[d]
///      (checked by `push_back` and by `pack`).
template <class V, index_type I = std::int32_t>
class coordinate_list {
 public:
  using value_type = V;
  using index_type = I;

  coordinate_list() = default;
  /// An empty list for a tensor of the given dimensions.
  explicit coordinate_list(std::vector<I> dims) : dims_(std::move(dims)) {
    for (std::size_t d = 0; d < dims_.size(); ++d)
      if (dims_[d] < 0)
        throw shape_error(detail::message() << "coordinate_list: dimension " << d << " has negative size " << dims_[d]);
  }

  /// Adopts entry-major coordinates (order() per entry) and values, checking
  /// every coordinate once. @throws shape_error naming the first bad entry.
  coordinate_list(std::vector<I> dims, std::vector<I> coords, std::vector<V> values)
      : coordinate_list(std::move(dims)) {
    const std::size_t n = order();
    if (coords.size() != values.size() * n)
      throw shape_error(detail::message() << "coordinate_list: " << coords.size() << " coordinates for "
                                          << values.size() << " values of a tensor of order " << n);
    for (std::size_t e = 0; e < values.size(); ++e)
      for (std::size_t d = 0; d < n; ++d) {
        const I c = coords[e * n + d];
        if (c < 0 || c >= dims_[d])
          throw shape_error(detail::message() << "coordinate_list: entry " << e << ": coordinate " << c
                                              << " of dimension " << d << " is outside [0, " << dims_[d] << ")");
      }
    coords_ = std::move(coords);
    values_ = std::move(values);
  }

  [[nodiscard]] std::size_t order() const noexcept { return dims_.size(); }
  [[nodiscard]] const std::vector<I>& dims() const noexcept { return dims_; }
  [[nodiscard]] std::size_t size() const noexcept { return values_.size(); }
  [[nodiscard]] bool empty() const noexcept { return values_.empty(); }

  /// Coordinates of entry e (a span of length order()).
  [[nodiscard]] std::span<const I> coords(std::size_t e) const noexcept {
    return {coords_.data() + e * order(), order()};
  }
  [[nodiscard]] const V& value(std::size_t e) const noexcept { return values_[e]; }
  [[nodiscard]] V& value(std::size_t e) noexcept { return values_[e]; }

  [[nodiscard]] const std::vector<I>& raw_coords() const noexcept { return coords_; }
  [[nodiscard]] const std::vector<V>& raw_values() const noexcept { return values_; }

  void reserve(std::size_t n) {
    coords_.reserve(n * order());
    values_.reserve(n);
  }

  /// Appends one entry. Throws shape_error if the number of coordinates is
  /// not order() or a coordinate is outside [0, dims[d]).
  void push_back(std::span<const I> c, const V& v) {
    if (c.size() != order())
      throw shape_error(detail::message() << "coordinate_list: entry " << size() << " has " << c.size()
                                          << " coordinates, the tensor has order " << order());
    for (std::size_t d = 0; d < c.size(); ++d)
      if (c[d] < 0 || c[d] >= dims_[d])
        throw shape_error(detail::message() << "coordinate_list: entry " << size() << ": coordinate " << c[d]
                                            << " of dimension " << d << " is outside [0, " << dims_[d] << ")");
    // c may point into coords_ itself (push_back(coords(e), v)): copy through
    // a small buffer when it does, since insert would then read freed memory.
    const bool aliased = !coords_.empty() && c.data() >= coords_.data() && c.data() < coords_.data() + coords_.size();
    values_.push_back(v);
    try {
      if (aliased) {
        const std::vector<I> copy(c.begin(), c.end());
        coords_.insert(coords_.end(), copy.begin(), copy.end());
      } else {
        coords_.insert(coords_.end(), c.begin(), c.end());
      }
    } catch (...) {
      values_.pop_back();
      throw;
    }
  }
  void push_back(std::initializer_list<I> c, const V& v) { push_back(std::span<const I>(c.begin(), c.size()), v); }

 private:
  std::vector<I> dims_;
  std::vector<I> coords_;
  std::vector<V> values_;
};

/// Converts a 64-bit count or coordinate to the index type I, throwing
/// overflow_error naming `what` if it does not fit.
template <index_type I>
[[nodiscard]] I checked_index(long long v, const char* what) {
  if (v < static_cast<long long>(std::numeric_limits<I>::min()) ||
      v > static_cast<long long>(std::numeric_limits<I>::max()))
    throw overflow_error(detail::message()
                         << what << " " << v << " does not fit the index type (" << sizeof(I) * 8 << "-bit)");
  return static_cast<I>(v);
}

}  // namespace tensorlev
