// Table 1 of seed 003 (capabilities and properties of each level type),
// reproduced with static_asserts over the level concepts, plus a runtime
// rendering of the same table compared with the paper's text.
#include <gtest/gtest.h>

#include <string>

#include "tensorlev/tensorlev.hpp"

using namespace tensorlev;

#define TL_STATIC_TEST(...) static_assert(__VA_ARGS__, "tensorlev Table 1 test failed at " __FILE__)

namespace {

template <class L>
constexpr bool value_iter = coord_iterable_level<L>;
template <class L>
constexpr bool pos_iter = pos_iterable_level<L>;

// Capabilities: V/P iteration, locate, insert (I) / append (A).
template <class I>
constexpr bool check_capabilities() {
  TL_STATIC_TEST(value_iter<dense_level<I>> && !pos_iter<dense_level<I>>);
  TL_STATIC_TEST(locatable_level<dense_level<I>> && insertable_level<dense_level<I>> &&
                 !appendable_level<dense_level<I>>);

  TL_STATIC_TEST(value_iter<range_level<I>> && !pos_iter<range_level<I>>);
  TL_STATIC_TEST(!locatable_level<range_level<I>> && !insertable_level<range_level<I>> &&
                 !appendable_level<range_level<I>>);

  TL_STATIC_TEST(pos_iter<compressed_level<I>> && !value_iter<compressed_level<I>>);
  TL_STATIC_TEST(!locatable_level<compressed_level<I>> && !insertable_level<compressed_level<I>> &&
                 appendable_level<compressed_level<I>>);

  TL_STATIC_TEST(pos_iter<singleton_level<I>> && !value_iter<singleton_level<I>>);
  TL_STATIC_TEST(!locatable_level<singleton_level<I>> && !insertable_level<singleton_level<I>> &&
                 appendable_level<singleton_level<I>>);

  TL_STATIC_TEST(pos_iter<offset_level<I>> && !value_iter<offset_level<I>>);
  TL_STATIC_TEST(!locatable_level<offset_level<I>> && !insertable_level<offset_level<I>> &&
                 !appendable_level<offset_level<I>>);

  TL_STATIC_TEST(pos_iter<hashed_level<I>> && !value_iter<hashed_level<I>>);
  TL_STATIC_TEST(locatable_level<hashed_level<I>> && insertable_level<hashed_level<I>> &&
                 !appendable_level<hashed_level<I>>);

  // Every level of the six can be packed.
  TL_STATIC_TEST(packable_level<dense_level<I>> && packable_level<range_level<I>> &&
                 packable_level<compressed_level<I>> && packable_level<singleton_level<I>> &&
                 packable_level<offset_level<I>> && packable_level<hashed_level<I>>);
  return true;
}
static_assert(check_capabilities<std::int32_t>());
static_assert(check_capabilities<std::int64_t>());

// What a kernel can build where it runs, in arrays it is handed (the
// device form's count, scan and fill; not a Table 1 column): a scanned
// level's positions are a scan of its parents' counts (compressed), a
// coordinate array level is its coordinates alone (singleton). A singleton
// lane of an AoS tuple array is neither: its coordinates live in the head's
// shared tuples.
template <class I>
constexpr bool check_device_assembly() {
  TL_STATIC_TEST(scanned_level<compressed_level<I>> && !coordinate_array_level<compressed_level<I>>);
  TL_STATIC_TEST(coordinate_array_level<singleton_level<I>> && !scanned_level<singleton_level<I>>);
  TL_STATIC_TEST(coordinate_array_level<singleton_level<I, sparse_options{.unique = false}>>);
  TL_STATIC_TEST(!coordinate_array_level<singleton_aos_level<I, 2, 1>> && !scanned_level<singleton_aos_level<I, 2, 1>>);
  TL_STATIC_TEST(!scanned_level<dense_level<I>> && !coordinate_array_level<dense_level<I>>);
  TL_STATIC_TEST(!scanned_level<range_level<I>> && !coordinate_array_level<range_level<I>>);
  TL_STATIC_TEST(!scanned_level<offset_level<I>> && !coordinate_array_level<offset_level<I>>);
  TL_STATIC_TEST(!scanned_level<hashed_level<I>> && !coordinate_array_level<hashed_level<I>>);
  return true;
}
static_assert(check_device_assembly<std::int32_t>());
static_assert(check_device_assembly<std::int64_t>());

// Prefetching (optional, not a Table 1 column): a compressed level reads
// coordinates ahead and prefetches a parent's children; no other level
// offers either, so kernels over them are as before.
template <class I>
constexpr bool check_prefetching() {
  TL_STATIC_TEST(ahead_readable_level<compressed_level<I>> && prefetching_level<compressed_level<I>>);
  TL_STATIC_TEST(!ahead_readable_level<dense_level<I>> && !prefetching_level<dense_level<I>>);
  TL_STATIC_TEST(!ahead_readable_level<singleton_level<I>> && !prefetching_level<singleton_level<I>>);
  TL_STATIC_TEST(!ahead_readable_level<hashed_level<I>> && !prefetching_level<hashed_level<I>>);
  return true;
}
static_assert(check_prefetching<std::int32_t>());
static_assert(check_prefetching<std::int64_t>());

// Fixed properties (plain check marks and blanks of Table 1).
TL_STATIC_TEST(full_level<dense_level<int>> && compact_level<dense_level<int>> && !branchless_level<dense_level<int>>);
TL_STATIC_TEST(!full_level<range_level<int>> && !compact_level<range_level<int>> &&
               !branchless_level<range_level<int>>);
TL_STATIC_TEST(compact_level<compressed_level<int>> && !branchless_level<compressed_level<int>>);
TL_STATIC_TEST(compact_level<singleton_level<int>> && branchless_level<singleton_level<int>>);
TL_STATIC_TEST(!full_level<offset_level<int>> && !compact_level<offset_level<int>> &&
               branchless_level<offset_level<int>>);
TL_STATIC_TEST(!ordered_level<hashed_level<int>> && !compact_level<hashed_level<int>> &&
               !branchless_level<hashed_level<int>>);

// Configurable properties, the (✓) of Table 1: both settings are available.
TL_STATIC_TEST(ordered_level<dense_level<int>> && !ordered_level<dense_level<int, order_options{.ordered = false}>>);
TL_STATIC_TEST(unique_level<dense_level<int>> && !unique_level<dense_level<int, order_options{.unique = false}>>);
TL_STATIC_TEST(ordered_level<range_level<int>> && !ordered_level<range_level<int, order_options{.ordered = false}>>);
TL_STATIC_TEST(unique_level<range_level<int>> && !unique_level<range_level<int, order_options{.unique = false}>>);
TL_STATIC_TEST(!full_level<compressed_level<int>> && full_level<compressed_level<int, sparse_options{.full = true}>>);
TL_STATIC_TEST(ordered_level<compressed_level<int>> &&
               !ordered_level<compressed_level<int, sparse_options{.ordered = false}>>);
TL_STATIC_TEST(unique_level<compressed_level<int>> &&
               !unique_level<compressed_level<int, sparse_options{.unique = false}>>);
TL_STATIC_TEST(!full_level<singleton_level<int>> && full_level<singleton_level<int, sparse_options{.full = true}>>);
TL_STATIC_TEST(ordered_level<singleton_level<int>> &&
               !ordered_level<singleton_level<int, sparse_options{.ordered = false}>>);
TL_STATIC_TEST(unique_level<singleton_level<int>> &&
               !unique_level<singleton_level<int, sparse_options{.unique = false}>>);
TL_STATIC_TEST(ordered_level<offset_level<int>> && !ordered_level<offset_level<int, order_options{.ordered = false}>>);
TL_STATIC_TEST(unique_level<offset_level<int>> && !unique_level<offset_level<int, order_options{.unique = false}>>);
TL_STATIC_TEST(!full_level<hashed_level<int>> && full_level<hashed_level<int, hash_options{.full = true}>>);
TL_STATIC_TEST(unique_level<hashed_level<int>> && !unique_level<hashed_level<int, hash_options{.unique = false}>>);

// Formats: order and level counts of the named formats (Figure 4).
TL_STATIC_TEST(csr::order == 2 && csr::num_levels == 2);
TL_STATIC_TEST(dia::order == 2 && dia::num_levels == 3);
TL_STATIC_TEST(ell::order == 2 && ell::num_levels == 3);
TL_STATIC_TEST(bcsr<4>::order == 2 && bcsr<4>::num_levels == 4);
TL_STATIC_TEST(csb<4>::order == 2 && csb<4>::num_levels == 4);
TL_STATIC_TEST(csf::order == 3 && coo_tensor<5>::num_levels == 5 && coo_aos_tensor<3>::order == 3);
TL_STATIC_TEST(mode_generic::order == 3 && dense_tensor<4>::order == 4);

// One row of Table 1 rendered from the concepts: iteration, locate,
// assembly, then the five properties as ✓ (fixed), (✓) (configurable) or
// blank. `Yes`/`No` are the level type with the property set / unset.
template <class L>
std::string row(const char* name) {
  std::string r = std::string(name) + " | ";
  r += coord_iterable_level<L> ? "V" : "P";
  r += " | ";
  r += locatable_level<L> ? "✓" : "";
  r += " | ";
  r += insertable_level<L> ? "I" : (appendable_level<L> ? "A" : "");
  return r;
}

std::string mark(bool set_variant, bool unset_variant) {
  if (set_variant && unset_variant) return "✓";   // always has it
  if (set_variant && !unset_variant) return "(✓)";  // configurable
  return "";
}

}  // namespace

// The properties columns, rendered from the level types: for each property
// the default type and the configured variants decide ✓, (✓) or blank.
TEST(Table1, RenderedFromConceptsMatchesThePaper) {
  using D = dense_level<int>;
  using Dn = dense_level<int, order_options{.ordered = false, .unique = false}>;
  using R = range_level<int>;
  using Rn = range_level<int, order_options{.ordered = false, .unique = false}>;
  using C = compressed_level<int>;
  using Cy = compressed_level<int, sparse_options{.full = true}>;
  using Cn = compressed_level<int, sparse_options{.full = false, .ordered = false, .unique = false}>;
  using S = singleton_level<int>;
  using Sy = singleton_level<int, sparse_options{.full = true}>;
  using Sn = singleton_level<int, sparse_options{.full = false, .ordered = false, .unique = false}>;
  using O = offset_level<int>;
  using On = offset_level<int, order_options{.ordered = false, .unique = false}>;
  using H = hashed_level<int>;
  using Hy = hashed_level<int, hash_options{.full = true}>;
  using Hn = hashed_level<int, hash_options{.full = false, .unique = false}>;
  // mark(has it in the "yes" configuration, has it in the "no" configuration)
  auto props = [](bool fy, bool fn, bool oy, bool on, bool uy, bool un, bool by, bool bn, bool cy, bool cn) {
    return " | " + mark(fy, fn) + " | " + mark(oy, on) + " | " + mark(uy, un) + " | " + mark(by, bn) + " | " +
           mark(cy, cn);
  };
  std::string table;
  table += row<D>("Dense") + props(D::is_full, Dn::is_full, D::is_ordered, Dn::is_ordered, D::is_unique, Dn::is_unique,
                                   D::is_branchless, Dn::is_branchless, D::is_compact, Dn::is_compact) + "\n";
  table += row<R>("Range") + props(R::is_full, Rn::is_full, R::is_ordered, Rn::is_ordered, R::is_unique, Rn::is_unique,
                                   R::is_branchless, Rn::is_branchless, R::is_compact, Rn::is_compact) + "\n";
  table += row<C>("Compressed") + props(Cy::is_full, Cn::is_full, C::is_ordered, Cn::is_ordered, C::is_unique,
                                        Cn::is_unique, C::is_branchless, Cn::is_branchless, C::is_compact,
                                        Cn::is_compact) + "\n";
  table += row<S>("Singleton") + props(Sy::is_full, Sn::is_full, S::is_ordered, Sn::is_ordered, S::is_unique,
                                       Sn::is_unique, S::is_branchless, Sn::is_branchless, S::is_compact,
                                       Sn::is_compact) + "\n";
  table += row<O>("Offset") + props(O::is_full, On::is_full, O::is_ordered, On::is_ordered, O::is_unique,
                                    On::is_unique, O::is_branchless, On::is_branchless, O::is_compact,
                                    On::is_compact) + "\n";
  table += row<H>("Hashed") + props(Hy::is_full, Hn::is_full, H::is_ordered, Hn::is_ordered, H::is_unique,
                                    Hn::is_unique, H::is_branchless, Hn::is_branchless, H::is_compact,
                                    Hn::is_compact) + "\n";
  // Table 1 of seed 003: Iteration | Locate | Assembly | Full | Ordered |
  // Unique | Branchless | Compact.
  const std::string expected =
      "Dense | V | ✓ | I | ✓ | (✓) | (✓) |  | ✓\n"
      "Range | V |  |  |  | (✓) | (✓) |  | \n"
      "Compressed | P |  | A | (✓) | (✓) | (✓) |  | ✓\n"
      "Singleton | P |  | A | (✓) | (✓) | (✓) | ✓ | ✓\n"
      "Offset | P |  |  |  | (✓) | (✓) | ✓ | \n"
      "Hashed | P | ✓ | I | (✓) |  | (✓) |  | \n";
  EXPECT_EQ(table, expected);
}
