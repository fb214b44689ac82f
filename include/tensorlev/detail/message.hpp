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

/// Anything else is refused at compile time: a bool, an enumeration, a
/// floating-point value (std::to_string printed those; this prints none
/// rather than one converted character), an integer wider than 64 bits.
class message {
 public:
  message() noexcept { local_[0] = '\0'; }
  message(const message&) = delete;
  message& operator=(const message&) = delete;
  ~message() {
    if (data_ != local_) ::operator delete(data_);
  }

  /// Appends s[0, n); s may point into this message's own text. Out of
  /// line (as are the integers and the growth): inlined into every `<<` of
  /// every message, these were 7% of one SpMV's compile.
  [[gnu::noinline]] message& append(const char* s, std::size_t n) {
    if (n < cap_ - n_) {  // room for the text and its terminator
      if (n != 0) __builtin_memcpy(data_ + n_, s, n);  // s may be in [data_, data_ + n_), never past
    } else {
      grow(s, n);
    }
    n_ += n;
    data_[n_] = '\0';
    return *this;
  }
  message& operator<<(const char* s) { return append(s, c_length(s)); }
  template <class C>
    requires std::is_same_v<C, char>
  message& operator<<(C c) {
    return append(&c, 1);
  }
  template <text_like S>
  message& operator<<(const S& s) {
    return append(s.data(), static_cast<std::size_t>(s.size()));
  }
  /// Integers in decimal, up to 64 bits.
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
  [[gnu::noinline]] message& put_unsigned(unsigned long long v, bool negative) {
    char digits[21];
    std::size_t k = sizeof digits;
    do {
      digits[--k] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    if (negative) digits[--k] = '-';
    return append(digits + k, sizeof digits - k);
  }
  // A buffer for n_ + n characters and the terminator holding the text and
  // s[0, n); the old buffer is freed only after s is copied (s may be in it).
  [[gnu::cold, gnu::noinline]] void grow(const char* s, std::size_t n) {
    std::size_t cap = 2 * cap_;
    if (cap - n_ <= n) cap = n_ + n + 1;
    char* grown = static_cast<char*>(::operator new(cap));
    __builtin_memcpy(grown, data_, n_);
    if (n != 0) __builtin_memcpy(grown + n_, s, n);
    if (data_ != local_) ::operator delete(data_);
    data_ = grown;
    cap_ = cap;
  }

  char local_[256];
  char* data_ = local_;
  std::size_t cap_ = sizeof local_;
  std::size_t n_ = 0;
};

}  // namespace tensorlev::detail
