// libFuzzer harness: the FROSTT .tns reader, then pack, convert and kernels.
//
// The input is a .tns file. It is read with several value and index types
// (double/int32, complex<double>/int64, float/int32, int/int32: the last
// only read, round-tripped and packed without summing); anything the reader
// rejects must be a tensorlev::error (any other exception, crash, leak or
// sanitizer report is a finding). What it accepts (orders 1 to 4; higher
// orders are only read and round-tripped) is
//  - checked against the reader's promises (dims = largest coordinates),
//    written back with write_frostt and read again with and without dims
//    (same entries, bit for bit), and read with one dimension too small
//    (must be an io_error);
//  - packed into COO, COO-AoS, CSF, dense and (order 3) mode-generic and
//    dense-CSF (formats whose storage follows the extents only when small
//    enough: tlfuzz::max_cells, max_stored), checked against a reference that combines
//    duplicates in input order, and converted to another of them;
//  - with small integer values, reduced by an inner product of its CSF and
//    COO forms (and, for order 3, multiplied by a dense vector: TTV),
//    compared exactly with a loop over the coordinate list.
// A wrong result traps (TLF_CHECK).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>

#include "fuzz_support.hpp"
#include "tensorlev/io/frostt.hpp"

namespace {
using namespace tlfuzz;
using namespace tensorlev::indices;

template <std::size_t N>
struct formats_of {
  using type = std::tuple<coo_tensor<N>, coo_aos_tensor<N>, csf_tensor<N>, dense_tensor<N>>;
};
template <>
struct formats_of<1> {
  using type = std::tuple<sparse_vector, hash_vector, dense_vector>;
};
template <>
struct formats_of<3> {
  using type = std::tuple<coo_tensor<3>, coo_aos_tensor<3>, csf, dense_tensor<3>, mode_generic,
                          format<levels<dense<>, compressed<>, compressed<>>>>;
};

/// Whether packing F stays within the bounds (fuzz_support.hpp).
template <class F, class I, std::size_t N>
bool fits(const std::array<I, N>& dims, std::size_t entries) {
  constexpr bool all_compressed = std::is_same_v<F, coo_tensor<N>> || std::is_same_v<F, coo_aos_tensor<N>> ||
                                  std::is_same_v<F, csf_tensor<N>> || std::is_same_v<F, sparse_vector>;
  if constexpr (all_compressed) {
    return true;  // storage follows the entries only
  } else if constexpr (std::is_same_v<F, hash_vector>) {  // power of two >= 2 * entries buckets
    return stored_fits(4, static_cast<long long>(entries));
  } else if constexpr (std::is_same_v<F, mode_generic>) {  // one dense row of dims[2] per (i, j) fiber
    return stored_fits(static_cast<long long>(entries), dims[2]);
  } else if constexpr (N == 3 && std::is_same_v<F, format<levels<dense<>, compressed<>, compressed<>>>>) {
    return extent_fits(dims[0]);
  } else {  // dense
    long long cells = 1;
    for (std::size_t d = 0; d < N; ++d) {
      if (!stored_fits(cells, dims[d])) return false;
      cells *= dims[d];
    }
    return true;
  }
}

template <class V, class I>
bool read(const std::string& text, coordinate_list<V, I>& out) {
  std::istringstream in(text);
  try {
    out = io::read_frostt<V, I>(in, "fuzz.tns");
  } catch (const tensorlev::error&) {
    return false;
  }
  return true;
}

template <class V, class I>
void check_same_list(const coordinate_list<V, I>& a, const coordinate_list<V, I>& b) {
  TLF_CHECK(a.dims() == b.dims());
  TLF_CHECK(a.size() == b.size());
  TLF_CHECK(a.raw_coords() == b.raw_coords());
  for (std::size_t e = 0; e < a.size(); ++e) TLF_CHECK(identical(a.value(e), b.value(e)));
}

/// What the reader promises about an accepted file, the writer round trip,
/// and the reader with given dims.
template <class V, class I>
void check_read(const coordinate_list<V, I>& list) {
  const std::size_t n = list.order();
  TLF_CHECK(n >= 1 && !list.empty());
  std::vector<I> largest(n, I(0));
  for (std::size_t e = 0; e < list.size(); ++e)
    for (std::size_t d = 0; d < n; ++d) largest[d] = std::max<I>(largest[d], list.coords(e)[d] + 1);
  TLF_CHECK(largest == list.dims());

  std::ostringstream out;
  io::write_frostt(out, list);
  const std::string text = out.str();
  try {
    std::istringstream a(text), b(text);
    check_same_list(io::read_frostt<V, I>(a, "roundtrip.tns"), list);
    check_same_list(io::read_frostt<V, I>(b, "roundtrip.tns", list.dims()), list);
  } catch (const tensorlev::error& e) {
    std::fprintf(stderr, "re-reading what write_frostt wrote failed: %s\n", e.what());
    TLF_CHECK(false);
  }
  // One dimension too small: the entry at its largest coordinate is out of range.
  std::vector<I> small = list.dims();
  small[n - 1] -= 1;
  std::istringstream c(text);
  bool threw = false;
  try {
    (void)io::read_frostt<V, I>(c, "small.tns", small);
  } catch (const io_error&) {
    threw = true;
  }
  TLF_CHECK(threw);
}

template <class F, class V, class I, std::size_t N>
void pack_and_convert(const coordinate_list<V, I>& list, const entry_map<V, I>& ref, const std::array<I, N>& dims,
                      std::uint64_t sel) {
  using all = typename formats_of<N>::type;
  if (!fits<F>(dims, list.size())) return;
  const auto t = pack<F>(list);
  check_stores(t, ref);
  const std::size_t to = static_cast<std::size_t>(sel % std::tuple_size_v<all>);
  const bool drop = ((sel >> 4) & 1) != 0;
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    auto one = [&]<class G>(std::type_identity<G>) {
      // convert packs what t stores (padding and zeros too): bound by that.
      if (fits<G>(dims, std::max(list.size(), t.stored())))
        check_stores(convert<G>(t, drop ? stored_zeros::drop : stored_zeros::keep), ref, drop);
    };
    ((K == to ? one(std::type_identity<std::tuple_element_t<K, all>>{}) : void()), ...);
  }(std::make_index_sequence<std::tuple_size_v<all>>{});
}

/// Inner product of the CSF and COO forms of the small-integer list (and
/// TTV for order 3), exactly against loops over the list.
template <class V, class I, std::size_t N>
void kernels(const coordinate_list<V, I>& list, const std::array<I, N>& dims) {
  const auto small = small_integer_values(list);
  const auto ref = combine(small, duplicates::sum);
  V want{};
  for (const auto& [k, v] : ref) want += v * v;
  scalar<V> a;
  if constexpr (N == 1) {
    const auto x = pack<sparse_vector>(small);
    const auto y = pack<hash_vector>(small);
    a() = x(i) * y(i);
  } else {
    const auto B = pack<csf_tensor<N>>(small);
    const auto C = pack<coo_tensor<N>>(small);
    if constexpr (N == 2) a() = B(i, j) * C(i, j);
    if constexpr (N == 3) a() = B(i, j, k) * C(i, j, k);
    if constexpr (N == 4) a() = B(i, j, k, l) * C(i, j, k, l);
    if constexpr (N == 3) {
      // TTV: A(i,j) = B(i,j,k) * c(k).
      if (stored_fits(dims[0], dims[1]) && extent_fits(dims[2])) {
        tensor<V, dense_vector, I> c(std::array<I, 1>{dims[2]});
        for (std::size_t q = 0; q < c.values().size(); ++q) c.values()[q] = V(static_cast<double>(q % 5) - 2);
        tensor<V, dense_row_major, I> A(std::array<I, 2>{dims[0], dims[1]});
        for (auto& v : A.values()) v = V(99);  // '=' overwrites
        A(i, j) = B(i, j, k) * c(k);
        std::vector<V> ttv(A.values().size(), V(0));
        for (std::size_t e = 0; e < small.size(); ++e) {
          const auto x = small.coords(e);
          ttv[static_cast<std::size_t>(x[0]) * static_cast<std::size_t>(dims[1]) + static_cast<std::size_t>(x[1])] +=
              small.value(e) * c.values()[static_cast<std::size_t>(x[2])];
        }
        for (std::size_t q = 0; q < ttv.size(); ++q) TLF_CHECK(same(A.values()[q], ttv[q]));
      }
    }
  }
  TLF_CHECK(same(a.value(), want));
}

enum class depth { read, pack, kernels };

template <std::size_t N, class V, class I, depth D>
void run_order(const coordinate_list<V, I>& list, std::uint64_t sel) {
  using all = typename formats_of<N>::type;
  std::array<I, N> dims{};
  std::copy(list.dims().begin(), list.dims().end(), dims.begin());
  if constexpr (D == depth::read) {
    // Integer values: no sums (their overflow would be the harness's UB).
    bool dup = false;
    const auto ref = combine(list, duplicates::first, &dup);
    using F = std::tuple_element_t<N == 1 ? 0 : 2, all>;  // sparse vector or CSF
    check_stores(pack<F>(list, duplicates::first), ref);
    try {
      check_stores(pack<F>(list, duplicates::error), ref);
      TLF_CHECK(!dup);
    } catch (const duplicate_error&) {
      TLF_CHECK(dup);
    }
    return;
  } else {
    const auto ref = combine(list, duplicates::sum);
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (pack_and_convert<std::tuple_element_t<K, all>>(list, ref, dims, sel >> (5 * K)), ...);
    }(std::make_index_sequence<std::tuple_size_v<all>>{});
    const duplicates policy = (sel >> 40) % 2 == 0 ? duplicates::last : duplicates::first;
    check_stores(pack<std::tuple_element_t<0, all>>(list, policy), combine(list, policy));
    if constexpr (D == depth::kernels) kernels(list, dims);
  }
}

template <class V, class I, depth D>
void run(const std::string& text, std::uint64_t sel) {
  coordinate_list<V, I> list;
  if (!read(text, list)) return;
  check_read(list);
  switch (list.order()) {
    case 1: run_order<1, V, I, D>(list, sel); break;
    case 2: run_order<2, V, I, D>(list, sel); break;
    case 3: run_order<3, V, I, D>(list, sel); break;
    case 4: run_order<4, V, I, D>(list, sel); break;
    default: break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::uint64_t sel = input_hash(data, size);
  run<double, std::int32_t, depth::kernels>(text, sel);
  run<std::complex<double>, std::int64_t, depth::pack>(text, sel);
  run<float, std::int32_t, depth::pack>(text, sel);
  run<int, std::int32_t, depth::read>(text, sel);
  return 0;
}
