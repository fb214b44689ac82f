#pragma once
/// @file detail/owned.hpp
/// Owning handles without `<memory>` (see detail/atomic.hpp for why):
/// `unique_array<T>`, an array of T owned alone (the part of
/// `std::unique_ptr<T[]>` tensorlev uses), `unique_object<T>`, one T, and
/// `unique_erased`, one object of a type the holder forgets.

#include <cstddef>
#include <utility>

namespace tensorlev::detail {

template <class T>
class unique_array {
 public:
  unique_array() = default;
  /// n value-initialized elements (zeros for arithmetic T).
  [[nodiscard]] static unique_array zeroed(std::size_t n) { return unique_array(new T[n]()); }
  /// n default-initialized elements (indeterminate for arithmetic T), to be
  /// written before they are read.
  [[nodiscard]] static unique_array for_overwrite(std::size_t n) { return unique_array(new T[n]); }

  unique_array(unique_array&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  unique_array& operator=(unique_array&& o) noexcept {
    if (this != &o) {
      delete[] p_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  unique_array(const unique_array&) = delete;
  unique_array& operator=(const unique_array&) = delete;
  ~unique_array() { delete[] p_; }

  [[nodiscard]] T* get() const noexcept { return p_; }
  [[nodiscard]] T& operator[](std::size_t i) const noexcept { return p_[i]; }
  [[nodiscard]] explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  explicit unique_array(T* p) noexcept : p_(p) {}
  T* p_ = nullptr;
};

template <class T>
class unique_object {
 public:
  unique_object() = default;
  /// Takes ownership of p (from `new T(...)`).
  explicit unique_object(T* p) noexcept : p_(p) {}
  unique_object(unique_object&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  unique_object& operator=(unique_object&& o) noexcept {
    if (this != &o) {
      delete p_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  unique_object(const unique_object&) = delete;
  unique_object& operator=(const unique_object&) = delete;
  ~unique_object() { delete p_; }

  [[nodiscard]] T* get() const noexcept { return p_; }
  [[nodiscard]] T& operator*() const noexcept { return *p_; }
  [[nodiscard]] T* operator->() const noexcept { return p_; }

 private:
  T* p_ = nullptr;
};

class unique_erased {
 public:
  unique_erased() = default;
  /// Takes ownership of p (from `new T(...)`).
  template <class T>
  [[nodiscard]] static unique_erased adopt(T* p) noexcept {
    unique_erased e;
    e.p_ = p;
    e.del_ = [](void* q) noexcept { delete static_cast<T*>(q); };
    return e;
  }
  unique_erased(unique_erased&& o) noexcept : p_(std::exchange(o.p_, nullptr)), del_(o.del_) {}
  unique_erased& operator=(unique_erased&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      del_ = o.del_;
    }
    return *this;
  }
  unique_erased(const unique_erased&) = delete;
  unique_erased& operator=(const unique_erased&) = delete;
  ~unique_erased() { reset(); }

 private:
  void reset() noexcept {
    if (p_ != nullptr) del_(std::exchange(p_, nullptr));
  }
  void* p_ = nullptr;
  void (*del_)(void*) noexcept = nullptr;
};

}  // namespace tensorlev::detail
