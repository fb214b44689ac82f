#pragma once
/// @file error.hpp
/// Exceptions thrown by tensorlev for bad input. Every message names what
/// went wrong and where (dimension and entry for data; file and line for IO,
/// in io/io_error.hpp).
///
/// `tensorlev::error` derives from `std::exception`, not
/// `std::runtime_error`: the latter needs `<stdexcept>` and `<string>`,
/// about a tenth of a small kernel's compile time, in every translation
/// unit that includes a kernel (docs/design.md, "What a translation unit
/// includes"). Its message is a shared, reference-counted copy, so copying
/// an error never throws (as `std::runtime_error`'s copy).

#include <cstddef>
#include <exception>
#include <new>

#include "detail/atomic.hpp"
#include "detail/message.hpp"

namespace tensorlev {

/// Base class of every exception tensorlev throws for invalid input.
class error : public std::exception {
 public:
  explicit error(const char* what) : error(what, detail::c_length(what)) {}
  /// The first n characters of what.
  explicit error(const char* what, std::size_t n) : text_(make(what, n)) {}
  /// Text with `data()` and `size()`: a `std::string`, a
  /// `std::string_view`, a `detail::message`.
  template <detail::text_like S>
  explicit error(const S& what) : error(what.data(), static_cast<std::size_t>(what.size())) {}
  error(const error& other) noexcept : std::exception(other), text_(other.text_) {
    detail::ref_increment(count(text_));
  }
  error& operator=(const error& other) noexcept {
    detail::ref_increment(count(other.text_));  // first: other may be this
    release(text_);
    text_ = other.text_;
    return *this;
  }
  ~error() override { release(text_); }
  [[nodiscard]] const char* what() const noexcept override { return text_; }

 private:
  // One block: the owners' count, then the text and its terminator.
  static long* count(char* text) noexcept { return std::launder(reinterpret_cast<long*>(text - sizeof(long))); }
  [[gnu::cold, gnu::noinline]] static char* make(const char* s, std::size_t n) {
    char* block = static_cast<char*>(::operator new(sizeof(long) + n + 1));
    ::new (static_cast<void*>(block)) long(1);
    char* text = block + sizeof(long);
    if (n != 0) __builtin_memcpy(text, s, n);
    text[n] = '\0';
    return text;
  }
  static void release(char* text) noexcept {
    if (detail::ref_decrement(count(text)) == 0) ::operator delete(static_cast<void*>(text - sizeof(long)));
  }

  char* text_;
};

/// A coordinate is outside the tensor's dimensions, or a shape is wrong.
class shape_error : public error {
 public:
  using error::error;
};

/// A value does not fit the index type (dimension, coordinate or count).
class overflow_error : public error {
 public:
  using error::error;
};

/// Duplicate coordinates where the duplicate policy forbids them.
class duplicate_error : public error {
 public:
  using error::error;
};

}  // namespace tensorlev
