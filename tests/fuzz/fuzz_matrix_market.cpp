// libFuzzer harness: the Matrix Market reader, then pack, convert and SpMV.
//
// The input is a .mtx file. It is read with several value and index types
// (double/int32, complex<double>/int64, float/int32, int/int32: the
// last only read, round-tripped and packed without summing); anything the
// reader rejects must be a tensorlev::error (any other exception, crash,
// leak or sanitizer report is a finding). What it accepts is
//  - written back with write_matrix_market and read again: same entries,
//    bit for bit;
//  - packed into COO, COO-AoS, CSR, CSC, DCSR, hash rows, ELL, DIA, BCSR,
//    CSB and dense (formats whose storage follows the extents only when the
//    parsed list is small enough: tlfuzz::max_cells, max_stored), each checked against
//    a reference that combines duplicates in input order, and converted to
//    another format (chosen from the input's hash) keeping or dropping
//    stored zeros, checked the same way;
//  - with small integer values, multiplied with a dense vector
//    (y(i) = A(i,j) * x(j)) in several formats and compared exactly with a
//    loop over the coordinate list.
// A wrong result traps (TLF_CHECK).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "fuzz_support.hpp"
#include "tensorlev/io/matrix_market.hpp"

namespace {
using namespace tlfuzz;
using namespace tensorlev::indices;

struct hash_rows : format<levels<dense<>, hashed<>>> {
  static constexpr std::string_view name = "hash rows";
};

using pack_formats =
    std::tuple<coo, coo_aos, csr, csc, dcsr, hash_rows, ell, dia, bcsr<2>, csb<2>, dense_row_major, dense_col_major>;

/// Whether packing F stays within the bounds (fuzz_support.hpp).
template <class F>
bool fits(const matrix_stats& s) {
  if constexpr (std::is_same_v<F, coo> || std::is_same_v<F, coo_aos> || std::is_same_v<F, dcsr>)
    return true;  // storage follows the entries only
  else if constexpr (std::is_same_v<F, csr> || std::is_same_v<F, bcsr<2>>)
    return extent_fits(s.rows, 1);
  else if constexpr (std::is_same_v<F, csc>)
    return extent_fits(s.cols, 1);
  else if constexpr (std::is_same_v<F, hash_rows>)  // rows x (power of two >= 2 * longest row) buckets
    return extent_fits(s.rows) && stored_fits(s.rows, 4 * std::max<long long>(1, s.longest_row));
  else if constexpr (std::is_same_v<F, ell>)  // rows x longest row slots, a rank per row
    return extent_fits(s.rows) && stored_fits(s.rows, s.longest_row);
  else if constexpr (std::is_same_v<F, dia>)  // diagonals x rows values, a mark per possible diagonal
    return extent_fits(s.rows, s.cols) && stored_fits(s.diagonals, s.rows);
  else if constexpr (std::is_same_v<F, csb<2>>)  // a dense grid of 2 x 2 blocks
    return stored_fits(s.rows / 2 + 1, s.cols / 2 + 1);
  else  // dense
    return stored_fits(s.rows, s.cols);
}

template <std::size_t K, class Fn>
void with_format(std::size_t k, Fn&& f) {
  if constexpr (K < std::tuple_size_v<pack_formats>) {
    if (k == K)
      f(std::type_identity<std::tuple_element_t<K, pack_formats>>{});
    else
      with_format<K + 1>(k, f);
  }
}

/// Reads the input with value type V and index type I; false if the reader
/// rejected it (with a tensorlev::error).
template <class V, class I>
bool read(const std::string& text, coordinate_list<V, I>& out, io::mm_header& h) {
  std::istringstream in(text);
  try {
    out = io::read_matrix_market<V, I>(in, "fuzz.mtx", &h);
  } catch (const tensorlev::error&) {
    return false;
  }
  return true;
}

/// What the reader promises about an accepted file, and the writer round trip.
template <class V, class I>
void check_read(const coordinate_list<V, I>& list, const io::mm_header& h) {
  const bool vec = h.object == io::mm_header::object_kind::vector;
  TLF_CHECK(list.order() == (vec ? 1u : 2u));
  TLF_CHECK(list.dims()[0] == h.rows);
  if (!vec) TLF_CHECK(list.dims()[1] == h.cols);
  const bool sym = h.symmetry != io::mm_header::symmetry_kind::general;
  TLF_CHECK(static_cast<long long>(list.size()) >= h.entries);
  // At most one mirror per entry (entries may be 2^63 - 1: no 2 * entries).
  TLF_CHECK(static_cast<long long>(list.size()) - h.entries <= (sym ? h.entries : 0));

  std::ostringstream out;
  io::write_matrix_market(out, list);
  std::istringstream back(out.str());
  coordinate_list<V, I> again;
  try {
    again = io::read_matrix_market<V, I>(back, "roundtrip.mtx");
  } catch (const tensorlev::error& e) {
    std::fprintf(stderr, "re-reading what write_matrix_market wrote failed: %s\n", e.what());
    TLF_CHECK(false);
  }
  TLF_CHECK(again.order() == 2 && again.dims()[0] == list.dims()[0]);
  TLF_CHECK(again.dims()[1] == (vec ? 1 : list.dims()[1]));
  TLF_CHECK(again.size() == list.size());
  for (std::size_t e = 0; e < list.size(); ++e) {
    TLF_CHECK(again.coords(e)[0] == list.coords(e)[0]);
    TLF_CHECK(again.coords(e)[1] == (vec ? 0 : list.coords(e)[1]));
    TLF_CHECK(identical(again.value(e), list.value(e)));
  }
}

/// Whether F's 2 x 2 blocks round an extent up past the index type: pack
/// must then throw overflow_error (the only error a valid list may give).
template <class F, class I>
bool blocks_overflow(const matrix_stats& s) {
  if constexpr (std::is_same_v<F, bcsr<2>> || std::is_same_v<F, csb<2>>) {
    constexpr long long top = std::numeric_limits<I>::max();
    return (s.rows == top && top % 2 != 0) || (s.cols == top && top % 2 != 0);
  } else {
    return false;
  }
}

/// make() packs into F: its result when F fits, nothing (after checking
/// that it throws overflow_error) when F's blocks overflow I.
template <class F, class I, class Make>
auto packed(const matrix_stats& s, Make make) -> std::optional<decltype(make())> {
  if (!fits<F>(s)) return std::nullopt;
  if (blocks_overflow<F, I>(s)) {
    bool threw = false;
    try {
      (void)make();
    } catch (const overflow_error&) {
      threw = true;
    }
    TLF_CHECK(threw);
    return std::nullopt;
  }
  return make();
}

/// Packs into F (when it fits) and checks it; converts to the format `to`.
template <class F, class V, class I>
void pack_and_convert(const coordinate_list<V, I>& list, const entry_map<V, I>& ref, const matrix_stats& s,
                      std::size_t to, std::uint64_t sel) {
  const auto t = packed<F, I>(s, [&] { return pack<F>(list); });
  if (!t) return;
  check_stores(*t, ref);
  with_format<0>(to, [&]<class G>(std::type_identity<G>) {
    // convert packs what t stores (ELL padding, DIA's zeros too, unless
    // dropped): the bounds follow that, not the list.
    const stored_zeros zeros = (sel & 1) != 0 ? stored_zeros::drop : stored_zeros::keep;
    coordinate_list<V, I> stored(list.dims());
    for_each_component(*t, [&](const auto& x, const V& v) {
      if (zeros == stored_zeros::keep || v != V{}) stored.push_back(std::span<const I>(x), v);
    });
    const auto u = packed<G, I>(stats_of(stored), [&] { return convert<G>(*t, zeros); });
    if (u) check_stores(*u, ref, zeros == stored_zeros::drop);
  });
}

/// The duplicate policies other than sum, on one format.
template <class F, class V, class I>
void check_policy(const coordinate_list<V, I>& list, const matrix_stats& s, duplicates policy) {
  if (!fits<F>(s)) return;
  bool dup = false;
  const auto ref = combine(list, policy, &dup);
  if (policy == duplicates::error) {
    try {
      const auto t = pack<F>(list, policy);
      TLF_CHECK(!dup);
      check_stores(t, ref);
    } catch (const duplicate_error&) {
      TLF_CHECK(dup);
    }
    return;
  }
  check_stores(pack<F>(list, policy), ref);
  // On an executor (chunks without threads): CSR and CSC take the chunked pack.
  check_stores(pack<F>(chunked_serial_executor(3), list, policy), ref);
}

/// y(i) = A(i,j) * x(j) with A in format F, against a loop over the list.
template <class F, class V, class I>
void check_spmv(const coordinate_list<V, I>& list, const matrix_stats& s, const std::vector<V>& x,
                const std::vector<V>& want) {
  if (!fits<F>(s)) return;
  const auto A = pack<F>(list);
  tensor<V, dense_vector, I> xt(std::array<I, 1>{static_cast<I>(s.cols)});
  std::copy(x.begin(), x.end(), xt.values().begin());
  tensor<V, dense_vector, I> y(std::array<I, 1>{static_cast<I>(s.rows)});
  for (auto& v : y.values()) v = V(99);  // '=' overwrites
  y(i) = A(i, j) * xt(j);
  for (std::size_t r = 0; r < want.size(); ++r) TLF_CHECK(same(y.values()[r], want[r]));
}

template <class V, class I>
void spmv(const coordinate_list<V, I>& list, const matrix_stats& s) {
  if (!extent_fits(s.rows) || !extent_fits(s.cols)) return;
  const auto small = small_integer_values(list);
  std::vector<V> x(static_cast<std::size_t>(s.cols)), want(static_cast<std::size_t>(s.rows), V(0));
  for (std::size_t c = 0; c < x.size(); ++c) x[c] = V(static_cast<double>(c % 7) - 3);
  for (std::size_t e = 0; e < small.size(); ++e) {
    const auto c = small.coords(e);
    want[static_cast<std::size_t>(c[0])] += small.value(e) * x[static_cast<std::size_t>(c[1])];
  }
  check_spmv<csr>(small, s, x, want);
  check_spmv<coo>(small, s, x, want);
  if constexpr (!is_complex<V>::value) {
    check_spmv<csc>(small, s, x, want);
    check_spmv<dcsr>(small, s, x, want);
    check_spmv<ell>(small, s, x, want);
    check_spmv<dia>(small, s, x, want);
  }
}

/// A vector object (order 1).
template <class V, class I>
void vector_case(const coordinate_list<V, I>& list) {
  const auto ref = combine(list, duplicates::sum);
  check_stores(pack<sparse_vector>(list), ref);
  if (stored_fits(1, list.dims()[0])) {
    const auto d = pack<dense_vector>(list);
    check_stores(d, ref);
    check_stores(convert<sparse_vector>(d, stored_zeros::drop), ref, true);
  }
}

enum class depth { read, pack, kernels };

/// The pipeline for value type V and index type I, to the given depth.
/// Integer values stop before anything that sums them (their overflow would
/// be the harness's undefined behaviour, not the library's).
template <class V, class I, depth D>
void run(const std::string& text, std::uint64_t sel) {
  coordinate_list<V, I> list;
  io::mm_header h;
  if (!read(text, list, h)) return;
  check_read(list, h);
  if constexpr (D == depth::read) {
    if (list.order() == 2) {
      const matrix_stats s = stats_of(list);
      check_policy<csr>(list, s, duplicates::first);
      check_policy<coo>(list, s, duplicates::last);
      check_policy<dcsr>(list, s, duplicates::error);
      check_policy<csc>(list, s, duplicates::sum);
    }
    return;
  }
  if (list.order() == 1) {
    vector_case(list);
    return;
  }
  const matrix_stats s = stats_of(list);
  const auto ref = combine(list, duplicates::sum);
  constexpr std::size_t nf = std::tuple_size_v<pack_formats>;
  const std::size_t shift = 1 + static_cast<std::size_t>((sel >> 8) % (nf - 1));
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    (pack_and_convert<std::tuple_element_t<K, pack_formats>>(list, ref, s, (K + shift) % nf, sel >> (K + 1)), ...);
  }(std::make_index_sequence<nf>{});
  const duplicates policy = (sel >> 20) % 3 == 0 ? duplicates::first
                            : (sel >> 20) % 3 == 1 ? duplicates::last
                                                    : duplicates::error;
  check_policy<csr>(list, s, policy);
  check_policy<coo>(list, s, policy);
  check_policy<ell>(list, s, policy);
  check_policy<csc>(list, s, duplicates::sum);
  if constexpr (D == depth::kernels) spmv(list, s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::uint64_t sel = input_hash(data, size);
  run<double, std::int32_t, depth::kernels>(text, sel);
  run<std::complex<double>, std::int64_t, depth::kernels>(text, sel);
  run<float, std::int32_t, depth::pack>(text, sel);
  run<int, std::int32_t, depth::read>(text, sel);
  return 0;
}
