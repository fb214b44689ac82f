#pragma once
/// @file detail/message.hpp
/// The text of an error message, built by appending: strings, characters,
/// integers and anything with `data()` and `size()` (a `std::string`, a
/// `std::string_view`). The headers on a kernel's include path build their
/// messages with this instead of `std::string` and `std::to_string`: those
/// bring `<string>` (about a tenth of a small kernel's compile time), and
/// their instantiations were most of a small kernel's object code and its
/// optimizer's time (docs/design.md, "What a translation unit includes").
/// The text grows as needed: a message is never cut.

#include <cstddef>
#include <new>
#include <type_traits>

namespace tensorlev::detail {

/// Length of a C string (no `<cstring>`).
inline std::size_t c_length(const char* s) noexcept { return __builtin_strlen(s); }

/// Types a message appends as text: those with `data()` convertible to
/// `const char*` and `size()`.
template <class S>
concept text_like = requires(const S& s) {
  s.size();
  requires std::is_convertible_v<decltype(s.data()), const char*>;
};

class message {
 public:
  message() noexcept = default;
  message(const message&) = delete;
  message& operator=(const message&) = delete;
  ~message() {
    if (data_ != local_) ::operator delete(data_);
  }

  message& append(const char* s, std::size_t n) {
    reserve(n);
    for (std::size_t k = 0; k < n; ++k) data_[n_ + k] = s[k];
    n_ += n;
    data_[n_] = '\0';
    return *this;
  }
  message& operator<<(const char* s) { return append(s, c_length(s)); }
  message& operator<<(char c) { return append(&c, 1); }
  template <text_like S>
  message& operator<<(const S& s) {
    return append(s.data(), static_cast<std::size_t>(s.size()));
  }
  /// Integers in decimal, up to 64 bits (a wider type is refused, not cut).
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
  message& operator<<(T v) {
    static_assert(sizeof(T) <= sizeof(unsigned long long),
                  "tensorlev: a message prints integers of at most 64 bits");
    if constexpr (std::is_signed_v<T>) {
      // The magnitude in unsigned arithmetic: -LLONG_MIN does not fit.
      if (v < 0) return put_unsigned(0ULL - static_cast<unsigned long long>(v), true);
    }
    return put_unsigned(static_cast<unsigned long long>(v), false);
  }

  [[nodiscard]] const char* c_str() const noexcept { return data_; }
  [[nodiscard]] const char* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

 private:
  message& put_unsigned(unsigned long long v, bool negative) {
    char digits[21];
    std::size_t k = sizeof digits;
    do {
      digits[--k] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    if (negative) digits[--k] = '-';
    return append(digits + k, sizeof digits - k);
  }
  void reserve(std::size_t extra) {
    if (extra < cap_ - n_) return;  // room for the text and its terminator
    std::size_t cap = 2 * cap_;
    if (cap - n_ <= extra) cap = n_ + extra + 1;
    char* grown = static_cast<char*>(::operator new(cap));
    for (std::size_t k = 0; k <= n_; ++k) grown[k] = data_[k];
    if (data_ != local_) ::operator delete(data_);
    data_ = grown;
    cap_ = cap;
  }

  char local_[256] = {};
  char* data_ = local_;
  std::size_t cap_ = sizeof local_;
  std::size_t n_ = 0;
};

}  // namespace tensorlev::detail
