#pragma once
/// @file matrix_market.hpp
/// Reading and writing Matrix Market (`.mtx`) files: `coordinate` and `array`
/// formats, fields `real`, `integer`, `complex` and `pattern`, symmetries
/// `general`, `symmetric`, `skew-symmetric` and `hermitian` (expanded to both
/// triangles on read). Every malformed input throws `tensorlev::io_error`
/// whose `what()` reads `<file>:<line>: <problem>`.
///
/// Values are parsed with `std::from_chars` and written with the shortest
/// `std::to_chars` form, so `read_matrix_market(write_matrix_market(x))`
/// reproduces every value bit for bit (NaN payloads aside).

#include <algorithm>
#include <array>
#include <charconv>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "../coordinate_list.hpp"
#include "io_error.hpp"

namespace tensorlev::io {

namespace detail {

// ---------------------------------------------------------------------------
// Value types.

template <class T>
struct is_complex : std::false_type {};
template <class T>
struct is_complex<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex<T>::value;

template <class V>
struct real_of {
  using type = V;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class V>
using real_of_t = typename real_of<V>::type;

/// Integer types `std::from_chars` and `std::to_chars` accept.
template <class V>
inline constexpr bool is_plain_integer_v =
    std::is_integral_v<V> && !std::is_same_v<V, bool> && !std::is_same_v<V, wchar_t> &&
    !std::is_same_v<V, char8_t> && !std::is_same_v<V, char16_t> && !std::is_same_v<V, char32_t>;

template <class V>
inline constexpr bool is_floating_v = std::is_same_v<V, float> || std::is_same_v<V, double>;

/// The value types the readers and writers accept.
template <class V>
inline constexpr bool is_io_value_v = is_plain_integer_v<V> || is_floating_v<V> ||
                                      std::is_same_v<V, std::complex<float>> ||
                                      std::is_same_v<V, std::complex<double>>;

inline constexpr const char* io_value_message =
    "tensorlev::io: the value type must be float, double, std::complex<float>, std::complex<double> "
    "or an integer type (not bool or a character type)";

template <class R>
constexpr const char* real_name() {
  if constexpr (std::is_same_v<R, float>)
    return "float";
  else if constexpr (std::is_same_v<R, double>)
    return "double";
  else
    return "the integer value type";
}

// ---------------------------------------------------------------------------
// Errors.

[[noreturn]] inline void fail(const std::string& file, long line, const std::string& problem) {
  throw io_error(file, line, problem);
}

/// A token quoted for an error message: at most 40 characters, bytes outside
/// printable ASCII escaped as \xNN.
inline std::string quote(std::string_view t) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string s = "'";
  const std::size_t n = std::min<std::size_t>(t.size(), 40);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if (c >= 0x20 && c < 0x7f) {
      s += static_cast<char>(c);
    } else {
      s += "\\x";
      s += hex[c >> 4];
      s += hex[c & 15];
    }
  }
  if (t.size() > n) s += "...";
  return s + "'";
}

template <class I>
std::string index_bits() {
  return std::to_string(sizeof(I) * 8) + "-bit";
}

// ---------------------------------------------------------------------------
// Input: lines and tokens.

/// Reads an istream in large blocks and hands out one line at a time, without
/// the line terminator ("\n" or "\r\n"). Counts lines from 1. Turns off the
/// stream's exception mask while it reads and restores it afterwards.
class line_reader {
 public:
  line_reader(std::istream& in, const std::string& name) : in_(in), name_(name), saved_(in.exceptions()) {
    in_.exceptions(std::ios_base::goodbit);
    buf_.resize(std::size_t{1} << 18);
  }
  line_reader(const line_reader&) = delete;
  line_reader& operator=(const line_reader&) = delete;
  ~line_reader() {
    try {
      in_.clear(in_.rdstate() & ~saved_);  // never throw from here
      in_.exceptions(saved_);
    } catch (...) {
    }
  }

  /// The next line, or false at the end of input.
  bool next(std::string_view& line) {
    for (;;) {
      const char* b = buf_.data() + pos_;
      const auto* nl = static_cast<const char*>(std::memchr(b, '\n', end_ - pos_));
      if (nl != nullptr) {
        const auto len = static_cast<std::size_t>(nl - b);
        line = std::string_view(b, len);
        pos_ += len + 1;
        return take(line);
      }
      if (eof_) {
        if (pos_ == end_) return false;
        line = std::string_view(b, end_ - pos_);
        pos_ = end_;
        return take(line);
      }
      refill();
    }
  }

  /// Number of the line `next` returned last (0 before the first).
  [[nodiscard]] long line() const noexcept { return line_; }

 private:
  bool take(std::string_view& line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_;
    return true;
  }
  void refill() {
    if (pos_ > 0) {
      std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
      end_ -= pos_;
      pos_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);  // a line longer than the buffer
    in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
    const auto got = static_cast<std::size_t>(in_.gcount());
    end_ += got;
    if (in_.bad()) fail(name_, line_ + 1, "read error");
    eof_ = got == 0;
  }

  std::istream& in_;
  const std::string& name_;
  std::ios_base::iostate saved_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
  long line_ = 0;
};

constexpr bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// Splits a line at whitespace into `out` (cleared first).
inline void split(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  const std::size_t n = s.size();
  for (;;) {
    while (i < n && is_space(s[i])) ++i;
    if (i == n) return;
    const std::size_t b = i;
    while (i < n && !is_space(s[i])) ++i;
    out.push_back(s.substr(b, i - b));
  }
}

inline std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return r;
}

// ---------------------------------------------------------------------------
// Numbers.

enum class parse_status { ok, invalid, out_of_range };

/// Parses a whole token as an integer (an optional leading '+' is accepted).
template <class T>
parse_status parse_integer(std::string_view tok, T& out) noexcept {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (b != e && *b == '+') {
    ++b;
    if (b == e || *b == '-') return parse_status::invalid;
  }
  const auto [p, ec] = std::from_chars(b, e, out);
  if (p != e) return parse_status::invalid;
  if (ec == std::errc::result_out_of_range) return parse_status::out_of_range;
  if (ec != std::errc{}) return parse_status::invalid;
  return parse_status::ok;
}

/// For a well-formed decimal number that does not fit a floating type: true if
/// it is too large (overflow), false if it is too small (underflow).
inline bool is_too_large(std::string_view t) noexcept {
  std::size_t i = 0;
  const std::size_t n = t.size();
  if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
  long long int_digits = 0;
  long long leading_zeros = 0;
  bool nonzero = false;
  for (; i < n && t[i] >= '0' && t[i] <= '9'; ++i)
    if (nonzero || t[i] != '0') {
      nonzero = true;
      ++int_digits;
    }
  if (i < n && t[i] == '.')
    for (++i; i < n && t[i] >= '0' && t[i] <= '9'; ++i)
      if (!nonzero) {
        if (t[i] == '0')
          ++leading_zeros;
        else
          nonzero = true;
      }
  long long exp = 0;
  if (i < n && (t[i] == 'e' || t[i] == 'E' || t[i] == 'd' || t[i] == 'D')) {
    ++i;
    const bool neg = i < n && t[i] == '-';
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    const auto [p, ec] = std::from_chars(t.data() + i, t.data() + n, exp);
    (void)p;
    if (ec == std::errc::result_out_of_range) return !neg;
    if (neg) exp = -exp;
  }
  constexpr long long big = 1LL << 60;
  if (exp > big) return true;
  if (exp < -big) return false;
  return (int_digits > 0 ? exp + int_digits : exp - leading_zeros) > 0;
}

/// Parses a whole token as float or double: decimal, "inf", "infinity",
/// "nan" (any case, optional sign), Fortran exponents ("1.5D+03").
/// Values below the smallest subnormal become a signed zero (correct rounding);
/// values above the largest finite value are out_of_range.
template <class R>
parse_status parse_real(std::string_view tok, R& out) noexcept {
  const char* b = tok.data();
  const char* e = b + tok.size();
  if (b != e && *b == '+') {
    ++b;
    if (b == e || *b == '-' || *b == '+') return parse_status::invalid;
  }
  auto [p, ec] = std::from_chars(b, e, out, std::chars_format::general);
  if (p != e || ec == std::errc::invalid_argument) {
    // Fortran-style exponent: retry with 'D' replaced by 'e'.
    const std::size_t len = static_cast<std::size_t>(e - b);
    const void* d1 = std::memchr(b, 'D', len);
    const void* d2 = std::memchr(b, 'd', len);
    if ((d1 == nullptr && d2 == nullptr) || len > 120) return parse_status::invalid;
    std::array<char, 128> tmp{};
    for (std::size_t i = 0; i < len; ++i) tmp[i] = (b[i] == 'D' || b[i] == 'd') ? 'e' : b[i];
    const auto r = std::from_chars(tmp.data(), tmp.data() + len, out, std::chars_format::general);
    if (r.ptr != tmp.data() + len || r.ec == std::errc::invalid_argument) return parse_status::invalid;
    ec = r.ec;
  }
  if (ec == std::errc::result_out_of_range) {
    if (is_too_large(tok)) return parse_status::out_of_range;
    out = (tok.front() == '-') ? -R(0) : R(0);
  }
  return parse_status::ok;
}

/// Reads `count` value tokens as V. `field` names the file's field: 'r' real,
/// 'i' integer, 'c' complex (two tokens), 'p' pattern (no token).
template <class V>
V parse_value(const std::string_view* tok, char field, const std::string& file, long line) {
  using R = real_of_t<V>;
  auto real_part = [&](std::string_view t, const char* what) -> R {
    if constexpr (is_plain_integer_v<R>) {
      R v{};
      switch (parse_integer(t, v)) {
        case parse_status::ok:
          return v;
        case parse_status::invalid:
          fail(file, line, std::string(what) + " " + quote(t) + " is not an integer");
        case parse_status::out_of_range:
          fail(file, line, std::string(what) + " " + quote(t) + " does not fit the value type");
      }
      return v;
    } else {
      if (field == 'i') {
        long long v = 0;
        switch (parse_integer(t, v)) {
          case parse_status::ok:
            return static_cast<R>(v);
          case parse_status::invalid:
            fail(file, line, std::string(what) + " " + quote(t) + " is not an integer");
          case parse_status::out_of_range:
            fail(file, line, std::string(what) + " " + quote(t) + " is out of range of a 64-bit integer");
        }
        return R(0);
      }
      R v{};
      switch (parse_real(t, v)) {
        case parse_status::ok:
          return v;
        case parse_status::invalid:
          fail(file, line, std::string(what) + " " + quote(t) + " is not a number");
        case parse_status::out_of_range:
          fail(file, line, std::string(what) + " " + quote(t) + " is out of range for " + real_name<R>());
      }
      return v;
    }
  };
  if (field == 'p') return V(1);
  if constexpr (is_complex_v<V>) {
    if (field == 'c') return V(real_part(tok[0], "real part"), real_part(tok[1], "imaginary part"));
    return V(real_part(tok[0], "value"), R(0));
  } else {
    return real_part(tok[0], "value");
  }
}

/// Parses a 1-based coordinate and returns it 0-based.
/// `what` names it in messages ("row index"); `dim` is its upper bound.
template <index_type I>
I parse_coordinate(std::string_view t, long long dim, const std::string& what, const char* base_note,
                   const std::string& file, long line) {
  long long v = 0;
  switch (parse_integer(t, v)) {
    case parse_status::ok:
      break;
    case parse_status::invalid:
      fail(file, line, what + " " + quote(t) + " is not an integer");
    case parse_status::out_of_range:
      if (t.front() == '-')
        fail(file, line, what + " " + std::string(t) + " is out of range [1, " + std::to_string(dim) + "]; " + base_note);
      fail(file, line, what + " " + std::string(t) + " does not fit the index type (" + index_bits<I>() + ")");
  }
  if (v > static_cast<long long>(std::numeric_limits<I>::max()))
    fail(file, line, what + " " + std::to_string(v) + " does not fit the index type (" + index_bits<I>() + ")");
  if (v < 1)
    fail(file, line,
         what + " " + std::to_string(v) + " is out of range [1, " + std::to_string(dim) + "]; " + base_note);
  if (v > dim)
    fail(file, line, what + " " + std::to_string(v) + " is out of range [1, " + std::to_string(dim) + "]");
  return static_cast<I>(v - 1);
}

/// Parses a non-negative size that must fit I.
template <index_type I>
long long parse_size(std::string_view t, const char* what, const std::string& file, long line) {
  long long v = 0;
  switch (parse_integer(t, v)) {
    case parse_status::ok:
      break;
    case parse_status::invalid:
      fail(file, line, std::string(what) + " " + quote(t) + " is not an integer");
    case parse_status::out_of_range:
      if (t.front() == '-') fail(file, line, std::string(what) + " " + std::string(t) + " is negative");
      fail(file, line, std::string(what) + " " + std::string(t) + " does not fit the index type (" + index_bits<I>() + ")");
  }
  if (v < 0) fail(file, line, std::string(what) + " " + std::to_string(v) + " is negative");
  if (v > static_cast<long long>(std::numeric_limits<I>::max()))
    fail(file, line,
         std::string(what) + " " + std::to_string(v) + " does not fit the index type (" + index_bits<I>() + ")");
  return v;
}

/// Entries to reserve for a declared count: the declared count, but never more
/// than 2^20 up front, so that a corrupt header cannot claim much memory
/// (larger files grow the vectors geometrically).
inline std::size_t reserve_hint(long long declared) {
  return static_cast<std::size_t>(std::clamp<long long>(declared, 0, 1LL << 20));
}

// ---------------------------------------------------------------------------
// Output.

/// Buffers formatted text and writes it to a stream in large blocks.
class text_writer {
 public:
  text_writer(std::ostream& out, const std::string& name) : out_(out), name_(name) { buf_.reserve(kBlock + 256); }

  void put(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kBlock) flush();
  }
  void put(char c) { buf_.push_back(c); }

  template <class T>
  void number(T v) {
    std::array<char, 64> tmp{};
    const auto r = std::to_chars(tmp.data(), tmp.data() + tmp.size(), v);
    buf_.append(tmp.data(), r.ptr);
  }

  /// Writes a value: one number, or "real imaginary" for complex V.
  template <class V>
  void value(const V& v) {
    if constexpr (is_complex_v<V>) {
      number(v.real());
      put(' ');
      number(v.imag());
    } else {
      number(v);
    }
  }

  /// Ends a line; flushes when the buffer is full.
  void end_line() {
    buf_.push_back('\n');
    if (buf_.size() >= kBlock) flush();
  }

  void finish() {
    flush();
    out_.flush();
    if (!out_) fail(name_, 0, "write error");
  }

 private:
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    if (!out_) fail(name_, 0, "write error");
  }

  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  std::ostream& out_;
  const std::string& name_;
  std::string buf_;
};

/// Opens `path` for binary reading, or throws io_error naming it.
inline std::ifstream open_input(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(path, 0, "cannot open file for reading: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, 0, "cannot open file for reading");
  return in;
}

/// Opens `path` for binary writing, or throws io_error naming it.
inline std::ofstream open_output(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, 0, "cannot open file for writing");
  return out;
}

}  // namespace detail

// ---------------------------------------------------------------------------
// Header.

/// The banner and size line of a Matrix Market file.
struct mm_header {
  enum class object_kind { matrix, vector };
  enum class format_kind { coordinate, array };
  enum class field_kind { real, integer, complex, pattern };
  enum class symmetry_kind { general, symmetric, skew_symmetric, hermitian };

  object_kind object = object_kind::matrix;
  format_kind format = format_kind::coordinate;
  field_kind field = field_kind::real;
  symmetry_kind symmetry = symmetry_kind::general;
  long long rows = 0;     ///< rows (vector: its length)
  long long cols = 0;     ///< columns (vector: 1)
  long long entries = 0;  ///< entries stored in the file, before symmetric expansion
};

/// Banner keywords, as written in a file: "matrix", "coordinate", "real",
/// "skew-symmetric", ...
[[nodiscard]] constexpr const char* to_string(mm_header::object_kind k) noexcept {
  return k == mm_header::object_kind::matrix ? "matrix" : "vector";
}
[[nodiscard]] constexpr const char* to_string(mm_header::format_kind k) noexcept {
  return k == mm_header::format_kind::coordinate ? "coordinate" : "array";
}
[[nodiscard]] constexpr const char* to_string(mm_header::field_kind k) noexcept {
  switch (k) {
    case mm_header::field_kind::real:
      return "real";
    case mm_header::field_kind::integer:
      return "integer";
    case mm_header::field_kind::complex:
      return "complex";
    case mm_header::field_kind::pattern:
      return "pattern";
  }
  return "?";
}
[[nodiscard]] constexpr const char* to_string(mm_header::symmetry_kind k) noexcept {
  switch (k) {
    case mm_header::symmetry_kind::general:
      return "general";
    case mm_header::symmetry_kind::symmetric:
      return "symmetric";
    case mm_header::symmetry_kind::skew_symmetric:
      return "skew-symmetric";
    case mm_header::symmetry_kind::hermitian:
      return "hermitian";
  }
  return "?";
}
/// The banner line of a header, e.g. "%%MatrixMarket matrix coordinate real symmetric".
[[nodiscard]] inline std::string to_string(const mm_header& h) {
  return std::string("%%MatrixMarket ") + to_string(h.object) + " " + to_string(h.format) + " " +
         to_string(h.field) + " " + to_string(h.symmetry);
}

// ---------------------------------------------------------------------------
// Reading.

/// Reads a Matrix Market file from a stream; `name` is the file name used in
/// error messages.
///
/// A matrix gives a coordinate_list of order 2 with dims {rows, cols}; a
/// `vector` object gives order 1. `coordinate` entries appear in file order;
/// `array` entries in column-major order, every stored value included (zeros
/// too). Symmetric, skew-symmetric and hermitian files store the lower triangle
/// only; each off-diagonal entry (i, j) is followed by its mirror (j, i) with
/// the same value, the negated value, or the conjugate (hermitian with complex V;
/// with real V hermitian reads as symmetric). `pattern` entries get the value 1.
/// Integer fields read into any V; real fields into floating or complex V;
/// complex fields into complex V only.
///
/// @pre V is float, double, std::complex<float|double> or an integer type.
/// @post every coordinate is 0-based and inside dims; the number of entries
///       (after expansion) fits I. `*header_out`, if given, holds the header.
/// @throws io_error "<name>:<line>: <problem>" for any malformed input: bad or
///         missing banner, bad size line, negative sizes, sizes or indices that
///         do not fit I, indices out of range (Matrix Market is 1-based),
///         non-numeric tokens, wrong field counts, fewer or more entries than
///         declared, entries above the diagonal of a symmetric file, diagonal
///         entries of a skew-symmetric file, complex values for a real V, real
///         values above the largest finite value of V (underflow gives ±0).
///
/// Example:
/// @code
///   std::istringstream s("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 4\n2 1 -1\n");
///   auto a = tensorlev::io::read_matrix_market<double>(s, "a.mtx");
///   // a.dims() == {2, 2}; entries (0,0)=4, (1,0)=-1, (0,1)=-1
/// @endcode
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_matrix_market(std::istream& in, const std::string& name,
                                                       mm_header* header_out = nullptr) {
  static_assert(detail::is_io_value_v<V>, "read_matrix_market: the value type must be float, double, "
                                          "std::complex<float>, std::complex<double> or an integer type");
  using detail::fail;
  using H = mm_header;
  detail::line_reader rd(in, name);
  std::vector<std::string_view> tok;
  tok.reserve(8);
  std::string_view line;

  // Banner.
  if (!rd.next(line)) fail(name, 1, "empty file: expected the %%MatrixMarket banner");
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte order mark
  detail::split(line, tok);
  if (tok.empty() || detail::lower(tok[0]) != "%%matrixmarket")
    fail(name, 1,
         "missing %%MatrixMarket banner: the first line must read "
         "'%%MatrixMarket matrix <format> <field> <symmetry>'");
  if (tok.size() != 5)
    fail(name, 1,
         "malformed banner: " + std::to_string(tok.size()) +
             " fields, expected 5 ('%%MatrixMarket <object> <format> <field> <symmetry>')");
  H h;
  {
    const std::string obj = detail::lower(tok[1]), fmt = detail::lower(tok[2]), fld = detail::lower(tok[3]),
                      sym = detail::lower(tok[4]);
    if (obj == "matrix")
      h.object = H::object_kind::matrix;
    else if (obj == "vector")
      h.object = H::object_kind::vector;
    else
      fail(name, 1, "unknown object " + detail::quote(tok[1]) + " (expected matrix or vector)");
    if (fmt == "coordinate")
      h.format = H::format_kind::coordinate;
    else if (fmt == "array")
      h.format = H::format_kind::array;
    else
      fail(name, 1, "unknown format " + detail::quote(tok[2]) + " (expected coordinate or array)");
    if (fld == "real")
      h.field = H::field_kind::real;
    else if (fld == "integer")
      h.field = H::field_kind::integer;
    else if (fld == "complex")
      h.field = H::field_kind::complex;
    else if (fld == "pattern")
      h.field = H::field_kind::pattern;
    else
      fail(name, 1, "unknown field " + detail::quote(tok[3]) + " (expected real, integer, complex or pattern)");
    if (sym == "general")
      h.symmetry = H::symmetry_kind::general;
    else if (sym == "symmetric")
      h.symmetry = H::symmetry_kind::symmetric;
    else if (sym == "skew-symmetric")
      h.symmetry = H::symmetry_kind::skew_symmetric;
    else if (sym == "hermitian")
      h.symmetry = H::symmetry_kind::hermitian;
    else
      fail(name, 1,
           "unknown symmetry " + detail::quote(tok[4]) + " (expected general, symmetric, skew-symmetric or hermitian)");
  }
  if (h.format == H::format_kind::array && h.field == H::field_kind::pattern)
    fail(name, 1, "array format cannot have field pattern");
  if (h.field == H::field_kind::pattern && h.symmetry == H::symmetry_kind::skew_symmetric)
    fail(name, 1, "pattern field cannot be skew-symmetric");
  if (h.object == H::object_kind::vector && h.symmetry != H::symmetry_kind::general)
    fail(name, 1, std::string("a vector must be general, not ") + to_string(h.symmetry));
  if constexpr (!detail::is_complex_v<V>) {
    if (h.field == H::field_kind::complex)
      fail(name, 1, "complex values cannot be read into a real value type; read with V = std::complex<double>");
  }
  if constexpr (detail::is_plain_integer_v<V>) {
    if (h.field == H::field_kind::real)
      fail(name, 1, "real values cannot be read into an integer value type; read with V = double");
    if constexpr (std::is_unsigned_v<V>)
      if (h.symmetry == H::symmetry_kind::skew_symmetric)
        fail(name, 1, "skew-symmetric values cannot be read into an unsigned value type");
  }

  // Size line, after comments and blank lines.
  const bool coord = h.format == H::format_kind::coordinate;
  const bool vec = h.object == H::object_kind::vector;
  for (;;) {
    if (!rd.next(line)) fail(name, rd.line() + 1, "missing size line: the file ends after the header");
    detail::split(line, tok);
    if (tok.empty() || tok[0].front() == '%') continue;
    break;
  }
  const long size_line = rd.line();
  {
    const std::size_t want = (vec ? 1u : 2u) + (coord ? 1u : 0u);
    if (tok.size() != want) {
      const char* form = vec ? (coord ? "'<length> <entries>'" : "'<length>'")
                             : (coord ? "'<rows> <columns> <entries>'" : "'<rows> <columns>'");
      fail(name, size_line,
           "malformed size line: " + std::to_string(tok.size()) + " fields, expected " + std::to_string(want) + " " +
               form);
    }
  }
  h.rows = detail::parse_size<I>(tok[0], vec ? "vector length" : "number of rows", name, size_line);
  h.cols = vec ? 1 : detail::parse_size<I>(tok[1], "number of columns", name, size_line);
  const bool sym = h.symmetry != H::symmetry_kind::general;
  if (sym && h.rows != h.cols)
    fail(name, size_line,
         std::string("a ") + to_string(h.symmetry) + " matrix must be square, this one is " + std::to_string(h.rows) +
             " x " + std::to_string(h.cols));
  const long long max_entries = static_cast<long long>(std::numeric_limits<I>::max());
  if (coord) {
    h.entries = detail::parse_size<I>(tok[vec ? 1 : 2], "number of entries", name, size_line);
  } else {
    const long long n = h.rows;
    if (h.cols != 0 && h.rows > max_entries / h.cols)
      fail(name, size_line,
           "the array has " + std::to_string(h.rows) + " x " + std::to_string(h.cols) +
               " entries, which does not fit the index type (" + detail::index_bits<I>() + ")");
    switch (h.symmetry) {
      case H::symmetry_kind::general:
        h.entries = h.rows * h.cols;
        break;
      case H::symmetry_kind::symmetric:
      case H::symmetry_kind::hermitian:
        h.entries = n % 2 == 0 ? (n / 2) * (n + 1) : n * ((n + 1) / 2);
        break;
      case H::symmetry_kind::skew_symmetric:
        h.entries = n == 0 ? 0 : (n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2));
        break;
    }
  }

  std::vector<I> dims;
  if (vec)
    dims = {static_cast<I>(h.rows)};
  else
    dims = {static_cast<I>(h.rows), static_cast<I>(h.cols)};
  coordinate_list<V, I> out(std::move(dims));
  out.reserve(detail::reserve_hint(h.entries) * (sym ? 2 : 1));

  const char field = h.field == H::field_kind::real      ? 'r'
                     : h.field == H::field_kind::integer ? 'i'
                     : h.field == H::field_kind::complex ? 'c'
                                                         : 'p';
  const std::size_t nvalue = field == 'p' ? 0 : field == 'c' ? 2 : 1;
  const std::size_t ncoord = coord ? (vec ? 1 : 2) : 0;
  const std::size_t nfields = ncoord + nvalue;
  const char* expected_form = nullptr;
  {
    static constexpr const char* forms[3][3] = {
        {"(value)", "(real imaginary)", ""},
        {"(index value)", "(index real imaginary)", "(index)"},
        {"(row column value)", "(row column real imaginary)", "(row column)"}};
    expected_form = forms[ncoord][field == 'c' ? 1 : field == 'p' ? 2 : 0];
  }
  const char* base_note = "Matrix Market indices are 1-based";
  const std::string row_what = vec ? "index" : "row index";
  const std::string col_what = "column index";

  // Column-major position of the next array entry.
  long long ai = 0, aj = 0;
  if (!coord && h.symmetry == H::symmetry_kind::skew_symmetric) ai = 1;

  for (long long k = 0; k < h.entries; ++k) {
    for (;;) {
      if (!rd.next(line))
        fail(name, rd.line() + 1,
             "file ends after " + std::to_string(k) + " of " + std::to_string(h.entries) +
                 " entries (truncated file?)");
      detail::split(line, tok);
      if (tok.empty() || tok[0].front() == '%') continue;
      break;
    }
    const long ln = rd.line();
    if (tok.size() != nfields)
      fail(name, ln,
           "entry has " + std::to_string(tok.size()) + " field" + (tok.size() == 1 ? "" : "s") + ", expected " +
               std::to_string(nfields) + " " + expected_form);
    I i{}, j{};
    if (coord) {
      i = detail::parse_coordinate<I>(tok[0], h.rows, row_what, base_note, name, ln);
      if (!vec) j = detail::parse_coordinate<I>(tok[1], h.cols, col_what, base_note, name, ln);
    } else {
      i = static_cast<I>(ai);
      j = static_cast<I>(aj);
      if (++ai == h.rows) {
        ++aj;
        ai = h.symmetry == H::symmetry_kind::general          ? 0
             : h.symmetry == H::symmetry_kind::skew_symmetric ? aj + 1
                                                              : aj;
      }
    }
    const V v = detail::parse_value<V>(tok.data() + ncoord, field, name, ln);
    if (static_cast<long long>(out.size()) + (sym && i != j ? 2 : 1) > max_entries)
      fail(name, ln, "the matrix has more entries than the index type (" + detail::index_bits<I>() + ") can count");
    if (vec) {
      const std::array<I, 1> c{i};
      out.push_back(std::span<const I>(c), v);
      continue;
    }
    if (sym) {
      if (i < j)
        fail(name, ln,
             "entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ") is above the diagonal: a " +
                 to_string(h.symmetry) + " file stores only the lower triangle");
      if (i == j && h.symmetry == H::symmetry_kind::skew_symmetric)
        fail(name, ln,
             "skew-symmetric matrix has a diagonal entry (" + std::to_string(i + 1) + ", " + std::to_string(j + 1) +
                 "); its diagonal must be zero and is not stored");
    }
    const std::array<I, 2> c{i, j};
    out.push_back(std::span<const I>(c), v);
    if (sym && i != j) {
      const std::array<I, 2> m{j, i};
      switch (h.symmetry) {
        case H::symmetry_kind::skew_symmetric:
          if constexpr (std::is_integral_v<V>) {
            if (v == std::numeric_limits<V>::min())
              fail(name, ln, "value " + std::to_string(v) + " of a skew-symmetric file cannot be negated in the value type");
          }
          out.push_back(std::span<const I>(m), static_cast<V>(-v));
          break;
        case H::symmetry_kind::hermitian:
          if constexpr (detail::is_complex_v<V>)
            out.push_back(std::span<const I>(m), std::conj(v));
          else
            out.push_back(std::span<const I>(m), v);
          break;
        default:
          out.push_back(std::span<const I>(m), v);
          break;
      }
    }
  }

  // Anything but blank lines and comments after the last entry is an error.
  while (rd.next(line)) {
    detail::split(line, tok);
    if (tok.empty() || tok[0].front() == '%') continue;
    fail(name, rd.line(),
         "more entries than the " + std::to_string(h.entries) + " declared" +
             (coord ? " on the size line (line " + std::to_string(size_line) + ")" : std::string(" by the array size")));
  }
  if (header_out != nullptr) *header_out = h;
  return out;
}

/// Reads a Matrix Market file; see the stream overload for the format, the
/// result and the errors. Also throws io_error "<path>: cannot open file for
/// reading" when the file cannot be opened.
///
/// Example:
/// @code
///   tensorlev::io::mm_header h;
///   auto a = tensorlev::io::read_matrix_market<double>("west0067.mtx", &h);
///   // a.dims() == {67, 67}, a.size() == 294, to_string(h) == "%%MatrixMarket matrix coordinate real general"
/// @endcode
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_matrix_market(const std::string& path, mm_header* header_out = nullptr) {
  std::ifstream in = detail::open_input(path);
  return read_matrix_market<V, I>(in, path, header_out);
}

// ---------------------------------------------------------------------------
// Writing.

/// Options for the Matrix Market writers.
struct mm_write_options {
  /// Text written after the banner, each line prefixed with '%'. Empty: none.
  std::string comment;
  /// Write field `pattern` (coordinates only, values dropped). Coordinate only.
  bool pattern = false;
};

namespace detail {

inline void write_mm_comment(text_writer& w, const std::string& comment) {
  std::string_view rest = comment;
  while (!rest.empty()) {
    const std::size_t nl = rest.find('\n');
    w.put('%');
    w.put(rest.substr(0, nl));
    w.end_line();
    if (nl == std::string_view::npos) break;
    rest.remove_prefix(nl + 1);
  }
}

template <class V>
constexpr const char* field_keyword() {
  if constexpr (is_complex_v<V>)
    return "complex";
  else if constexpr (is_plain_integer_v<V>)
    return "integer";
  else
    return "real";
}

template <class V, index_type I>
void write_mm(std::ostream& out, const std::string& name, const coordinate_list<V, I>& a, const mm_write_options& opt) {
  static_assert(is_io_value_v<V>, "write_matrix_market: the value type must be float, double, "
                                  "std::complex<float>, std::complex<double> or an integer type");
  if (a.order() != 1 && a.order() != 2)
    throw shape_error("write_matrix_market: a Matrix Market file holds a matrix (order 2) or a vector (order 1), "
                      "this tensor has order " +
                      std::to_string(a.order()) + "; use write_frostt for other orders");
  text_writer w(out, name);
  w.put("%%MatrixMarket matrix coordinate ");
  w.put(opt.pattern ? "pattern" : field_keyword<V>());
  w.put(" general");
  w.end_line();
  write_mm_comment(w, opt.comment);
  w.number(static_cast<long long>(a.dims()[0]));
  w.put(' ');
  w.number(a.order() == 2 ? static_cast<long long>(a.dims()[1]) : 1LL);
  w.put(' ');
  w.number(static_cast<unsigned long long>(a.size()));
  w.end_line();
  const std::span<const I> coords(a.raw_coords());
  const std::vector<V>& values = a.raw_values();
  const std::size_t order = a.order();
  for (std::size_t e = 0; e < values.size(); ++e) {
    w.number(static_cast<long long>(coords[e * order]) + 1);
    w.put(' ');
    if (order == 2)
      w.number(static_cast<long long>(coords[e * order + 1]) + 1);
    else
      w.put('1');
    if (!opt.pattern) {
      w.put(' ');
      w.value(values[e]);
    }
    w.end_line();
  }
  w.finish();
}

template <class V>
void write_mm_array(std::ostream& out, const std::string& name, std::size_t rows, std::size_t cols,
                    const std::vector<V>& column_major, const mm_write_options& opt) {
  static_assert(is_io_value_v<V>, "write_matrix_market_array: the value type must be float, double, "
                                  "std::complex<float>, std::complex<double> or an integer type");
  if (opt.pattern) throw error("write_matrix_market_array: the array format cannot be written as pattern");
  if ((cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols) || column_major.size() != rows * cols)
    throw shape_error("write_matrix_market_array: " + std::to_string(rows) + " x " + std::to_string(cols) +
                      " matrix needs " + std::to_string(rows) + "*" + std::to_string(cols) + " values, got " +
                      std::to_string(column_major.size()));
  text_writer w(out, name);
  w.put("%%MatrixMarket matrix array ");
  w.put(field_keyword<V>());
  w.put(" general");
  w.end_line();
  write_mm_comment(w, opt.comment);
  w.number(static_cast<unsigned long long>(rows));
  w.put(' ');
  w.number(static_cast<unsigned long long>(cols));
  w.end_line();
  for (const V& v : column_major) {
    w.value(v);
    w.end_line();
  }
  w.finish();
}

}  // namespace detail

/// Writes `a` as a `coordinate general` Matrix Market file: field `complex`
/// for complex V, `integer` for integer V, `real` otherwise (`pattern` if
/// `opt.pattern`). Entries in list order, indices 1-based, values in the
/// shortest form that reads back bit-exact. A vector (order 1) is written as
/// an n x 1 matrix.
/// @pre a.order() is 1 or 2 (else shape_error).
/// @post read_matrix_market<V, I> of the output equals `a` (dims {n, 1} for a vector).
/// @throws io_error "<stream>: write error" when the stream fails.
///
/// Example:
/// @code
///   tensorlev::coordinate_list<double> a({2, 3});
///   a.push_back({1, 2}, 0.1);
///   tensorlev::io::write_matrix_market(std::cout, a);
///   // %%MatrixMarket matrix coordinate real general
///   // 2 3 1
///   // 2 3 0.1
/// @endcode
template <class V, index_type I>
void write_matrix_market(std::ostream& out, const coordinate_list<V, I>& a, const mm_write_options& opt = {}) {
  detail::write_mm(out, std::string("<stream>"), a, opt);
}

/// Writes `a` to the file `path`; see the stream overload.
/// @throws io_error "<path>: cannot open file for writing" or "<path>: write error".
template <class V, index_type I>
void write_matrix_market(const std::string& path, const coordinate_list<V, I>& a, const mm_write_options& opt = {}) {
  std::ofstream out = detail::open_output(path);
  detail::write_mm(out, path, a, opt);
}

/// Writes a dense rows x cols matrix, given column-major, as an `array
/// general` Matrix Market file (field as for write_matrix_market).
/// @pre column_major.size() == rows * cols (else shape_error); !opt.pattern.
/// @post read_matrix_market<V> of the output has every entry, in column-major order.
///
/// Example:
/// @code
///   tensorlev::io::write_matrix_market_array(std::cout, 2, 2, std::vector<double>{1, 2, 3, 4});
///   // %%MatrixMarket matrix array real general
///   // 2 2
///   // 1
///   // 2
///   // 3
///   // 4
/// @endcode
template <class V>
void write_matrix_market_array(std::ostream& out, std::size_t rows, std::size_t cols,
                               const std::vector<V>& column_major, const mm_write_options& opt = {}) {
  detail::write_mm_array(out, std::string("<stream>"), rows, cols, column_major, opt);
}

/// Writes a dense matrix to the file `path`; see the stream overload.
template <class V>
void write_matrix_market_array(const std::string& path, std::size_t rows, std::size_t cols,
                               const std::vector<V>& column_major, const mm_write_options& opt = {}) {
  std::ofstream out = detail::open_output(path);
  detail::write_mm_array(out, path, rows, cols, column_major, opt);
}

}  // namespace tensorlev::io
