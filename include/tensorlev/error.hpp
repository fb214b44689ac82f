#pragma once
/// @file error.hpp
/// Exceptions thrown by tensorlev for bad input. Every message names what
/// went wrong and where (file and line for IO, dimension and entry for data).

#include <stdexcept>
#include <string>

namespace tensorlev {

/// Base class of every exception tensorlev throws for invalid input.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

/// A file could not be read or written, or its contents are malformed.
/// `what()` reads `<file>:<line>: <problem>`; `file()` and `line()` give the
/// parts (line 0 when the problem is not tied to one line).
class io_error : public error {
 public:
  io_error(std::string file, long line, const std::string& problem)
      : error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + problem),
        file_(std::move(file)),
        line_(line) {}
  [[nodiscard]] const std::string& file() const noexcept { return file_; }
  [[nodiscard]] long line() const noexcept { return line_; }

 private:
  std::string file_;
  long line_;
};

}  // namespace tensorlev
