// tl-explore: runs one kernel on a Matrix Market matrix or FROSTT 3-tensor
// in every storage format that can hold it, and reports conversion time,
// kernel time, GFLOP/s and the error against a hand-written reference.
// This file: argument parsing, input and operands, dispatch, table and JSON
// output. The generated kernels live in the k_*.cpp files.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tensorlev/error.hpp>
#include <tensorlev/io/frostt.hpp>
#include <tensorlev/io/matrix_market.hpp>

#include "explore.hpp"

namespace {

using namespace tlx;
namespace io = tensorlev::io;

/// Bad command line or input that cannot be processed: one line on stderr, exit 2.
struct usage_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int exit_mismatch = 1;
constexpr int exit_usage = 2;
/// Dense operands and dense results above this many elements are not built
/// (every format would need them; the formats themselves are bounded by the
/// budget, see budget.cpp).
constexpr double dense_limit = 268435456.0;  // 2^28

// ---------------------------------------------------------------------------
// Help.

const char* flop_rule(kernel_id k) {
  switch (k) {
    case kernel_id::spmv: return "2 * nnz";
    case kernel_id::spmm: return "2 * nnz * cols";
    case kernel_id::add: return "nnz(A + A^T) (one addition per result entry, an upper bound)";
    case kernel_id::spgemm: return "2 * sum over entries A(i,k) of nnz(row k)";
    case kernel_id::sddmm: return "nnz * (2 * rank + 1)";
    case kernel_id::ttv: return "2 * nnz";
    case kernel_id::ttm: return "2 * nnz * rank";
    case kernel_id::mttkrp: return "3 * nnz * rank";
    case kernel_id::innerprod: return "2 * nnz";
    case kernel_id::plus: return "nnz (one addition per entry)";
  }
  return "?";
}

// The formats each kernel leaves out by why(k, f) (nullptr: kept), a line
// per kernel with each format's reason number ([tag N]), then the reasons.
template <class Why>
void print_left_out(std::ostream& os, const std::string& tag, Why why) {
  std::vector<std::string_view> reasons;
  for (std::size_t k = 0; k < num_kernels; ++k) {
    const auto n = kernels[k].order == 2 ? num_matrix_formats : num_tensor_formats;
    std::string line;
    for (std::size_t f = 0; f < n; ++f)
      if (const char* r = why(static_cast<kernel_id>(k), f)) {
        auto it = std::find(reasons.begin(), reasons.end(), std::string_view(r));
        if (it == reasons.end()) it = reasons.insert(reasons.end(), r);
        line += (line.empty() ? "" : ", ") + std::string(format_name(kernels[k].order, f)) + " [" + tag +
                std::to_string(it - reasons.begin() + 1) + "]";
      }
    if (!line.empty()) os << "  " << kernels[k].name << ": " << line << "\n";
  }
  for (std::size_t x = 0; x < reasons.size(); ++x) os << "  [" << tag << x + 1 << "] " << reasons[x] << "\n";
  if (reasons.empty()) os << "  (none)\n";
}

void print_help(std::ostream& os) {
  const budget b;
  os << "usage: tl-explore --kernel K [--formats f1,f2,...] [--max-bytes B] [--max-work W] [--threads N] [--device]\n"
        "                  [--reps R] [--rep-seconds S] [--rounds N] [--rank R] [--cols N] [--seed S] [--operand NAME=FILE] [--json]\n"
        "                  [--quiet] [--output FILE] FILE...\n"
        "\n"
        "Packs the input (Matrix Market .mtx matrix or FROSTT .tns 3-tensor) from its COO coordinate list\n"
        "into each storage format, runs kernel K with the kernel tensorlev generates for that exact format,\n"
        "and reports conversion time (pack from the COO list; median of the packs; add: A and A^T, ms),\n"
        "kernel time (median of the runs, ms), GFLOP/s and the largest\n"
        "absolute difference from a reference computed by plain loops over the coordinate list. Then it names\n"
        "the fastest correct format for one product (convert + 1 kernel) and for many (kernel only).\n"
        "\n"
        "kernels (operands in parentheses; sparse input A for .mtx, B for .tns):\n";
  for (const auto& k : kernels) {
    std::string ops;
    for (int o = 0; o < k.num_operands; ++o) {
      if (!ops.empty()) ops += ", ";
      ops += std::string(k.operands[o].name);
    }
    char line[256];
    std::snprintf(line, sizeof line, "  %-10s %-48s %s  [%s; result: %s]\n", std::string(k.name).c_str(),
                  std::string(k.statement).c_str(), ops.empty() ? "(no dense operands)" : ("(" + ops + ")").c_str(),
                  k.order == 2 ? ".mtx" : ".tns", std::string(k.result).c_str());
    os << line;
  }
  os << "\nmatrix formats (.mtx):\n";
  for (std::size_t f = 0; f < num_matrix_formats; ++f)
    os << "  " << matrix_formats[f] << std::string(11 - matrix_formats[f].size(), ' ') << matrix_format_desc[f] << "\n";
  os << "3-tensor formats (.tns):\n";
  for (std::size_t f = 0; f < num_tensor_formats; ++f)
    os << "  " << tensor_formats[f] << std::string(11 - tensor_formats[f].size(), ' ') << tensor_format_desc[f] << "\n";
  os << "formats left out of a kernel (never faked; the reasons are listed below):\n";
  print_left_out(os, "", [](kernel_id k, std::size_t f) { return unsupported_reason(k, f); });
  os << "formats left out of a kernel with --device (the device form; real values only):\n";
  print_left_out(os, "d", [](kernel_id k, std::size_t f) {
    return unsupported_reason(k, f) == nullptr ? device_unsupported_reason(k, f) : nullptr;
  });
  os << "\n"
        "options:\n"
        "  --kernel K         the kernel (required)\n"
        "  --formats LIST     comma-separated format names (default: every format the kernel supports). A format\n"
        "                     whose estimated cost on this input exceeds a budget is skipped, with the reason\n"
        "                     and the estimate in the report; the estimates come from the coordinate list,\n"
        "                     before anything is packed (DIA: diagonals x rows values; ELL: rows x longest row;\n"
        "                     dense: rows x columns; BCSR: touched 4x4 blocks x 16; CSB: its 64x64 grid plus the\n"
        "                     entries; hash rows: rows x 2 x longest row, rounded up to a power of 2; work: the\n"
        "                     steps of the loops generated for the format, padding included)\n"
        "  --max-bytes B      skip a format whose packed input (add: A and A^T) would take more than B bytes\n"
        "                     (default 2^29 = " << bytes_text(b.bytes) << ")\n"
        "  --max-work W       skip a format whose kernel would take more than W steps per run (default 2^29 =\n"
        "                     " << static_cast<long long>(b.work) << "; a step is about one inner-loop iteration, 1-5 ns in a Release\n"
        "                     build; an output entry that is sorted (SpGEMM, or a kernel that collects its output\n"
        "                     as coordinates) counts 16). B and W: a number with an optional suffix k, M, G, T\n"
        "                     (x 2^10, 2^20, 2^30, 2^40). With the defaults a matrix of up to 10^6 entries takes\n"
        "                     well under a minute per kernel\n"
        "  --threads N        run the kernels on N threads of Kokkos' host space (OpenMP; tl-explore built with\n"
        "                     Kokkos); default 1: the serial executor\n"
        "  --device           run the kernels in their device form on Kokkos' default execution space (CUDA or HIP\n"
        "                     where Kokkos was built with one; otherwise its host space, on host threads). Each\n"
        "                     operand is packed on the host and copied into the space's memory in its format\n"
        "                     (convert ms includes the copy); results are copied back to be checked. Real values\n"
        "                     only; the formats a kernel leaves out are listed above. With --threads N the host\n"
        "                     space runs N threads; the report's \"threads\" is then the space's concurrency\n"
        "                     (Kokkos' concurrency(): host threads, or a GPU's resident threads)\n"
        "  --reps R           packs and kernel runs per format, medians reported (default 5)\n"
        "  --rep-seconds S    stop repeating a format's packs (runs) once they took S seconds together; at least\n"
        "                     one of each (default 1; the runs done are in the report)\n"
        "  --rounds N         run the formats N times in turn, each round packing anew, and report each format's\n"
        "                     smallest pack and kernel medians over the rounds (default 1). A machine whose speed\n"
        "                     drifts over seconds (a shared VM) then slows every format alike instead of whichever\n"
        "                     ran in a slow phase. A format that fails in a later round is listed as failed and\n"
        "                     its earlier rounds are not counted as correct\n"
        "  --rank R           columns of U, V (sddmm), M (ttm), M, N (mttkrp) (default 16)\n"
        "  --cols N           columns of B (spmm) (default 16)\n"
        "  --seed S           seed of the generated dense operands, uniform in [-1, 1) (default 42)\n"
        "  --operand NAME=FILE  load dense operand NAME from a Matrix Market file (array or coordinate); its\n"
        "                     columns set --cols / --rank. Vectors: an n x 1 matrix or a vector object\n"
        "  --json             print one JSON object per input file instead of the table\n"
        "  --quiet            no progress lines on stderr (by default each format's phases are printed there)\n"
        "  --output FILE      write the result of the first format run (Matrix Market for vectors, matrices\n"
        "                     and scalars (1 x 1 array); FROSTT .tns for 3-tensors). Needs exactly one FILE\n"
        "\n"
        "values: real, integer and pattern .mtx files compute in double, complex ones in std::complex<double>;\n"
        ".tns files are read as real (double). Symmetric files are expanded to both triangles.\n"
        "nnz: entries of the coordinate list after symmetric expansion. GFLOP/s = useful flops / kernel time,\n"
        "counting 2 flops per multiply-add over the input's entries (padding and the zeros a dense format\n"
        "multiplies are not counted):\n";
  for (std::size_t k = 0; k < num_kernels; ++k)
    os << "  " << kernels[k].name << std::string(11 - kernels[k].name.size(), ' ') << flop_rule(static_cast<kernel_id>(k))
       << "\n";
  os << "correct: max |result - reference| <= 1e-8 * (1 + max |reference|) (1e-9 relative, x10 for summation\n"
        "order). add, spgemm and sddmm results are CSR, plus COO (order 3), the others dense.\n"
        "exit status: 0 every format agrees with the reference; 1 a format disagrees or failed; 2 bad usage or\n"
        "input (one line on stderr).\n";
}

// ---------------------------------------------------------------------------
// Command line.

struct cli {
  kernel_id kernel = kernel_id::spmv;
  std::vector<std::size_t> formats;  // indices into the kernel order's list
  int reps = 5;
  double rep_seconds = 1.0;
  int rounds = 1;
  index_t rank = 16, cols = 16;
  std::uint64_t seed = 42;
  std::vector<std::pair<std::string, std::string>> operands;
  bool json = false;
  bool quiet = false;
  int threads = 1;
  bool device = false;
  std::string device_space;  // --device: Kokkos' default execution space, described
  int device_threads = 0;    // --device: its concurrency()
  budget limits;
  std::string output;
  std::vector<std::string> files;
};

template <class T>
T parse_number(const std::string& opt, const std::string& v, T lo, T hi) {
  T x{};
  const char* b = v.data();
  const char* e = b + v.size();
  const auto r = std::from_chars(b, e, x);
  if (v.empty() || r.ec != std::errc() || r.ptr != e || x < lo || x > hi)
    throw usage_error(opt + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                      "], got '" + v + "'");
  return x;
}

/// A budget: a positive number, optionally with a suffix k, M, G or T (binary).
double parse_budget(const std::string& opt, const std::string& v) {
  double x = 0;
  const char* b = v.data();
  const char* e = b + v.size();
  auto r = std::from_chars(b, e, x);
  double scale = 1;
  if (r.ec == std::errc() && r.ptr + 1 == e) {
    switch (*r.ptr) {
      case 'k': case 'K': scale = 0x1p10; break;
      case 'm': case 'M': scale = 0x1p20; break;
      case 'g': case 'G': scale = 0x1p30; break;
      case 't': case 'T': scale = 0x1p40; break;
      default: scale = 0;
    }
    r.ptr = e;
  }
  if (v.empty() || r.ec != std::errc() || r.ptr != e || scale == 0 || !std::isfinite(x) || x <= 0)
    throw usage_error(opt + ": expected a positive number with an optional suffix k, M, G or T, got '" + v + "'");
  return x * scale;
}

std::string known_list(std::span<const std::string_view> names) {
  std::string s;
  for (auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

cli parse_args(int argc, char** argv) {
  cli c;
  std::optional<std::string> kernel, formats;
  bool only_files = false;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (only_files || s.empty() || s[0] != '-' || s == "-") {
      c.files.push_back(s);
      continue;
    }
    if (s == "--") {
      only_files = true;
      continue;
    }
    if (s == "-h" || s == "--help") {
      print_help(std::cout);
      std::exit(0);
    }
    std::string name = s, value;
    bool has_value = false;
    if (const auto eq = s.find('='); eq != std::string::npos && s.rfind("--", 0) == 0) {
      name = s.substr(0, eq);
      value = s.substr(eq + 1);
      has_value = true;
    }
    auto arg = [&]() -> std::string {
      if (has_value) return value;
      if (a + 1 >= argc) throw usage_error(name + " needs a value (see --help)");
      return argv[++a];
    };
    if (name == "--kernel") {
      kernel = arg();
    } else if (name == "--formats") {
      formats = arg();
    } else if (name == "--threads") {
      c.threads = parse_number<int>(name, arg(), 1, 1 << 20);
    } else if (name == "--device") {
      if (has_value) throw usage_error("--device takes no value");
      c.device = true;
    } else if (name == "--reps") {
      c.reps = parse_number<int>(name, arg(), 1, 1000000);
    } else if (name == "--rounds") {
      c.rounds = parse_number<int>(name, arg(), 1, 1000);
    } else if (name == "--rep-seconds") {
      const std::string v = arg();
      double x = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
      if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !(x > 0) || !std::isfinite(x))
        throw usage_error("--rep-seconds: expected a positive number of seconds, got '" + v + "'");
      c.rep_seconds = x;
    } else if (name == "--rank") {
      c.rank = parse_number<index_t>(name, arg(), 1, 1 << 20);
    } else if (name == "--cols") {
      c.cols = parse_number<index_t>(name, arg(), 1, 1 << 20);
    } else if (name == "--seed") {
      c.seed = parse_number<std::uint64_t>(name, arg(), 0, std::numeric_limits<std::uint64_t>::max());
    } else if (name == "--operand") {
      const std::string v = arg();
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        throw usage_error("--operand: expected NAME=FILE, got '" + v + "'");
      c.operands.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (name == "--max-bytes") {
      c.limits.bytes = parse_budget(name, arg());
    } else if (name == "--max-work") {
      c.limits.work = parse_budget(name, arg());
    } else if (name == "--json") {
      if (has_value) throw usage_error("--json takes no value");
      c.json = true;
    } else if (name == "--quiet") {
      if (has_value) throw usage_error("--quiet takes no value");
      c.quiet = true;
    } else if (name == "--output") {
      c.output = arg();
      if (c.output.empty()) throw usage_error("--output: empty file name");
    } else {
      throw usage_error("unknown option '" + name + "' (see --help)");
    }
  }
  std::vector<std::string_view> kernel_names;
  for (const auto& k : kernels) kernel_names.push_back(k.name);
  if (!kernel) throw usage_error("--kernel is required (one of: " + known_list(kernel_names) + ")");
  const auto kit = std::find(kernel_names.begin(), kernel_names.end(), *kernel);
  if (kit == kernel_names.end())
    throw usage_error("unknown kernel '" + *kernel + "' (known: " + known_list(kernel_names) + ")");
  c.kernel = static_cast<kernel_id>(kit - kernel_names.begin());
  const kernel_info& info = kernels[static_cast<int>(c.kernel)];
  const bool matrix = info.order == 2;
  const std::span<const std::string_view> names =
      matrix ? std::span<const std::string_view>(matrix_formats) : std::span<const std::string_view>(tensor_formats);
  const std::span<const std::string_view> other =
      matrix ? std::span<const std::string_view>(tensor_formats) : std::span<const std::string_view>(matrix_formats);
  if (formats) {
    std::size_t pos = 0;
    while (true) {
      const std::size_t comma = formats->find(',', pos);
      const std::string f = formats->substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      if (f.empty()) throw usage_error("--formats: empty format name in '" + *formats + "'");
      const auto it = std::find(names.begin(), names.end(), f);
      if (it == names.end()) {
        if (std::find(other.begin(), other.end(), f) != other.end())
          throw usage_error("format '" + f + "' holds " + (matrix ? "3-tensors" : "matrices") + "; kernel " +
                            std::string(info.name) + " takes a " + (matrix ? "matrix" : "3-tensor") +
                            " (formats: " + known_list(names) + ")");
        throw usage_error("unknown format '" + f + "' for kernel " + std::string(info.name) +
                          " (formats: " + known_list(names) + ")");
      }
      const auto idx = static_cast<std::size_t>(it - names.begin());
      if (const char* why = unsupported_reason(c.kernel, idx))
        throw usage_error("format '" + f + "' cannot be used with kernel " + std::string(info.name) + ": " + why);
      if (const char* why = device_unsupported_reason(c.kernel, idx); why != nullptr && c.device)
        throw usage_error("format '" + f + "' cannot be used with kernel " + std::string(info.name) +
                          " in the device form (--device): " + why);
      if (std::find(c.formats.begin(), c.formats.end(), idx) == c.formats.end()) c.formats.push_back(idx);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  } else {
    for (std::size_t f = 0; f < names.size(); ++f)
      if (unsupported_reason(c.kernel, f) == nullptr && (!c.device || device_unsupported_reason(c.kernel, f) == nullptr))
        c.formats.push_back(f);
  }
  for (const auto& [oname, file] : c.operands) {
    bool found = false;
    std::vector<std::string_view> onames;
    for (int o = 0; o < info.num_operands; ++o) {
      onames.push_back(info.operands[o].name);
      found = found || info.operands[o].name == oname;
    }
    if (!found)
      throw usage_error("--operand: kernel " + std::string(info.name) + " has no operand '" + oname + "' (" +
                        (onames.empty() ? std::string("it has no dense operands") : "operands: " + known_list(onames)) +
                        ")");
  }
  if (c.files.empty()) throw usage_error("no input FILE given (see --help)");
  if (c.device) {
    c.device_space = device_init(c.threads, c.device_threads);  // fails here, before any work, without Kokkos
  } else if (c.threads > 1) {
    (void)threads_executor(c.threads);  // fails here, before any work, without Kokkos
  }
  if (!c.output.empty() && c.files.size() != 1) throw usage_error("--output needs exactly one input FILE");
  return c;
}

// ---------------------------------------------------------------------------
// Inputs.

std::string extension(const std::string& path) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string e = path.substr(dot);
  for (char& ch : e) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return e;
}

template <class V>
V convert_value(const cplx& v) {
  if constexpr (std::is_same_v<V, cplx>)
    return v;
  else
    return v.real();
}

template <class V>
coo_list<V> convert_list(const coo_list<cplx>& in) {
  std::vector<V> vals;
  vals.reserve(in.size());
  for (const cplx& v : in.raw_values()) vals.push_back(convert_value<V>(v));
  return coo_list<V>(in.dims(), in.raw_coords(), std::move(vals));
}

template <class V>
V random_value(std::mt19937_64& rng) {
  auto u = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53 * 2.0 - 1.0; };
  if constexpr (std::is_same_v<V, cplx>) {
    const double re = u();
    return cplx(re, u());
  } else {
    return u();
  }
}

void check_dense_size(double elements, const std::string& what) {
  if (elements > dense_limit)
    throw usage_error(what + " would have " + std::to_string(static_cast<long long>(elements)) +
                      " elements (more than 2^28)");
}

/// Loads a dense operand from a Matrix Market file; rows must match.
template <class V>
dense_operand<V> load_operand(const std::string& name, const std::string& path, index_t rows, bool vector) {
  io::mm_header h;
  const coo_list<cplx> raw = io::read_matrix_market<cplx, index_t>(path, &h);
  if (h.field == io::mm_header::field_kind::complex && !std::is_same_v<V, cplx>)
    throw usage_error("operand " + name + " (" + path + ") is complex but the input is real");
  dense_operand<V> d;
  d.rows = raw.dims()[0];
  d.cols = raw.order() == 1 ? 1 : raw.dims()[1];
  if (d.rows != rows)
    throw usage_error("operand " + name + " (" + path + ") has " + std::to_string(d.rows) + " rows; the kernel needs " +
                      std::to_string(rows));
  if (vector && d.cols != 1)
    throw usage_error("operand " + name + " (" + path + ") must be a vector (" + std::to_string(rows) + " x 1), not " +
                      std::to_string(d.rows) + " x " + std::to_string(d.cols));
  check_dense_size(static_cast<double>(d.rows) * static_cast<double>(d.cols), "operand " + name);
  d.data.assign(static_cast<std::size_t>(d.rows) * static_cast<std::size_t>(d.cols), V{});
  for (std::size_t e = 0; e < raw.size(); ++e) {
    const auto c = raw.coords(e);
    const std::size_t col = raw.order() == 1 ? 0 : static_cast<std::size_t>(c[1]);
    d.data[static_cast<std::size_t>(c[0]) * static_cast<std::size_t>(d.cols) + col] += convert_value<V>(raw.value(e));
  }
  return d;
}

// ---------------------------------------------------------------------------
// Output.

std::string json_escape(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

struct skipped_format {
  std::string format, reason;
  double bytes = 0, work = 0;  ///< the estimates (skipped for the budget)
};

struct report {
  std::string file, field, value_type;
  std::vector<long long> dims;
  std::size_t nnz = 0;
  double flops = 0, tol = 0, ref_max = 0;
  std::string operands;  // description for the table
  budget limits;
  double rep_seconds = 1;
  int rounds = 1;
  int threads = 1;
  std::string device;  ///< --device: the space, described; empty otherwise
  std::vector<format_result> results;
  std::vector<format_estimate> estimates;  ///< of each result
  std::vector<bool> ok;
  std::vector<skipped_format> skipped, failed;
  std::optional<std::size_t> best_single, best_repeated;
};

void print_json(std::ostream& os, kernel_id k, const report& r, int reps) {
  const kernel_info& info = kernels[static_cast<int>(k)];
  os << "{\"kernel\":" << json_escape(info.name) << ",\"statement\":" << json_escape(info.statement)
     << ",\"file\":" << json_escape(r.file) << ",\"field\":" << json_escape(r.field)
     << ",\"value_type\":" << json_escape(r.value_type) << ",\"dims\":[";
  for (std::size_t d = 0; d < r.dims.size(); ++d) os << (d ? "," : "") << r.dims[d];
  os << "],\"nnz\":" << r.nnz << ",\"flops\":" << json_number(r.flops) << ",\"reps\":" << reps
     << ",\"tolerance\":" << json_number(r.tol) << ",\"max_bytes\":" << json_number(r.limits.bytes)
     << ",\"max_work\":" << json_number(r.limits.work) << ",\"rep_seconds\":" << json_number(r.rep_seconds)
     << ",\"rounds\":" << r.rounds
     << ",\"threads\":" << r.threads << ",\"device\":" << (r.device.empty() ? "null" : json_escape(r.device))
     << ",\"results\":[";
  for (std::size_t x = 0; x < r.results.size(); ++x) {
    const auto& f = r.results[x];
    os << (x ? "," : "") << "{\"format\":" << json_escape(f.format) << ",\"convert_ms\":" << json_number(f.convert_ms)
       << ",\"kernel_ms\":" << json_number(f.kernel_ms) << ",\"gflops\":" << json_number(f.gflops)
       << ",\"max_abs_err\":" << json_number(f.max_abs_err) << ",\"ok\":" << (r.ok[x] ? "true" : "false")
       << ",\"packs\":" << f.packs << ",\"runs\":" << f.runs
       << ",\"device_form\":" << (f.device_form ? "true" : "false")
       << ",\"bytes_estimate\":" << json_number(r.estimates[x].bytes)
       << ",\"work_estimate\":" << json_number(r.estimates[x].work) << "}";
  }
  os << "],\"skipped\":[";
  for (std::size_t x = 0; x < r.skipped.size(); ++x)
    os << (x ? "," : "") << "{\"format\":" << json_escape(r.skipped[x].format)
       << ",\"reason\":" << json_escape(r.skipped[x].reason)
       << ",\"bytes_estimate\":" << json_number(r.skipped[x].bytes)
       << ",\"work_estimate\":" << json_number(r.skipped[x].work) << "}";
  os << "],\"failed\":[";
  for (std::size_t x = 0; x < r.failed.size(); ++x)
    os << (x ? "," : "") << "{\"format\":" << json_escape(r.failed[x].format)
       << ",\"error\":" << json_escape(r.failed[x].reason) << "}";
  os << "],\"best_single\":" << (r.best_single ? json_escape(r.results[*r.best_single].format) : "null")
     << ",\"best_repeated\":" << (r.best_repeated ? json_escape(r.results[*r.best_repeated].format) : "null") << "}\n";
}

void print_table(std::ostream& os, kernel_id k, const report& r, int reps) {
  const kernel_info& info = kernels[static_cast<int>(k)];
  std::string dims;
  for (std::size_t d = 0; d < r.dims.size(); ++d) dims += (d ? " x " : "") + std::to_string(r.dims[d]);
  char buf[512];
  os << "kernel    " << info.name << ": " << info.statement << "\n";
  os << "file      " << r.file << ": " << dims << ", " << r.nnz << " entries (" << r.field << " -> " << r.value_type
     << ")\n";
  if (!r.operands.empty()) os << "operands  " << r.operands << "\n";
  std::snprintf(buf, sizeof buf, "flops     %.0f per kernel run (%s)\n", r.flops, flop_rule(k));
  os << buf;
  os << "reps      " << reps << " at most (times are medians; fewer once they took " << r.rep_seconds << " s)";
  if (r.rounds > 1) os << " in each of " << r.rounds << " rounds over the formats, the smallest medians kept";
  os << "; result: " << info.result << "\n";
  if (r.threads > 1 && r.device.empty()) os << "threads   " << r.threads << " (Kokkos' host space)\n";
  if (!r.device.empty()) os << "device    the device form on " << r.device << "\n";
  std::snprintf(buf, sizeof buf, "budget    %s, %.4g work steps per format (--max-bytes, --max-work)\n\n",
                bytes_text(r.limits.bytes).c_str(), r.limits.work);
  os << buf;
  std::snprintf(buf, sizeof buf, "%-10s %12s %12s %5s %10s %12s  %-5s %11s %10s\n", "format", "convert ms", "kernel ms",
                "runs", "GFLOP/s", "max |err|", "check", "est. bytes", "est. work");
  os << buf;
  for (std::size_t x = 0; x < r.results.size(); ++x) {
    const auto& f = r.results[x];
    std::snprintf(buf, sizeof buf, "%-10s %12.4f %12.4f %5d %10.4f %12.3e  %-5s %11s %10.3g\n", f.format.c_str(),
                  f.convert_ms, f.kernel_ms, f.runs, f.gflops, f.max_abs_err, r.ok[x] ? "ok" : "WRONG",
                  bytes_text(r.estimates[x].bytes).c_str(), r.estimates[x].work);
    os << buf;
  }
  for (const auto& f : r.failed) os << f.format << std::string(f.format.size() < 10 ? 11 - f.format.size() : 1, ' ')
                                    << "FAILED: " << f.reason << "\n";
  for (const auto& s : r.skipped) os << "skipped   " << s.format << ": " << s.reason << "\n";
  std::snprintf(buf, sizeof buf, "\ntolerance %.3e = 1e-8 * (1 + max |reference| = %.6g)\n", r.tol, r.ref_max);
  os << buf;
  if (r.best_single) {
    const auto& b = r.results[*r.best_single];
    std::snprintf(buf, sizeof buf, "fastest correct format for one product (convert + 1 kernel): %s (%.4f ms)\n",
                  b.format.c_str(), b.convert_ms + b.kernel_ms);
    os << buf;
  }
  if (r.best_repeated) {
    const auto& b = r.results[*r.best_repeated];
    std::snprintf(buf, sizeof buf, "fastest correct format for many products (kernel only):      %s (%.4f ms)\n",
                  b.format.c_str(), b.kernel_ms);
    os << buf;
  }
  if (r.results.empty())
    os << "no format was run (all skipped or failed)\n";
  else if (!r.best_single)
    os << "no format produced a correct result\n";
}

template <class V>
void write_result(const std::string& path, const result_tensor<V>& t) {
  const auto& d = t.dims;
  if (t.dense) {
    if (d.size() <= 2) {
      const std::size_t rows = d.empty() ? 1 : static_cast<std::size_t>(d[0]);
      const std::size_t cols = d.size() < 2 ? 1 : static_cast<std::size_t>(d[1]);
      std::vector<V> col_major(rows * cols);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) col_major[c * rows + r] = t.values[r * cols + c];
      io::write_matrix_market_array(path, rows, cols, col_major);
    } else {  // dense 3-tensor: every component, as FROSTT
      coo_list<V> list(std::vector<index_t>(d.begin(), d.end()));
      list.reserve(t.values.size());
      std::size_t x = 0;
      for (index_t a = 0; a < d[0]; ++a)
        for (index_t b = 0; b < d[1]; ++b)
          for (index_t c = 0; c < d[2]; ++c) list.push_back({a, b, c}, t.values[x++]);
      io::write_frostt(path, list);
    }
  } else if (d.size() == 2) {
    io::write_matrix_market(path, t.entries);
  } else {
    io::write_frostt(path, t.entries);
  }
}

// ---------------------------------------------------------------------------
// One input file.

template <class V>
std::span<const runner<V>> table_of(kernel_id k) {
  const V* tag = nullptr;
  switch (k) {
    case kernel_id::spmv: return table_spmv(tag);
    case kernel_id::spmm: return table_spmm(tag);
    case kernel_id::add: return table_add(tag);
    case kernel_id::spgemm: return table_spgemm(tag);
    case kernel_id::sddmm: return table_sddmm(tag);
    default: break;
  }
  if constexpr (std::is_same_v<V, cplx>) {
    throw usage_error("third-order kernels take real tensors only");
  } else {
    switch (k) {
      case kernel_id::ttv: return table_ttv(tag);
      case kernel_id::ttm: return table_ttm(tag);
      case kernel_id::mttkrp: return table_mttkrp(tag);
      case kernel_id::innerprod: return table_innerprod(tag);
      case kernel_id::plus: return table_plus(tag);
      default: break;
    }
  }
  return {};
}

/// --device: the device-form runners (real values only).
template <class V>
std::span<const runner<V>> device_table_of(kernel_id k) {
  if constexpr (std::is_same_v<V, cplx>) {
    (void)k;
    throw usage_error("--device: complex values are not run in the device form (real and pattern inputs only)");
  } else {
    return device_table(k);
  }
}

/// Progress lines on stderr ("tl-explore: FILE: [3/9] dia: packing"; with
/// --rounds "tl-explore: FILE: round 2 of 3, [3/9] dia: packing"), so
/// that a long run shows which format it is in; stdout keeps the report.
struct progress {
  bool quiet = false;
  std::string prefix;  // "tl-explore: FILE: [3/9] dia: "
  void say(const std::string& what) const {
    if (!quiet) std::cerr << prefix << what << std::endl;
  }
  static void phase(const void* self, const char* what) { static_cast<const progress*>(self)->say(what); }
};

template <class V>
int run_file(const cli& c, const std::string& path, coo_list<V> input, const std::string& field) {
  // The runners first: --device refuses complex values before any work.
  const auto table = c.device ? device_table_of<V>(c.kernel) : table_of<V>(c.kernel);
  problem<V> p;
  p.A = std::move(input);
  const coo_list<V>& A = p.A;
  const kernel_id k = c.kernel;
  const kernel_info& info = kernels[static_cast<int>(k)];
  report rep;
  rep.file = path;
  rep.field = field;
  rep.value_type = std::is_same_v<V, cplx> ? "complex<double>" : "double";
  for (auto d : A.dims()) rep.dims.push_back(d);
  rep.nnz = A.size();
  const auto& dims = A.dims();
  if ((k == kernel_id::add || k == kernel_id::spgemm) && dims[0] != dims[1])
    throw usage_error("kernel " + std::string(info.name) + " needs a square matrix; " + path + " is " +
                      std::to_string(dims[0]) + " x " + std::to_string(dims[1]));

  if (k == kernel_id::add) {
    std::vector<index_t> tc(A.raw_coords().size());
    for (std::size_t e = 0; e < A.size(); ++e) tc[2 * e] = A.coords(e)[1], tc[2 * e + 1] = A.coords(e)[0];
    p.At = coo_list<V>({dims[1], dims[0]}, std::move(tc), A.raw_values());
  }

  // Dense operands: loaded ones fix --cols / --rank, the others are generated.
  index_t rank = c.rank, cols = c.cols;
  std::optional<index_t> file_rank;
  p.operands.resize(static_cast<std::size_t>(info.num_operands));
  std::vector<bool> loaded(p.operands.size(), false);
  std::string opdesc;
  for (int o = 0; o < info.num_operands; ++o) {
    const operand_info& oi = info.operands[o];
    for (const auto& [name, file] : c.operands) {
      if (name != oi.name) continue;
      auto d = load_operand<V>(std::string(name), file, dims[static_cast<std::size_t>(oi.row_dim)], oi.cols == col_kind::one);
      if (oi.cols == col_kind::rank) {
        if (file_rank && *file_rank != d.cols)
          throw usage_error("operands disagree on the rank: " + std::to_string(*file_rank) + " and " +
                            std::to_string(d.cols) + " columns");
        file_rank = d.cols;
        rank = d.cols;
      }
      if (oi.cols == col_kind::cols) cols = d.cols;
      p.operands[static_cast<std::size_t>(o)] = std::move(d);
      loaded[static_cast<std::size_t>(o)] = true;
      opdesc += (opdesc.empty() ? "" : ", ") + std::string(name) + " from " + file;
    }
  }
  std::mt19937_64 rng(c.seed);
  for (int o = 0; o < info.num_operands; ++o) {
    const operand_info& oi = info.operands[o];
    auto& d = p.operands[static_cast<std::size_t>(o)];
    if (!loaded[static_cast<std::size_t>(o)]) {
      d.rows = dims[static_cast<std::size_t>(oi.row_dim)];
      d.cols = oi.cols == col_kind::one ? 1 : oi.cols == col_kind::cols ? cols : rank;
      check_dense_size(static_cast<double>(d.rows) * static_cast<double>(d.cols), "operand " + std::string(oi.name));
      d.data.resize(static_cast<std::size_t>(d.rows) * static_cast<std::size_t>(d.cols));
      for (auto& v : d.data) v = random_value<V>(rng);
      opdesc += (opdesc.empty() ? "" : ", ") + std::string(oi.name) + " " + std::to_string(d.rows) + " x " +
                std::to_string(d.cols) + " random (seed " + std::to_string(c.seed) + ")";
    }
  }
  rep.operands = opdesc;
  const double extra = k == kernel_id::spmm ? static_cast<double>(cols) : static_cast<double>(rank);
  // Dense results must fit.
  {
    double out = 1;
    if (k == kernel_id::spmv) out = static_cast<double>(dims[0]);
    if (k == kernel_id::spmm) out = static_cast<double>(dims[0]) * cols;
    if (k == kernel_id::ttv) out = static_cast<double>(dims[0]) * static_cast<double>(dims[1]);
    if (k == kernel_id::ttm) out = static_cast<double>(dims[0]) * static_cast<double>(dims[1]) * rank;
    if (k == kernel_id::mttkrp) out = static_cast<double>(dims[0]) * rank;
    check_dense_size(out, "the dense result");
  }

  // Each format's cost on this input, estimated from the coordinate list
  // before anything is packed; formats over the budget are skipped.
  rep.limits = c.limits;
  rep.rep_seconds = c.rep_seconds;
  rep.rounds = c.rounds;
  rep.threads = c.device ? c.device_threads : c.threads;
  rep.device = c.device_space;
  const input_stats stats = measure_input(A.dims(), A.raw_coords());
  std::vector<format_estimate> est(c.formats.size());
  std::vector<std::string> over(c.formats.size());
  std::size_t to_run = 0;
  for (std::size_t x = 0; x < c.formats.size(); ++x) {
    est[x] = estimate_format(k, c.formats[x], stats, sizeof(V), extra);
    over[x] = budget_skip(est[x], c.limits);
    to_run += over[x].empty();
  }

  progress prog{c.quiet, "tl-explore: " + path + ": "};
  // The reference costs about as much as the cheapest format; it is not
  // computed when every format is skipped.
  reference<V> ref;
  if (to_run > 0) {
    prog.say("computing the reference (" + std::to_string(to_run) + " of " + std::to_string(c.formats.size()) +
             " formats fit the budget)");
    ref = compute_reference(k, p);
  }
  rep.flops = ref.flops;
  rep.ref_max = ref.max_abs;
  rep.tol = 1e-8 * (1.0 + ref.max_abs);

  run_options opt;
  opt.reps = c.reps;
  opt.rep_seconds = c.rep_seconds;
  if (c.threads > 1 && !c.device) opt.ex = threads_executor(c.threads);
  opt.progress = &progress::phase;
  result_tensor<V> result;
  bool captured = false;
  // Each format's entry in rep.results once it has run; a format that
  // failed is not run again.
  std::vector<std::optional<std::size_t>> slot(c.formats.size());
  std::vector<bool> failed(c.formats.size(), false);
  for (int round = 0; round < c.rounds; ++round) {
    for (std::size_t x = 0; x < c.formats.size(); ++x) {
      const std::size_t f = c.formats[x];
      const std::string fname(format_name(info.order, f));
      progress fprog{c.quiet, prog.prefix +
                                  (c.rounds > 1 ? "round " + std::to_string(round + 1) + " of " +
                                                      std::to_string(c.rounds) + ", "
                                                : std::string()) +
                                  "[" + std::to_string(x + 1) + "/" + std::to_string(c.formats.size()) + "] " + fname +
                                  ": "};
      if (!over[x].empty()) {
        if (round == 0) {
          fprog.say("skipped: " + over[x]);
          rep.skipped.push_back({fname, over[x], est[x].bytes, est[x].work});
        }
        continue;
      }
      if (failed[x]) continue;
      const runner<V> run = f < table.size() ? table[f] : nullptr;
      if (run == nullptr) {  // cannot happen: parse_args checked unsupported_reason
        rep.failed.push_back({fname, "not instantiated"});
        failed[x] = true;
        continue;
      }
      opt.progress_ctx = &fprog;
      const auto start = std::chrono::steady_clock::now();
      try {
        const bool want = !c.output.empty() && !captured;
        format_result r = run(p, ref, opt, want ? &result : nullptr);
        captured = captured || want;
        const bool ok = r.max_abs_err <= rep.tol;
        char buf[160];
        std::snprintf(buf, sizeof buf, "done in %.2f s (%d packs, %d kernel runs; kernel %.4f ms)%s",
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), r.packs, r.runs,
                      r.kernel_ms, ok ? "" : ", WRONG result");
        if (!slot[x]) {
          slot[x] = rep.results.size();
          rep.results.push_back(std::move(r));
          rep.estimates.push_back(est[x]);
          rep.ok.push_back(ok);
        } else {
          // Later rounds: the smallest pack and kernel medians (not
          // necessarily of one round), every run counted, the largest
          // error (a round that disagrees makes the format wrong).
          format_result& b = rep.results[*slot[x]];
          b.convert_ms = std::min(b.convert_ms, r.convert_ms);
          if (r.kernel_ms < b.kernel_ms) b.kernel_ms = r.kernel_ms, b.gflops = r.gflops;
          b.max_abs_err = std::max(b.max_abs_err, r.max_abs_err);
          b.packs += r.packs;
          b.runs += r.runs;
          rep.ok[*slot[x]] = rep.ok[*slot[x]] && ok;
        }
        fprog.say(buf);
      } catch (const std::bad_alloc&) {
        rep.failed.push_back({fname, "out of memory"});
        failed[x] = true;
        fprog.say("failed: out of memory");
      } catch (const tensorlev::error& e) {
        rep.failed.push_back({fname, e.what()});
        failed[x] = true;
        fprog.say(std::string("failed: ") + e.what());
      }
      // Failed after an earlier round succeeded: that result is not named
      // best (the run exits with the mismatch status either way).
      if (failed[x] && slot[x]) rep.ok[*slot[x]] = false;
    }
  }
  for (std::size_t x = 0; x < rep.results.size(); ++x) {
    if (!rep.ok[x]) continue;
    const auto& r = rep.results[x];
    if (!rep.best_single || r.convert_ms + r.kernel_ms < rep.results[*rep.best_single].convert_ms +
                                                              rep.results[*rep.best_single].kernel_ms)
      rep.best_single = x;
    if (!rep.best_repeated || r.kernel_ms < rep.results[*rep.best_repeated].kernel_ms) rep.best_repeated = x;
  }
  if (c.json)
    print_json(std::cout, k, rep, c.reps);
  else
    print_table(std::cout, k, rep, c.reps);
  std::cout.flush();

  if (!c.output.empty()) {
    if (!result.present) throw usage_error("--output: no format ran, nothing to write");
    write_result(c.output, result);
  }
  const bool all_ok = std::all_of(rep.ok.begin(), rep.ok.end(), [](bool b) { return b; });
  if (!all_ok) {
    std::cerr << "tl-explore: " << path << ": a format disagrees with the reference\n";
    return exit_mismatch;
  }
  if (!rep.failed.empty()) {
    std::cerr << "tl-explore: " << path << ": format " << rep.failed.front().format
              << " failed: " << rep.failed.front().reason << "\n";
    return exit_mismatch;
  }
  if (rep.results.empty()) {
    std::cerr << "tl-explore: " << path << ": no format could be run (all skipped)\n";
    return exit_mismatch;
  }
  return 0;
}

int run_input(const cli& c, const std::string& path) {
  const kernel_info& info = kernels[static_cast<int>(c.kernel)];
  const std::string ext = extension(path);
  if (ext == ".mtx") {
    if (info.order != 2)
      throw usage_error("kernel " + std::string(info.name) + " needs a third-order FROSTT .tns file; " + path +
                        " is a Matrix Market file");
    io::mm_header h;
    coo_list<cplx> raw = io::read_matrix_market<cplx, index_t>(path, &h);
    if (raw.order() != 2) throw usage_error(path + ": a Matrix Market vector; kernel " + std::string(info.name) +
                                            " needs a matrix");
    const std::string field = io::to_string(h.field);
    if (h.field == io::mm_header::field_kind::complex) return run_file<cplx>(c, path, std::move(raw), field);
    return run_file<double>(c, path, convert_list<double>(raw), field);
  }
  if (ext == ".tns") {
    if (info.order != 3)
      throw usage_error("kernel " + std::string(info.name) + " needs a Matrix Market .mtx matrix; " + path +
                        " is a FROSTT tensor");
    coo_list<double> t = io::read_frostt<double, index_t>(path);
    if (t.order() != 3)
      throw usage_error(path + ": a tensor of order " + std::to_string(t.order()) + "; kernel " +
                        std::string(info.name) + " needs order 3");
    return run_file<double>(c, path, std::move(t), "real");
  }
  throw usage_error(path + ": unknown file type '" + ext + "' (expected .mtx or .tns)");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const cli c = parse_args(argc, argv);
    int status = 0;
    for (const auto& f : c.files) status = std::max(status, run_input(c, f));
    return status;
  } catch (const usage_error& e) {
    std::cerr << "tl-explore: " << e.what() << "\n";
  } catch (const tensorlev::error& e) {
    std::cerr << "tl-explore: " << e.what() << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << "tl-explore: out of memory\n";
  } catch (const std::exception& e) {
    std::cerr << "tl-explore: " << e.what() << "\n";
  }
  return exit_usage;
}
