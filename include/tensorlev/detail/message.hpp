#pragma once
/// @file detail/message.hpp
/// A bounded message buffer for the errors the generated kernels raise: text
/// and integers appended into a fixed array, handed to the exception as a
/// C string. The kernel's include path builds its messages with this instead
/// of std::string and std::to_string, whose instantiations were most of a
/// small kernel's object code and of its optimizer's time
/// (docs/design.md, "What a translation unit includes").

#include <cstddef>

namespace tensorlev::detail {

class message {
 public:
  static constexpr std::size_t capacity = 511;

  message& operator<<(const char* s) noexcept {
    while (*s != '\0' && n_ < capacity) buf_[n_++] = *s++;
    buf_[n_] = '\0';
    return *this;
  }
  message& operator<<(char c) noexcept {
    if (n_ < capacity) buf_[n_++] = c;
    buf_[n_] = '\0';
    return *this;
  }
  message& operator<<(unsigned long long v) noexcept {
    char digits[20];
    std::size_t k = 0;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k > 0 && n_ < capacity) buf_[n_++] = digits[--k];
    buf_[n_] = '\0';
    return *this;
  }
  message& operator<<(long long v) noexcept {
    if (v < 0) {
      *this << '-';
      // The magnitude in unsigned arithmetic: -LLONG_MIN does not fit.
      return *this << (0ULL - static_cast<unsigned long long>(v));
    }
    return *this << static_cast<unsigned long long>(v);
  }
  message& operator<<(unsigned long v) noexcept { return *this << static_cast<unsigned long long>(v); }
  message& operator<<(long v) noexcept { return *this << static_cast<long long>(v); }
  message& operator<<(unsigned v) noexcept { return *this << static_cast<unsigned long long>(v); }
  message& operator<<(int v) noexcept { return *this << static_cast<long long>(v); }

  [[nodiscard]] const char* c_str() const noexcept { return buf_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }

 private:
  char buf_[capacity + 1] = {};
  std::size_t n_ = 0;
};

}  // namespace tensorlev::detail
