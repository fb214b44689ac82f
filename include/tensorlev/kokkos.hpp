#pragma once
/// @file kokkos.hpp
/// Generated kernels on a Kokkos execution space (link `tensorlev::kokkos`).
///
///     Kokkos::ScopeGuard kokkos(argc, argv);
///     tensorlev::compute(tensorlev::kokkos_executor<Kokkos::OpenMP>{}, y(i), A(i, j) * x(j));
///
/// On a host execution space the kernel's chunks (execution.hpp) become
/// the iterations of one `Kokkos::parallel_for` with a dynamic schedule over
/// the space; the call returns after the space is fenced.
///
/// On a device execution space (CUDA, HIP) `kokkos_executor<Space>` runs the
/// kernel's *device form*: every operand in memory the space can access
/// (`to_space<Space::memory_space>(t)` copies a tensor there, format kept),
/// the loop nest launched as one `parallel_for` over the values of its
/// outermost variable (one row per thread), scalars reduced with
/// `parallel_reduce`, scatter outputs (CSC SpMV) written with atomic adds,
/// CSR-shaped sparse outputs (dense levels, then one compressed level)
/// assembled by a counting launch, a `parallel_scan` and a filling launch
/// into Views the output adopts (DCSR and COO matrices: in CSR's shape,
/// then compacted). Nothing is read on the host but the
/// statement's shape and a sparse output's entry count.
/// `kokkos_device_executor<Space>` runs the same device form on any space,
/// host spaces included (how the tests check it without a GPU).
///
///     auto Ad = tensorlev::to_space<Kokkos::CudaSpace>(A);   // csr, in device memory
///     auto xd = tensorlev::to_space<Kokkos::CudaSpace>(x);
///     auto yd = tensorlev::to_space<Kokkos::CudaSpace>(y);
///     tensorlev::compute(tensorlev::kokkos_executor<Kokkos::Cuda>{}, yd(i), Ad(i, j) * xd(j));
///     y = tensorlev::to_space<Kokkos::HostSpace>(yd);
///
/// Arrays held in Kokkos Views (in any memory space) are used through
/// non-owning tensor views (view.hpp): `vector_view(v)` over a rank-1 View,
/// `csr_view(rows, cols, row_map, entries, values)` over the three arrays of
/// a CSR matrix (the layout of KokkosSparse::CrsMatrix). Kernels over them
/// run on an executor whose space can reach that memory.

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "codegen/device_form.hpp"
#include "error.hpp"
#include "execution.hpp"
#include "formats.hpp"
#include "notation.hpp"
#include "storage.hpp"
#include "view.hpp"

namespace tensorlev {

/// An executor on a Kokkos execution space. Must outlive the kernels it
/// runs (a temporary in the `compute` call does).
/// On a space that cannot reach host memory (a GPU's) it runs the device
/// form (see the file's comment).
template <class Space = Kokkos::DefaultHostExecutionSpace>
class kokkos_executor {
 public:
  using execution_space = Space;
  static constexpr bool on_host = Kokkos::SpaceAccessibility<Space, Kokkos::HostSpace>::accessible;
  explicit kokkos_executor(Space space = Space()) : space_(std::move(space)) {}

  // NOLINTNEXTLINE(google-explicit-constructor): converts where an executor is expected
  operator executor() const noexcept
    requires on_host
  {
    return executor(this, &run, static_cast<std::size_t>(space_.concurrency()));
  }
  [[nodiscard]] const Space& space() const noexcept { return space_; }

 private:
  static void run(const void* self, std::size_t n, executor::chunk_fn fn, void* ctx) {
    const auto& me = *static_cast<const kokkos_executor*>(self);
    Kokkos::parallel_for("tensorlev::kernel",
                         Kokkos::RangePolicy<Space, Kokkos::Schedule<Kokkos::Dynamic>>(me.space_, 0, n),
                         [=](std::size_t c) { fn(ctx, c); });
    me.space_.fence();
  }
  Space space_;
};

/// An array in a Kokkos memory space: a rank-1 View and a logical size
/// (the View may be allocated larger while a level is assembled). Copies
/// share the View, as Kokkos Views do; a structural write (assign, resize,
/// push_back, clear, reserve, shrink_to_fit) on a View that another copy
/// holds moves to a new View first, so no copy sees another's assembly.
/// Element writes go to the View every copy holds (Kokkos' semantics).
/// Growable (the std::vector subset levels use) when the host can reach
/// the memory space and T is not const.
template <class T, class MemSpace>
class kokkos_array {
 public:
  using value_type = std::remove_const_t<T>;
  using element_type = T;
  using memory_space = MemSpace;
  using view_type = Kokkos::View<T*, MemSpace>;
  static constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  static constexpr bool growable = host_accessible && !std::is_const_v<T>;

  kokkos_array() = default;
  /// Over an existing View (no copy): any rank-1 View assignable to
  /// view_type, e.g. a KokkosSparse::CrsMatrix's row map.
  template <class V>
    requires(Kokkos::is_view<V>::value && std::is_constructible_v<view_type, const V&>)
  explicit kokkos_array(const V& v) : v_(v), n_(v.extent(0)) {}
  /// A copy of a host vector (host-accessible spaces).
  explicit kokkos_array(const std::vector<value_type>& v)
    requires host_accessible
      : v_(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tensorlev")), v.size()), n_(v.size()) {
    std::copy(v.begin(), v.end(), const_cast<value_type*>(v_.data()));
  }

  [[nodiscard]] KOKKOS_INLINE_FUNCTION T* data() const noexcept { return v_.data(); }
  [[nodiscard]] KOKKOS_INLINE_FUNCTION std::size_t size() const noexcept { return n_; }
  [[nodiscard]] KOKKOS_INLINE_FUNCTION bool empty() const noexcept { return n_ == 0; }
  [[nodiscard]] KOKKOS_INLINE_FUNCTION T& operator[](std::size_t i) const noexcept { return v_.data()[i]; }
  [[nodiscard]] T* begin() const noexcept { return data(); }
  [[nodiscard]] T* end() const noexcept { return data() + n_; }
  [[nodiscard]] T& back() const noexcept { return v_.data()[n_ - 1]; }
  /// The View of exactly size() elements (to hand to another library).
  [[nodiscard]] view_type view() const {
    if (n_ == v_.extent(0)) return v_;
    return view_type(v_, std::make_pair(std::size_t{0}, n_));
  }

  // Growable part (std::vector's names).
  [[nodiscard]] std::size_t capacity() const noexcept { return v_.extent(0); }
  void reserve(std::size_t n)
    requires growable
  {
    if (n > capacity() || shared()) move_to(std::max(n, n_), n_);
  }
  void clear()
    requires growable
  {
    if (shared()) v_ = view_type();
    n_ = 0;
  }
  void assign(std::size_t n, const value_type& x)
    requires growable
  {
    if (n > capacity() || shared()) v_ = alloc(n);
    n_ = n;
    std::fill(data(), data() + n, x);
  }
  void resize(std::size_t n, const value_type& x_in = value_type{})
    requires growable
  {
    const value_type x = x_in;  // x_in may be an element of this array
    if (n > capacity() || shared()) move_to(std::max(n, 2 * capacity()), std::min(n, n_));
    if (n > n_) std::fill(data() + n_, data() + n, x);
    n_ = n;
  }
  void push_back(const value_type& x_in)
    requires growable
  {
    const value_type x = x_in;  // x_in may be an element of this array
    if (n_ == capacity() || shared()) move_to(std::max<std::size_t>(1, 2 * capacity()), n_);
    data()[n_++] = x;
  }
  void shrink_to_fit()
    requires growable
  {
    if (capacity() > n_) move_to(n_, n_);
  }
  /// Shared-array protocol (AoS tuples): a new empty array; itself as the
  /// growable array to assemble.
  void fresh()
    requires growable
  {
    v_ = view_type();
    n_ = 0;
  }
  [[nodiscard]] kokkos_array& vec() noexcept { return *this; }

 private:
  // Whether another holder may see the View: another copy holds it, or it
  // is unmanaged (use_count 0: memory someone else owns, never written
  // structurally in place).
  [[nodiscard]] bool shared() const noexcept { return v_.use_count() != 1; }
  static view_type alloc(std::size_t n) {
    return view_type(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tensorlev")), n);
  }
  // A new View of capacity cap holding the first `keep` elements.
  void move_to(std::size_t cap, std::size_t keep) {
    view_type w = alloc(cap);
    std::copy(data(), data() + keep, w.data());
    v_ = std::move(w);
  }

  view_type v_;
  std::size_t n_ = 0;
};

/// Storage in a Kokkos memory space: every array a kokkos_array (a View).
/// Host-accessible spaces are growable (pack and kernels assemble into
/// them); other spaces (CUDA, HIP device memory) hold views of data that
/// is already there. P and C are the stored position and coordinate types
/// (void: the index type), possibly const (a CrsMatrix's row map is
/// `View<const size_type*>`).
template <class MemSpace = Kokkos::HostSpace, class P = void, class C = void>
struct kokkos_storage {
  template <class T>
  using array = kokkos_array<T, MemSpace>;
  /// Arrays several levels read (AoS tuples, DIA offsets): one reference
  /// counted kokkos_array, so the lanes see what the head assembles (a
  /// kokkos_array's own copies would move to a new View on the first write).
  template <class T>
  using shared = std::conditional_t<Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible && !std::is_const_v<T>,
                                    shared_array<kokkos_array<T, MemSpace>>, kokkos_array<T, MemSpace>>;
  template <class I>
  using pos_type = detail::or_index<P, I>;
  template <class I>
  using crd_type = detail::or_index<C, I>;
  using memory_space = MemSpace;
  static constexpr bool host_accessible = Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible;
  static constexpr bool growable = host_accessible && !std::is_const_v<P> && !std::is_const_v<C>;
  static constexpr const char* name = "kokkos";
  using borrowed_type = borrowed<std::remove_const_t<P>, std::remove_const_t<C>>;
};

namespace detail {
/// Borrowed arrays in memory space MemSpace, which the host cannot read:
/// B's arrays, marked so that host executors refuse them at compile time.
template <class B, class MemSpace>
struct device_borrowed : B {
  static constexpr bool host_accessible = false;
  using borrowed_type = B;
  using memory_space = MemSpace;
};
/// The storage of a view of Views in MemSpace: the borrowed policy B
/// itself where the host can read MemSpace, device_borrowed<B, MemSpace>
/// elsewhere.
template <class MemSpace, class B = borrowed<>>
using borrowed_in = std::conditional_t<Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemSpace>::accessible, B,
                                       device_borrowed<B, MemSpace>>;

/// The memory space of storage S's arrays: S::memory_space (Kokkos
/// storage, views of device Views), else host memory (owning, borrowed).
template <class S>
struct memory_space_of {
  using type = Kokkos::HostSpace;
};
template <class S>
  requires requires { typename S::memory_space; }
struct memory_space_of<S> {
  using type = typename S::memory_space;
};

template <class View>
inline constexpr bool is_rank1_view_v = Kokkos::is_view<View>::value && View::rank == 1;

inline void check_extent(const char* what, std::size_t got, std::size_t want) {
  if (got != want)
    throw std::invalid_argument(std::string("tensorlev::csr_view: ") + what + " has " + std::to_string(got) +
                                " entries, expected " + std::to_string(want));
}
}  // namespace detail

/// A dense vector viewing a rank-1 Kokkos View (a const value type gives a
/// read-only operand; a non-const one may be a kernel's output). Index type
/// I must hold the extent.
template <index_type I = std::int32_t, class View>
[[nodiscard]] tensor<typename View::value_type, dense_vector, I, detail::borrowed_in<typename View::memory_space>>
vector_view(const View& v) {
  static_assert(detail::is_rank1_view_v<View>, "tensorlev::vector_view: needs a rank-1 Kokkos::View");
  static_assert(std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft> ||
                    std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>,
                "tensorlev::vector_view: the View must be contiguous (LayoutLeft or LayoutRight)");
  const auto n = checked_index<I>(static_cast<long long>(v.extent(0)), "tensorlev::vector_view: extent");
  using V = typename View::value_type;
  return detail::dense_over<dense_vector, detail::borrowed_in<typename View::memory_space>>(
      std::array<I, 1>{n}, std::span<V>(v.data(), v.extent(0)));
}

/// A dense matrix viewing a rank-2 Kokkos View without copying: LayoutRight
/// as dense_row_major, LayoutLeft as dense_col_major (a const value type
/// gives a read-only operand; a non-const one may be a kernel's output, as
/// an SpMM's or MTTKRP's result). The View's memory must be contiguous (a
/// padded allocation is refused at run time, a LayoutStride View at compile
/// time). Index type I must hold the extents and their product.
template <index_type I = std::int32_t, class View>
  requires(Kokkos::is_view<View>::value && View::rank == 2)
[[nodiscard]] auto dense_view(const View& v) {
  using L = typename View::array_layout;
  static_assert(std::is_same_v<L, Kokkos::LayoutLeft> || std::is_same_v<L, Kokkos::LayoutRight>,
                "tensorlev::dense_view: the rank-2 View must be LayoutRight (row-major) or LayoutLeft "
                "(column-major); copy a strided View into one first");
  using F = std::conditional_t<std::is_same_v<L, Kokkos::LayoutRight>, dense_row_major, dense_col_major>;
  using V = typename View::value_type;
  const I m = checked_index<I>(static_cast<long long>(v.extent(0)), "tensorlev::dense_view: rows");
  const I n = checked_index<I>(static_cast<long long>(v.extent(1)), "tensorlev::dense_view: columns");
  (void)detail::dense_count(std::array<I, 2>{m, n}, "tensorlev::dense_view: rows * columns");
  if (!v.span_is_contiguous())
    throw shape_error("tensorlev::dense_view: the View '" + v.label() + "' is padded (" + std::to_string(v.span()) +
                      " elements for " + std::to_string(v.size()) + "): allocate it without padding");
  return detail::dense_over<F, detail::borrowed_in<typename View::memory_space>>(std::array<I, 2>{m, n},
                                                                                 std::span<V>(v.data(), v.size()));
}

/// A strided dense matrix (levels/strided.hpp) viewing a rank-2 Kokkos
/// View whose rows (row-major) or columns (column-major) are a stride apart
/// without copying: a padded allocation, a subview of a larger View, or a
/// LayoutStride View. LayoutRight Views are row-major, LayoutLeft ones
/// column-major; a LayoutStride View is read as `Layout` says (row-major by
/// default). The coefficients between the rows are neither read nor
/// written. @throws shape_error if the View's stride along the rows
/// (columns) is not 1, overflow_error if the span does not fit I.
template <dense_layout Layout = dense_layout::row_major, index_type I = std::int32_t, class View>
  requires(Kokkos::is_view<View>::value && View::rank == 2)
[[nodiscard]] auto strided_view(const View& v) {
  using L = typename View::array_layout;
  constexpr bool row_major = std::is_same_v<L, Kokkos::LayoutRight> ||
                             (std::is_same_v<L, Kokkos::LayoutStride> && Layout == dense_layout::row_major);
  static_assert(std::is_same_v<L, Kokkos::LayoutLeft> || std::is_same_v<L, Kokkos::LayoutRight> ||
                    std::is_same_v<L, Kokkos::LayoutStride>,
                "tensorlev::strided_view: a rank-2 View in LayoutRight, LayoutLeft or LayoutStride");
  using F = std::conditional_t<row_major, strided_row_major, strided_col_major>;
  using V = typename View::value_type;
  using T = tensor<V, F, I, detail::borrowed_in<typename View::memory_space>>;
  const I m = checked_index<I>(static_cast<long long>(v.extent(0)), "tensorlev::strided_view: rows");
  const I n = checked_index<I>(static_cast<long long>(v.extent(1)), "tensorlev::strided_view: columns");
  const I outer = row_major ? m : n, inner = row_major ? n : m;
  const long long unit = static_cast<long long>(row_major ? v.stride(1) : v.stride(0));
  const long long lead = static_cast<long long>(row_major ? v.stride(0) : v.stride(1));
  if (inner > 1 && unit != 1)
    throw shape_error("tensorlev::strided_view: the View '" + v.label() + "' has stride " + std::to_string(unit) +
                      (row_major ? " along its rows" : " along its columns") + " (needs 1)");
  const I ld = outer > 1 ? checked_index<I>(lead, "tensorlev::strided_view: stride") : inner;
  const strided_level<I> last(inner, ld);  // shape_error if ld < inner (overlapping rows)
  const I total = last.size(outer);
  return T(std::array<I, 2>{m, n}, typename T::level_tuple(dense_level<I>(outer), last),
           std::span<V>(v.data(), static_cast<std::size_t>(total)));
}

/// A CSR matrix viewing three rank-1 Kokkos Views: row_map (rows + 1
/// offsets), entries (column of each stored value) and values, which must
/// outlive the view. Row offsets and columns may have different integer
/// types (KokkosSparse::CrsMatrix's size_type and ordinal_type); the view
/// computes with int32 when both are 32-bit signed, int64 otherwise. Only
/// the extents are checked here (the arrays may live in memory the host
/// cannot read): their contents must encode a valid CSR matrix (sorted,
/// unique columns in each row).
template <class RowMap, class Entries, class Values>
  requires(Kokkos::is_view<RowMap>::value && Kokkos::is_view<Entries>::value && Kokkos::is_view<Values>::value)
[[nodiscard]] auto csr_view(long long rows, long long cols, const RowMap& row_map, const Entries& entries,
                            const Values& values) {
  static_assert(detail::is_rank1_view_v<RowMap> && detail::is_rank1_view_v<Entries> && detail::is_rank1_view_v<Values>,
                "tensorlev::csr_view: row_map, entries and values must be rank-1 Kokkos::Views");
  using P = typename RowMap::non_const_value_type;
  using C = typename Entries::non_const_value_type;
  static_assert(std::is_integral_v<P> && std::is_integral_v<C>,
                "tensorlev::csr_view: row_map and entries must hold integers");
  using I = detail::view_index_t<P, C>;
  using V = typename Values::value_type;
  using S = detail::borrowed_in<typename Values::memory_space, detail::borrowed_for<P, C, I>>;
  const I m = checked_index<I>(rows, "tensorlev::csr_view: rows");
  const I n = checked_index<I>(cols, "tensorlev::csr_view: columns");
  if (m < 0 || n < 0) throw std::invalid_argument("tensorlev::csr_view: negative dimension");
  detail::check_extent("row_map", row_map.extent(0), static_cast<std::size_t>(m) + 1);
  detail::check_extent("values", values.extent(0), entries.extent(0));
  (void)checked_index<I>(static_cast<long long>(entries.extent(0)), "tensorlev::csr_view: number of entries");
  if (!std::in_range<C>(cols))
    throw overflow_error("tensorlev::csr_view: " + std::to_string(cols) + " columns do not fit the entries' type");
  using view_t = tensor<V, csr, I, S>;
  using levels_t = typename view_t::level_tuple;
  using comp = std::tuple_element_t<1, levels_t>;
  return view_t({m, n},
                levels_t(dense_level<I>(m), comp(n, typename comp::pos_array(row_map.data(), row_map.extent(0)),
                                                 typename comp::crd_array(entries.data(), entries.extent(0)))),
                std::span<V>(values.data(), values.extent(0)));
}

// ---- memory spaces: tensors copied between them, format kept -----------------

namespace detail {
/// Array transfers into Views of MemSpace from arrays in SrcSpace (a
/// level's rebinding constructor calls make<To>(array)): one allocation and
/// one Kokkos::deep_copy per array, no element conversion (the stored types
/// are the source's).
template <class MemSpace, class SrcSpace>
struct space_copy {
  template <class To, class From>
  [[nodiscard]] To make(const From& a) const {
    if constexpr (requires { typename To::array_type; }) {
      return To(make<typename To::array_type>(a));  // a shared array (AoS tuples, DIA offsets)
    } else {
      using T = typename To::value_type;
      using Src = std::remove_cvref_t<decltype(*a.data())>;
      static_assert(std::is_same_v<std::remove_const_t<Src>, T>,
                    "tensorlev::to_space: stored types must match (the copy converts no element)");
      const std::size_t n = a.size();
      typename To::view_type dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tensorlev")), n);
      if (n > 0)
        Kokkos::deep_copy(dst, Kokkos::View<const T*, SrcSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(a.data(), n));
      return To(dst);
    }
  }
};
template <class S, class I>
using stored_pos_t = std::remove_const_t<typename S::template pos_type<I>>;
template <class S, class I>
using stored_crd_t = std::remove_const_t<typename S::template crd_type<I>>;
}  // namespace detail

/// A copy of t in memory space MemSpace, in the same format with the same
/// stored position and coordinate types: `to_space<Kokkos::CudaSpace>(A)`
/// before a device kernel, `to_space<Kokkos::HostSpace>(y)` to read a
/// result (Kokkos' create_mirror_view_and_copy, always a copy). t may live
/// in any memory space (host vectors, Kokkos storage, views of Views); the
/// result holds its arrays in Views (kokkos_storage<MemSpace, P, C>).
template <class MemSpace, class V, format_type F, index_type I, storage_policy S>
[[nodiscard]] auto to_space(const tensor<V, F, I, S>& t) {
  using S2 = kokkos_storage<MemSpace, detail::stored_pos_t<S, I>, detail::stored_crd_t<S, I>>;
  using out = tensor<std::remove_const_t<V>, F, I, S2>;
  using LT = typename out::level_tuple;
  const detail::space_copy<MemSpace, typename detail::memory_space_of<S>::type> how;
  return out(t.dims(), detail::rebind_levels<LT>(t.levels(), how, std::make_index_sequence<F::num_levels>{}),
             how.template make<typename out::values_array>(t.value_array()));
}

// ---- the device form ---------------------------------------------------------

namespace detail {
/// The functors a kokkos_launcher hands to parallel_for and
/// parallel_reduce: chunk c of a kernel's loop nest (f(c)), or its sum.
template <class F>
struct kokkos_each {
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c) const { (void)f(static_cast<std::size_t>(c)); }
};
template <class F, class V>
struct kokkos_summed {
  F f;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t c, V& acc) const { acc += f(static_cast<std::size_t>(c)); }
};
/// An exclusive scan in place (sums in 64 bits; the stored partial sums
/// are only used after the total was checked to fit T).
template <class T>
struct kokkos_exclusive_scan {
  T* a;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t k, std::uint64_t& partial, bool final) const {
    const T v = a[k];
    if (final) a[k] = static_cast<T>(partial);
    partial += static_cast<std::uint64_t>(v);
  }
};

/// Device buffers for the launchers' uploads, kept between statements. A
/// statement in its device form uploads its operands' views and its
/// expression (a few hundred bytes); allocating and freeing that buffer for
/// every statement (cudaMalloc, and cudaFree, which waits for the device)
/// was most of a small SpMV's time on an H100 (bench/README.md). A launcher
/// takes buffers here and gives them back once its space is fenced;
/// Kokkos::finalize releases them (a finalize hook, registered again after
/// each release, so that a later initialize is served too). At most
/// `kept` buffers wait here per memory space.
template <class MemSpace>
class upload_pool {
 public:
  using buffer = Kokkos::View<unsigned char*, MemSpace>;
  static constexpr std::size_t kept = 16;
  [[nodiscard]] static buffer take(std::size_t bytes) {
    upload_pool& p = instance();
    const std::lock_guard<std::mutex> lock(p.m_);
    if (!p.hooked_) {
      Kokkos::push_finalize_hook([] { release(); });
      p.hooked_ = true;
    }
    for (auto it = p.free_.begin(); it != p.free_.end(); ++it) {
      if (it->extent(0) >= bytes) {
        buffer b = std::move(*it);
        p.free_.erase(it);
        return b;
      }
    }
    return buffer(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("tensorlev::params")),
                  std::max(bytes, std::size_t{1024}));
  }
  static void give(buffer&& b) {
    upload_pool& p = instance();
    const std::lock_guard<std::mutex> lock(p.m_);
    if (p.hooked_ && p.free_.size() < kept) p.free_.push_back(std::move(b));
  }

 private:
  static void release() {
    upload_pool& p = instance();
    const std::lock_guard<std::mutex> lock(p.m_);
    p.free_.clear();
    p.hooked_ = false;
  }
  // Never destroyed: a program may finalize Kokkos from an atexit handler
  // registered before the pool's first use, which runs after the static
  // objects constructed since are gone (tl-explore does).
  static upload_pool& instance() {
    static upload_pool* const p = new upload_pool;
    return *p;
  }
  std::mutex m_;
  std::vector<buffer> free_;
  bool hooked_ = false;
};

/// A device launcher (execution.hpp) on Kokkos execution space Space.
template <class Space>
class kokkos_launcher {
 public:
  struct device_launcher_tag {};
  using memory_space = typename Space::memory_space;
  /// Whether the space reaches the arrays of storage S.
  template <class S>
  static constexpr bool reaches =
      Kokkos::SpaceAccessibility<Space, typename memory_space_of<S>::type>::accessible;
  explicit kokkos_launcher(Space space) : space_(std::move(space)) {}
  kokkos_launcher(const kokkos_launcher&) = delete;
  kokkos_launcher& operator=(const kokkos_launcher&) = delete;
  ~kokkos_launcher() {
    space_.fence();
    for (auto& b : kept_) upload_pool<memory_space>::give(std::move(b));
  }

  template <class T>
  [[nodiscard]] const T* upload(const T& x) const {
    auto buf = upload_pool<memory_space>::take(sizeof(T));
    // Ordered on the launcher's space only (no device-wide fences): its
    // launches follow the copy; x may go once the call returns (a copy from
    // pageable host memory is staged before it does).
    Kokkos::deep_copy(space_, Kokkos::subview(buf, std::make_pair(std::size_t{0}, sizeof(T))),
                      Kokkos::View<const unsigned char*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                          reinterpret_cast<const unsigned char*>(&x), sizeof(T)));
    kept_.push_back(buf);
    return reinterpret_cast<const T*>(buf.data());
  }
  template <class F>
  void for_each(std::size_t n, const F& f) const {
    Kokkos::parallel_for("tensorlev::device_kernel", policy(n), each<F>{f});
  }
  template <class V, class F>
  [[nodiscard]] V sum(std::size_t n, const F& f) const {
    V result{};
    Kokkos::parallel_reduce("tensorlev::device_reduce", policy(n), summed<F, V>{f}, result);
    return result;
  }
  template <class T>
  [[nodiscard]] Kokkos::View<T*, memory_space> alloc(std::size_t n, bool zeroed) const {
    if (zeroed) return Kokkos::View<T*, memory_space>(Kokkos::view_alloc(space_, std::string("tensorlev::output")), n);
    return Kokkos::View<T*, memory_space>(
        Kokkos::view_alloc(space_, Kokkos::WithoutInitializing, std::string("tensorlev::output")), n);
  }
  template <class T>
  [[nodiscard]] std::uint64_t exclusive_scan(T* a, std::size_t n) const {
    std::uint64_t total = 0;
    if (n > 0) Kokkos::parallel_scan("tensorlev::device_scan", policy(n), kokkos_exclusive_scan<T>{a}, total);
    return total;
  }

 private:
  using policy_t = Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>;
  [[nodiscard]] policy_t policy(std::size_t n) const { return policy_t(space_, 0, static_cast<std::int64_t>(n)); }
  template <class F>
  using each = kokkos_each<F>;
  template <class F, class V>
  using summed = kokkos_summed<F, V>;
  Space space_;
  mutable std::vector<Kokkos::View<unsigned char*, memory_space>> kept_;
};

}  // namespace detail

/// Runs kernels in their device form (see the file's comment) on any Kokkos
/// execution space: what kokkos_executor does on a device space, here also
/// on host spaces (Serial, OpenMP), where tests check it against the
/// serial executor.
template <class Space = Kokkos::DefaultExecutionSpace>
class kokkos_device_executor {
 public:
  using execution_space = Space;
  explicit kokkos_device_executor(Space space = Space()) : space_(std::move(space)) {}
  [[nodiscard]] const Space& space() const noexcept { return space_; }

 private:
  Space space_;
};

/// `out = e` in the device form on ex's space; every tensor's arrays must
/// be in memory the space can access. Returns when the space is done.
template <class Out, expression E, class Space, class... Schedule>
void compute(const kokkos_device_executor<Space>& ex, const Out& out, const E& e, Schedule...) {
  cg::run_device_form<false, Schedule...>(detail::kokkos_launcher<Space>(ex.space()), out, e);
}
/// `out += e` in the device form.
template <class Out, expression E, class Space, class... Schedule>
void compute_add(const kokkos_device_executor<Space>& ex, const Out& out, const E& e, Schedule...) {
  cg::run_device_form<true, Schedule...>(detail::kokkos_launcher<Space>(ex.space()), out, e);
}
/// A kokkos_executor on a device space runs the device form.
template <class Out, expression E, class Space, class... Schedule>
  requires(!kokkos_executor<Space>::on_host)
void compute(const kokkos_executor<Space>& ex, const Out& out, const E& e, Schedule...) {
  cg::run_device_form<false, Schedule...>(detail::kokkos_launcher<Space>(ex.space()), out, e);
}
template <class Out, expression E, class Space, class... Schedule>
  requires(!kokkos_executor<Space>::on_host)
void compute_add(const kokkos_executor<Space>& ex, const Out& out, const E& e, Schedule...) {
  cg::run_device_form<true, Schedule...>(detail::kokkos_launcher<Space>(ex.space()), out, e);
}

}  // namespace tensorlev
