#pragma once
/// @file io/io_error.hpp
/// The exception the readers and writers throw (io/matrix_market.hpp,
/// io/frostt.hpp, dist/io.hpp). It lives here, not in error.hpp, because
/// it holds its file name as a `std::string` and error.hpp stays off
/// `<string>` (docs/design.md, "What a translation unit includes").

#include <string>
#include <utility>

#include "../error.hpp"

namespace tensorlev {

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
