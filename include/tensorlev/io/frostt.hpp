#pragma once
/// @file frostt.hpp
/// Reading and writing FROSTT `.tns` files: one entry per line,
/// `i_1 i_2 ... i_N value` with 1-based coordinates, separated by whitespace;
/// lines starting with '#' and blank lines are skipped. Complex value types
/// use two value fields, `real imaginary`. Every malformed input throws
/// `tensorlev::io_error` whose `what()` reads `<file>:<line>: <problem>`.
///
/// Values are parsed with `std::from_chars` and written with the shortest
/// `std::to_chars` form, so reading what write_frostt wrote reproduces every
/// value bit for bit (NaN payloads aside).

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <limits>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "../coordinate_list.hpp"
#include "io_error.hpp"
#include "matrix_market.hpp"  // tensorlev::io::detail: line reader, number parsing and formatting

namespace tensorlev::io {

namespace detail {

template <class V, index_type I>
coordinate_list<V, I> read_tns(std::istream& in, const std::string& name, std::optional<std::vector<I>> given) {
  static_assert(is_io_value_v<V>, "read_frostt: the value type must be float, double, "
                                  "std::complex<float>, std::complex<double> or an integer type");
  const std::size_t nvalue = is_complex_v<V> ? 2 : 1;
  const char field = is_complex_v<V> ? 'c' : 'r';
  const char* value_form = is_complex_v<V> ? "real imaginary" : "a value";
  const long long max_index = static_cast<long long>(std::numeric_limits<I>::max());
  const char* base_note = "FROSTT coordinates are 1-based";

  // With dims, entries go straight into the result; without, coordinates are
  // collected first and the dims are the largest coordinate of each mode.
  std::optional<coordinate_list<V, I>> direct;
  std::size_t order = 0;
  if (given) {
    if (given->empty()) throw shape_error("read_frostt: dims must name at least one dimension");
    order = given->size();
    direct.emplace(std::move(*given));
  }
  std::vector<I> coords;
  std::vector<V> values;
  std::vector<long long> extent(order, 0);
  std::vector<I> c(order);
  std::vector<std::string> names;  // "field 1 (mode 0): coordinate", ... for messages
  long first_line = 0;

  line_reader rd(in, name);
  std::vector<std::string_view> tok;
  std::string_view line;
  std::size_t count = 0;
  while (rd.next(line)) {
    split(line, tok);
    if (tok.empty() || tok[0].front() == '#') continue;
    const long ln = rd.line();
    if (order == 0) {
      if (tok.size() <= nvalue)
        fail(name, ln,
             "entry has " + std::to_string(tok.size()) + " field" + (tok.size() == 1 ? "" : "s") +
                 ", expected at least one coordinate and " + value_form);
      order = tok.size() - nvalue;
      first_line = ln;
      extent.assign(order, 0);
      c.assign(order, I{});
    }
    if (names.size() != order)
      for (std::size_t d = names.size(); d < order; ++d)
        names.push_back("field " + std::to_string(d + 1) + " (mode " + std::to_string(d) + "): coordinate");
    if (tok.size() != order + nvalue) {
      std::string why = given ? "dims has " + std::to_string(order) + " modes"
                              : "as on line " + std::to_string(first_line);
      fail(name, ln,
           "entry has " + std::to_string(tok.size()) + " field" + (tok.size() == 1 ? "" : "s") + ", expected " +
               std::to_string(order + nvalue) + " (" + std::to_string(order) + " coordinates and " + value_form +
               ", " + why + ")");
    }
    if (static_cast<long long>(count) >= max_index)
      fail(name, ln, "the tensor has more entries than the index type (" + index_bits<I>() + ") can count");
    for (std::size_t d = 0; d < order; ++d) {
      const std::string& what = names[d];
      if (direct) {
        c[d] = parse_coordinate<I>(tok[d], static_cast<long long>(direct->dims()[d]), what, base_note, name, ln);
      } else {
        // Same checks, but the only upper bound is the index type.
        long long v = 0;
        switch (parse_integer(tok[d], v)) {
          case parse_status::ok:
            break;
          case parse_status::invalid:
            fail(name, ln, what + " " + quote(tok[d]) + " is not an integer");
          case parse_status::out_of_range:
            if (tok[d].front() == '-') fail(name, ln, what + " " + std::string(tok[d]) + " is invalid; " + base_note);
            fail(name, ln,
                 what + " " + std::string(tok[d]) + " does not fit the index type (" + index_bits<I>() + ")");
        }
        if (v < 1) fail(name, ln, what + " " + std::to_string(v) + " is invalid; " + base_note);
        if (v > max_index)
          fail(name, ln, what + " " + std::to_string(v) + " does not fit the index type (" + index_bits<I>() + ")");
        if (v > extent[d]) extent[d] = v;
        c[d] = static_cast<I>(v - 1);
      }
    }
    const V v = parse_value<V>(tok.data() + order, field, name, ln);
    if (direct) {
      direct->push_back(std::span<const I>(c), v);
    } else {
      coords.insert(coords.end(), c.begin(), c.end());
      values.push_back(v);
    }
    ++count;
  }
  if (direct) return std::move(*direct);
  if (count == 0)
    fail(name, rd.line() + 1,
         "empty file: no entries, so the dimensions are unknown (pass dims to read an empty tensor)");

  std::vector<I> dims(order);
  for (std::size_t d = 0; d < order; ++d) dims[d] = static_cast<I>(extent[d]);
  coordinate_list<V, I> out(std::move(dims));
  out.reserve(values.size());
  for (std::size_t e = 0; e < values.size(); ++e)
    out.push_back(std::span<const I>(coords.data() + e * order, order), values[e]);
  return out;
}

template <class V, index_type I>
void write_tns(std::ostream& out, const std::string& name, const coordinate_list<V, I>& a) {
  static_assert(is_io_value_v<V>, "write_frostt: the value type must be float, double, "
                                  "std::complex<float>, std::complex<double> or an integer type");
  if (a.order() == 0) throw shape_error("write_frostt: a FROSTT file needs a tensor of order 1 or more");
  text_writer w(out, name);
  const std::size_t order = a.order();
  const std::vector<I>& coords = a.raw_coords();
  const std::vector<V>& values = a.raw_values();
  for (std::size_t e = 0; e < values.size(); ++e) {
    for (std::size_t d = 0; d < order; ++d) {
      w.number(static_cast<long long>(coords[e * order + d]) + 1);
      w.put(' ');
    }
    w.value(values[e]);
    w.end_line();
  }
  w.finish();
}

}  // namespace detail

/// Reads a FROSTT `.tns` tensor from a stream; `name` is the file name used in
/// error messages. The order is the number of fields on the first entry line
/// minus one (minus two for complex V, whose lines end `real imaginary`); the
/// dimensions are the largest coordinate of each mode. Entries keep file order.
///
/// @pre V is float, double, std::complex<float|double> or an integer type
///      (integer V needs integer values in the file).
/// @post order() >= 1; every coordinate is 0-based and inside dims.
/// @throws io_error "<name>:<line>: <problem>" for: no entries ("empty file"),
///         a line whose field count differs from the first entry line's,
///         a coordinate below 1 or not fitting I, a non-numeric field, more
///         entries than I can count, values above the largest finite V.
///
/// Example:
/// @code
///   std::istringstream s("# a comment\n1 1 2 1.5\n3 2 1 -2\n");
///   auto t = tensorlev::io::read_frostt<double>(s, "t.tns");
///   // t.dims() == {3, 2, 2}; entries (0,0,1)=1.5, (2,1,0)=-2
/// @endcode
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_frostt(std::istream& in, const std::string& name) {
  return detail::read_tns<V, I>(in, name, std::nullopt);
}

/// Reads a FROSTT `.tns` tensor with known dimensions: every line must have
/// dims.size() coordinates, each in [1, dims[d]]; a file without entries gives
/// an empty tensor. Otherwise as the overload without dims.
/// @pre dims is not empty and has no negative entry (else shape_error).
/// @throws io_error also for a coordinate above its dimension.
///
/// Example:
/// @code
///   std::istringstream s("");
///   auto t = tensorlev::io::read_frostt<double>(s, "empty.tns", {4, 5, 6});
///   // t.dims() == {4, 5, 6}, t.size() == 0
/// @endcode
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_frostt(std::istream& in, const std::string& name, std::vector<I> dims) {
  return detail::read_tns<V, I>(in, name, std::optional<std::vector<I>>(std::move(dims)));
}

/// Reads the FROSTT file `path`; see the stream overload.
/// Also throws io_error "<path>: cannot open file for reading".
///
/// Example:
/// @code
///   auto t = tensorlev::io::read_frostt<double>("nations.tns");  // dims {14, 55, 14}, 1992 entries
/// @endcode
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_frostt(const std::string& path) {
  std::ifstream in = detail::open_input(path);
  return detail::read_tns<V, I>(in, path, std::nullopt);
}

/// Reads the FROSTT file `path` with known dimensions; see the stream overload.
template <class V, index_type I = std::int32_t>
[[nodiscard]] coordinate_list<V, I> read_frostt(const std::string& path, std::vector<I> dims) {
  std::ifstream in = detail::open_input(path);
  return detail::read_tns<V, I>(in, path, std::optional<std::vector<I>>(std::move(dims)));
}

/// Writes `a` as FROSTT: one line per entry, in list order, 1-based
/// coordinates then the value (`real imaginary` for complex V) in the shortest
/// form that reads back bit-exact. The dimensions are not stored: reading the
/// file back without dims gives the largest coordinate of each mode.
/// @pre a.order() >= 1 (else shape_error).
/// @post read_frostt<V, I>(output, a.dims()) equals `a`.
/// @throws io_error "<stream>: write error" when the stream fails.
///
/// Example:
/// @code
///   tensorlev::coordinate_list<double> t({2, 2, 2});
///   t.push_back({0, 1, 1}, 0.25);
///   tensorlev::io::write_frostt(std::cout, t);  // prints "1 2 2 0.25"
/// @endcode
template <class V, index_type I>
void write_frostt(std::ostream& out, const coordinate_list<V, I>& a) {
  detail::write_tns(out, std::string("<stream>"), a);
}

/// Writes `a` to the FROSTT file `path`; see the stream overload.
/// @throws io_error "<path>: cannot open file for writing" or "<path>: write error".
template <class V, index_type I>
void write_frostt(const std::string& path, const coordinate_list<V, I>& a) {
  std::ofstream out = detail::open_output(path);
  detail::write_tns(out, path, a);
}

}  // namespace tensorlev::io
