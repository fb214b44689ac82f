#pragma once
/// @file storage.hpp
/// Storage policies: *where* a level's arrays and a tensor's values live,
/// apart from *what* they mean (the level type). One definition per level
/// type serves every policy, the way mdspan separates the layout from the
/// accessor.
///
///     tensor<double, csr> A = pack<csr>(list);            // owning<>: std::vector
///     tensor<const double, csr, std::int64_t, borrowed<std::size_t, int>> B = csr_view(...);
///
/// A policy S provides
///  - `S::array<T>`: the array type of elements T. Every array has
///    `data()`, `size()` and `operator[]`; a *growable* policy's arrays also
///    have std::vector's `assign`, `resize`, `reserve`, `clear`,
///    `push_back`, `capacity` and `shrink_to_fit` (pack and generated
///    kernels assemble into them);
///  - `S::shared<T>`: an array that copies share (array-of-structs tuples
///    read by several levels; never written after assembly, so sharing is
///    unobservable). For owning storage it is reference counted;
///  - `S::pos_type<I>`, `S::crd_type<I>`: the element types of position
///    and coordinate arrays when the tensor computes with index type I
///    (positions and coordinates may differ, e.g. Kokkos Kernels'
///    `size_type` and `ordinal_type`); `void` in the policy means I;
///  - `static constexpr bool growable`, `host_accessible`.
/// Level functions read stored elements and convert them to I; data that
/// enters a level is checked to fit its stored types (overflow_error).

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "detail/algorithm.hpp"
#include "config.hpp"
#include "detail/atomic.hpp"
#include "detail/message.hpp"
#include "error.hpp"

namespace tensorlev {

/// A non-owning array: a pointer and a length over memory someone else
/// owns (T const for read-only data). Trivially copyable, so a tensor over
/// borrowed arrays may be copied bytewise into a device kernel's arguments.
template <class T>
class borrowed_array {
 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;

  constexpr borrowed_array() = default;
  TENSORLEV_HOST_DEVICE constexpr borrowed_array(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  /// From a borrowed array of U where a U* converts to a T* (adds const).
  template <class U>
    requires std::convertible_to<U (*)[], T (*)[]>
  TENSORLEV_HOST_DEVICE constexpr borrowed_array(const borrowed_array<U>& o) noexcept  // NOLINT: like a pointer
      : data_(o.data()), size_(o.size()) {}

  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr T* data() const noexcept { return data_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr std::size_t size() const noexcept { return size_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr T& operator[](std::size_t i) const noexcept { return data_[i]; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr T* begin() const noexcept { return data_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr T* end() const noexcept { return data_ + size_; }
  [[nodiscard]] TENSORLEV_HOST_DEVICE constexpr T& back() const noexcept { return data_[size_ - 1]; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// An owning array that copies share: a reference-counted growable array A
/// (std::vector, or a Kokkos View array). Writes go to the one buffer every
/// copy sees, so levels write it only while assembling a fresh one
/// (`fresh()`), before anyone shares it. Levels that read another level's
/// array (AoS lanes, DIA's offsets) hold it this way.
template <class A>
class shared_array {
 public:
  using array_type = A;
  using value_type = typename A::value_type;
  using T = value_type;

  shared_array() = default;
  explicit shared_array(A v) : b_(new box{std::move(v)}) {}
  /// From anything A is made from (a std::vector for a Kokkos View array).
  template <class U>
    requires(!std::is_same_v<std::remove_cvref_t<U>, A> && !std::is_same_v<std::remove_cvref_t<U>, shared_array> &&
             std::is_constructible_v<A, U &&>)
  explicit shared_array(U&& u) : b_(new box{A(std::forward<U>(u))}) {}
  shared_array(const shared_array& o) noexcept : b_(o.b_) {
    if (b_ != nullptr) detail::ref_increment(&b_->refs);
  }
  shared_array(shared_array&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
  shared_array& operator=(const shared_array& o) noexcept {
    shared_array(o).swap(*this);
    return *this;
  }
  shared_array& operator=(shared_array&& o) noexcept {
    shared_array(std::move(o)).swap(*this);
    return *this;
  }
  ~shared_array() { release(); }
  void swap(shared_array& o) noexcept { std::swap(b_, o.b_); }

  /// Starts a new buffer, leaving the old one to the copies that share it.
  void fresh() { shared_array(A()).swap(*this); }

  [[nodiscard]] T* data() noexcept { return b_ != nullptr ? b_->v.data() : nullptr; }
  [[nodiscard]] const T* data() const noexcept { return b_ != nullptr ? b_->v.data() : nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return b_ != nullptr ? b_->v.size() : 0; }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data()[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data()[i]; }
  [[nodiscard]] std::size_t capacity() const noexcept { return b_ != nullptr ? b_->v.capacity() : 0; }
  /// The array (created empty if there is none yet) for assembly.
  [[nodiscard]] A& vec() {
    if (b_ == nullptr) b_ = new box{A()};
    return b_->v;
  }
  [[nodiscard]] const A* get() const noexcept { return b_ != nullptr ? &b_->v : nullptr; }
  /// How many shared_arrays hold this buffer (0 without one).
  [[nodiscard]] long use_count() const noexcept {
    return b_ != nullptr ? static_cast<long>(detail::atomic_load_relaxed(&b_->refs)) : 0;
  }
  [[nodiscard]] const T* begin() const noexcept { return data(); }
  [[nodiscard]] const T* end() const noexcept { return data() + size(); }
  /// Element-wise equality with a vector.
  friend bool operator==(const shared_array& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (!(b[k] == a.data()[k])) return false;
    return true;
  }

 private:
  // The array and its count of owners, in one allocation (as
  // std::make_shared does). The count is atomic: copies of one tensor may
  // be made and dropped on several threads.
  struct box {
    A v;
    std::size_t refs = 1;
  };
  void release() noexcept {
    if (b_ != nullptr && detail::ref_decrement(&b_->refs) == 0) delete b_;
    b_ = nullptr;
  }
  box* b_ = nullptr;
};

/// A reference-counted std::vector (owning storage's shared arrays).
template <class T>
using shared_vector = shared_array<std::vector<T>>;

namespace detail {
template <class P, class I>
using or_index = std::conditional_t<std::is_void_v<P>, I, P>;

template <class T>
concept stored_integer = std::is_integral_v<std::remove_const_t<T>> && !std::is_same_v<std::remove_const_t<T>, bool>;
}  // namespace detail

template <class P, class C>
struct borrowed;

/// The default policy: arrays are std::vectors the level owns; copies are
/// deep. P and C, when given, are the stored position and coordinate
/// types (e.g. `owning<std::int64_t, std::int32_t>`: 64-bit row pointers,
/// 32-bit columns).
template <class P = void, class C = void>
struct owning {
  static_assert(std::is_void_v<P> || detail::stored_integer<P>,
                "tensorlev::owning<P, C>: the position type P must be an integer type (or void: the index type)");
  static_assert(std::is_void_v<C> || detail::stored_integer<C>,
                "tensorlev::owning<P, C>: the coordinate type C must be an integer type (or void: the index type)");
  template <class T>
  using array = std::vector<T>;
  template <class T>
  using shared = shared_vector<T>;
  template <class I>
  using pos_type = detail::or_index<P, I>;
  template <class I>
  using crd_type = detail::or_index<C, I>;
  static constexpr bool growable = true;
  static constexpr bool host_accessible = true;
  static constexpr const char* name = "owning";
  /// The borrowed storage over the same arrays (a view of such a tensor).
  using borrowed_type = borrowed<P, C>;
};

/// Arrays the user owns, viewed in place (pointer and length; see
/// borrowed_array). Read-only for levels: a tensor over borrowed arrays is
/// an operand, or a dense output written in place, never assembled. P and
/// C are the stored position and coordinate types (void: the index type).
template <class P = void, class C = void>
struct borrowed {
  static_assert(std::is_void_v<P> || detail::stored_integer<P>,
                "tensorlev::borrowed<P, C>: the position type P must be an integer type (or void: the index type)");
  static_assert(std::is_void_v<C> || detail::stored_integer<C>,
                "tensorlev::borrowed<P, C>: the coordinate type C must be an integer type (or void: the index type)");
  template <class T>
  using array = borrowed_array<T>;
  template <class T>
  using shared = borrowed_array<const T>;
  template <class I>
  using pos_type = const std::remove_const_t<detail::or_index<P, I>>;
  template <class I>
  using crd_type = const std::remove_const_t<detail::or_index<C, I>>;
  static constexpr bool growable = false;
  static constexpr bool host_accessible = true;
  static constexpr const char* name = "borrowed";
  using borrowed_type = borrowed;
};

/// Borrowed arrays B that kernels add into from concurrent threads with
/// atomic adds: the dense output of a scatter kernel (CSC SpMV, a
/// transposed access) in the device form, where a private copy of the
/// output per thread does not scale to a GPU's threads.
template <class B = borrowed<>>
struct atomic_borrowed : B {
  static constexpr bool atomic_adds = true;
  using borrowed_type = B;
};

/// The storage of a fuse temporary (fuse.hpp, `temporary`): borrowed
/// arrays that fuse points, for one call, at a chunk's rows in a per-thread
/// workspace or at values it allocates; statements outside fuse refuse a
/// tensor with it at compile time. Name tells temporaries apart by type
/// (fuse substitutes a temporary's expression where its type has one
/// writer); void by default.
template <class Name = void>
struct temporary_storage : borrowed<> {
  static constexpr bool temporary = true;
  static constexpr const char* name = "temporary";
  using borrowed_type = borrowed<>;
};

namespace detail {
template <class T>
struct is_temporary : std::false_type {};
template <class T>
  requires requires { std::remove_const_t<T>::storage::temporary; }
struct is_temporary<T> : std::bool_constant<std::remove_const_t<T>::storage::temporary> {};
/// Whether T (possibly const) is a fuse temporary's tensor.
template <class T>
inline constexpr bool is_temporary_v = is_temporary<T>::value;

template <class T>
struct atomic_adds : std::false_type {};
template <class T>
  requires requires { T::storage::atomic_adds; }
struct atomic_adds<T> : std::bool_constant<T::storage::atomic_adds> {};
/// Whether kernels add into tensor T's values atomically.
template <class T>
inline constexpr bool atomic_adds_v = atomic_adds<T>::value;
}  // namespace detail

/// S is a storage policy.
template <class S>
concept storage_policy = requires {
  typename S::template array<int>;
  typename S::template shared<int>;
  typename S::template pos_type<std::int32_t>;
  typename S::template crd_type<std::int32_t>;
  { S::growable } -> std::convertible_to<bool>;
  { S::host_accessible } -> std::convertible_to<bool>;
};

/// Whether pack and generated kernels can assemble into storage S.
template <class S>
concept growable_storage = storage_policy<S> && S::growable;

namespace detail {
/// Bytes an array holds (its capacity, so slack would show); 0 for
/// borrowed memory.
template <class A>
[[nodiscard]] std::size_t array_bytes(const A& a) noexcept {
  if constexpr (requires { a.capacity(); })
    return a.capacity() * sizeof(typename A::value_type);
  else
    return 0;
}

/// v converted to stored type T, or overflow_error naming `what` when it
/// does not fit (negative into unsigned, or past T's maximum).
template <class T, class I>
[[nodiscard]] constexpr std::remove_const_t<T> to_stored(I v, const char* what) {
  using U = std::remove_const_t<T>;
  if (!std::in_range<U>(v))
    throw overflow_error(message() << what << " " << v << " does not fit the stored type (" << sizeof(U) * 8 << "-bit "
                                   << (std::is_signed_v<U> ? "signed" : "unsigned") << ")");
  return static_cast<U>(v);
}

/// Checks that every value of stored type T can be read as index type I
/// up to `most` (the largest value the array holds): overflow_error naming
/// `what` otherwise. For unsigned or wider stored types read into I.
template <class I, class T>
void check_readable(T most, const char* what) {
  if (!std::in_range<I>(most))
    throw overflow_error(message() << what << " " << most << " does not fit the index type (" << sizeof(I) * 8
                                   << "-bit)");
}

// The index type a view over stored position type P and coordinate type C
// computes with: int32 when both are at most 32-bit signed, else int64.
template <class P, class C>
using view_index_t = std::conditional_t<(sizeof(P) <= 4 && std::is_signed_v<P> && sizeof(C) <= 4 && std::is_signed_v<C>),
                                        std::int32_t, std::int64_t>;
// Borrowed storage for stored types P and C under index type I, `void`
// where a stored type is I (so int arrays viewed with int give borrowed<>).
template <class P, class C, class I>
using borrowed_for = borrowed<std::conditional_t<std::is_same_v<P, I>, void, P>, std::conditional_t<std::is_same_v<C, I>, void, C>>;

// Array transfers, for rebinding a level to other storage (each level's
// rebinding constructor calls to.make<To>(array)).

/// Borrows: a borrowed array over the source's memory.
struct borrow_arrays {
  template <class To, class From>
  [[nodiscard]] To make(const From& a) const noexcept {
    return To(a.data(), a.size());
  }
};
/// Copies into owning host arrays (the source must be host accessible),
/// converting each element to the target's stored type with a range check.
struct copy_arrays {
  template <class To, class From>
  [[nodiscard]] To make(const From& a) const {
    using T = typename To::value_type;
    std::vector<T> v;
    v.reserve(a.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
      if constexpr (std::is_integral_v<T>)
        v.push_back(to_stored<T>(a.data()[k], "storage copy: element"));
      else
        v.push_back(static_cast<T>(a.data()[k]));
    }
    if constexpr (std::is_same_v<To, std::vector<T>>)
      return v;
    else
      return To(std::move(v));
  }
};
}  // namespace detail

}  // namespace tensorlev
