#pragma once
/// @file detail/atomic.hpp
/// The few atomic operations the host code needs (a relaxed add on a
/// counter or an output entry, a reference count, a spin lock's flag), on
/// plain objects through the compiler's `__atomic` builtins (GCC, Clang,
/// and NVCC's host compiler). With GCC 12 in C++20, `<atomic>` and
/// `<memory>` bring wait/notify, threads, clocks and `<ostream>` into every
/// translation unit that includes a kernel (docs/design.md, "What a
/// translation unit includes"). Defining TENSORLEV_USE_STD_ATOMIC, or a
/// compiler without the builtins, takes `std::atomic_ref` instead (tested).
/// The two sets live in different inline namespaces, so translation units
/// that differ in the macro link into one program without two definitions
/// of one function (both are lock-free operations on the same objects).

#include <type_traits>

#if defined(TENSORLEV_USE_STD_ATOMIC) || !(defined(__GNUC__) || defined(__clang__))
#define TENSORLEV_STD_ATOMIC 1
#include <atomic>
#endif

namespace tensorlev::detail {
#ifdef TENSORLEV_STD_ATOMIC
inline namespace std_atomic {
#else
inline namespace builtin_atomic {
#endif

/// `*p += v` as one relaxed atomic operation; returns the old value. T is
/// an integer or a floating-point type (a compare-exchange loop, as
/// `std::atomic_ref<double>::fetch_add` does).
template <class T>
inline T atomic_fetch_add_relaxed(T* p, T v) noexcept {
  static_assert(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>);
#ifdef TENSORLEV_STD_ATOMIC
  return std::atomic_ref<T>(*p).fetch_add(v, std::memory_order_relaxed);
#else
  if constexpr (std::is_integral_v<T>) {
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  } else {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T next = old + v;
    while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) next = old + v;
    return old;
  }
#endif
}

/// `*p` read atomically (relaxed).
template <class T>
inline T atomic_load_relaxed(T* p) noexcept {
  static_assert(std::is_integral_v<T>);
#ifdef TENSORLEV_STD_ATOMIC
  return std::atomic_ref<T>(*p).load(std::memory_order_relaxed);
#else
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/// A reference count's increment (relaxed: the new owner already holds a
/// reference) and decrement (acquire-release: the last owner sees every
/// other owner's writes before it destroys the object); the decrement
/// returns the count left.
template <class T>
inline void ref_increment(T* count) noexcept {
  static_assert(std::is_integral_v<T>);
  (void)atomic_fetch_add_relaxed(count, T{1});
}
template <class T>
inline T ref_decrement(T* count) noexcept {
  static_assert(std::is_integral_v<T>);
#ifdef TENSORLEV_STD_ATOMIC
  return std::atomic_ref<T>(*count).fetch_sub(1, std::memory_order_acq_rel) - 1;
#else
  return __atomic_sub_fetch(count, T{1}, __ATOMIC_ACQ_REL);
#endif
}

/// A spin lock over a flag (an `unsigned char`, zero when free), held for
/// a few instructions at a time: the scratch pools' push and pop.
class spin_guard {
 public:
  explicit spin_guard(unsigned char& flag) noexcept : flag_(flag) {
#ifdef TENSORLEV_STD_ATOMIC
    std::atomic_ref<unsigned char> f(flag_);
    unsigned char expected = 0;
    while (!f.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed)) expected = 0;
#else
    while (__atomic_exchange_n(&flag_, static_cast<unsigned char>(1), __ATOMIC_ACQUIRE) != 0) {
    }
#endif
  }
  ~spin_guard() {
#ifdef TENSORLEV_STD_ATOMIC
    std::atomic_ref<unsigned char>(flag_).store(0, std::memory_order_release);
#else
    __atomic_store_n(&flag_, static_cast<unsigned char>(0), __ATOMIC_RELEASE);
#endif
  }
  spin_guard(const spin_guard&) = delete;
  spin_guard& operator=(const spin_guard&) = delete;

 private:
  unsigned char& flag_;
};

}  // inline namespace
}  // namespace tensorlev::detail
