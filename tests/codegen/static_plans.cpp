// Compile-time facts about lowering: loop orders, merge lattices (union for
// +, intersection for *, pruned by full levels), locate versus co-iterate,
// deduplication, and how each output format is assembled. All checked with
// static_assert; the runtime tests check the loop nests as printed.
#include <gtest/gtest.h>

#include "tensorlev/tensorlev.hpp"

namespace {
using namespace tensorlev;
using namespace tensorlev::cg;

template <class F, char... V>
using in = tensorlev::access<const tensor<double, F>, V...>;
template <class F, char... V>
using out = tensorlev::access<tensor<double, F>, V...>;

template <class Out, class E, char... Order>
using K = kernel<Out, E, false, 0, Order...>;

constexpr std::uint32_t bit(int s) { return std::uint32_t{1} << s; }

template <class P>
constexpr bool points_are(const P& p, std::initializer_list<std::uint32_t> pts) {
  if (p.np != pts.size()) return false;
  std::size_t x = 0;
  for (auto m : pts)
    if (p.pts[x++] != m) return false;
  return true;
}

// --- loop orders --------------------------------------------------------------
using spmv_csr = K<out<dense_vector, 'i'>, mul_expr<in<csr, 'i', 'j'>, in<dense_vector, 'j'>>>;
static_assert(spmv_csr::O.n == 2 && spmv_csr::O.vars[0] == 'i' && spmv_csr::O.vars[1] == 'j');
using spmv_csc = K<out<dense_vector, 'i'>, mul_expr<in<csc, 'i', 'j'>, in<dense_vector, 'j'>>>;
static_assert(spmv_csc::O.vars[0] == 'j' && spmv_csc::O.vars[1] == 'i', "CSC is traversed column by column");
using spmv_given = K<out<dense_vector, 'i'>, mul_expr<in<dense_row_major, 'i', 'j'>, in<dense_vector, 'j'>>, 'j', 'i'>;
static_assert(spmv_given::O.vars[0] == 'j' && spmv_given::O.ra == 2, "dense A located at random under j, i");

// --- SpMV: the row level is the dense driver, the column level is iterated,
// x is located.
static_assert(spmv_csr::plan<0, 0>.nm == 1 && spmv_csr::plan<0, 0>.it[spmv_csr::plan<0, 0>.merged[0]].coord);
static_assert(spmv_csr::plan<1, 0>.nm == 1 && points_are(spmv_csr::plan<1, 0>, {bit(0)}));
static_assert(spmv_csr::plan<1, 0>.nit == 2 && spmv_csr::plan<1, 0>.it[1].located, "x(j) is located");
static_assert(spmv_csr::direct_store, "each y(i) is written once: no zero fill");
// Rows computed from blocks (SELL slices, grouped rows, BCSR block rows),
// summed in the block workspace: with `=` each full block's sums are stored
// and the last block is zeroed before its loops add, so y is not
// zero-filled first (block_store). Not with += (a later term of a split
// statement runs as +=), nor where no workspace is planned (a transposed
// operand, a matrix output).
using spmv_sell = K<out<dense_vector, 'i'>, mul_expr<in<sell<8>, 'i', 'j'>, in<dense_vector, 'j'>>>;
static_assert(spmv_sell::block_store && !spmv_sell::direct_store && !spmv_csr::block_store);
static_assert(K<out<dense_vector, 'i'>, mul_expr<in<grouped_rows<4>, 'i', 'j'>, in<dense_vector, 'j'>>>::block_store);
static_assert(K<out<dense_vector, 'i'>, mul_expr<in<bcsr<2>, 'i', 'j'>, in<dense_vector, 'j'>>>::block_store);
static_assert(!kernel<out<dense_vector, 'i'>, mul_expr<in<sell<8>, 'i', 'j'>, in<dense_vector, 'j'>>, true, 0>::block_store,
              "+= adds into y as it is");
static_assert(!K<out<dense_row_major, 'i', 'k'>, mul_expr<in<sell<8>, 'i', 'j'>, in<dense_row_major, 'j', 'k'>>>::block_store,
              "a matrix output: no block workspace");
static_assert(!K<out<dense_vector, 'j'>, mul_expr<in<sell<8>, 'i', 'j'>, in<dense_vector, 'i'>>>::block_store);
// COO SpMV: one loop over the row positions, no deduplication needed.
using spmv_coo = K<out<dense_vector, 'i'>, mul_expr<in<coo, 'i', 'j'>, in<dense_vector, 'j'>>>;
static_assert(spmv_coo::plan<0, 0>.nm == 1 && !spmv_coo::plan<0, 0>.it[0].segment && !spmv_coo::direct_store);

// --- lattices at the column loop (slots: 0 = left operand, 1 = right).
using add_csr = K<out<dense_row_major, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>>;
static_assert(points_are(add_csr::plan<1, 0>, {bit(0) | bit(1), bit(0), bit(1)}), "union: AB, A, B");
using mul_csr = K<out<dense_row_major, 'i', 'j'>, mul_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>>;
static_assert(points_are(mul_csr::plan<1, 0>, {bit(0) | bit(1)}), "intersection: AB only");
using add_dense = K<out<dense_row_major, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<dense_row_major, 'i', 'j'>>>;
static_assert(points_are(add_dense::plan<1, 0>, {bit(0) | bit(1), bit(1)}), "a full level prunes the point without it");
using mul_dense = K<out<dense_row_major, 'i', 'j'>, mul_expr<in<csr, 'i', 'j'>, in<dense_row_major, 'i', 'j'>>>;
static_assert(mul_dense::plan<1, 0>.nm == 1 && points_are(mul_dense::plan<1, 0>, {bit(0)}), "dense B is located");
using add_mul = K<out<dense_row_major, 'i', 'j'>,
                  mul_expr<add_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>, in<csr, 'i', 'j'>>>;
static_assert(points_are(add_mul::plan<1, 0>, {bit(0) | bit(1) | bit(2), bit(0) | bit(2), bit(1) | bit(2)}),
              "(A + B) * C: ABC, AC, BC");
using mul_add = K<out<dense_row_major, 'i', 'j'>,
                  add_expr<mul_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>, in<csr, 'i', 'j'>>>;
static_assert(points_are(mul_add::plan<1, 0>, {bit(0) | bit(1) | bit(2), bit(0) | bit(1), bit(2)}),
              "A * B + C: ABC, AB, C");
// Cases where an operand is absent: below the point "A only", B is zero.
static_assert(add_csr::plan<1, 0>.np == 3 && case_absent(add_csr::plan<1, 0>, 0, bit(0), 0) == (mask_t{1} << 2));

// --- deduplication: COO's non-unique row level merged with CSR's rows.
using add_coo_csr = K<out<dense_row_major, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<coo, 'i', 'j'>>>;
static_assert(add_coo_csr::plan<0, 0>.it[add_coo_csr::plan<0, 0>.merged[1]].segment, "runs of equal rows merged");

// --- how outputs are assembled
static_assert(add_csr::O.out == out_kind::located);
using add_to_csr = K<out<csr, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>>;
static_assert(add_to_csr::O.out == out_kind::append, "CSR result appended in loop order");
using spgemm = K<out<csr, 'i', 'j'>, mul_expr<in<csr, 'i', 'k'>, in<csr, 'k', 'j'>>>;
static_assert(spgemm::O.out == out_kind::workspace && spgemm::O.vars[1] == 'k', "Gustavson: i, k, j with a workspace");
// Into CSR with unsorted rows: the same workspace (rows left unsorted),
// not a sorted stream; a sum appends.
using spgemm_unsorted = K<out<csr_unsorted, 'i', 'j'>, mul_expr<in<csr, 'i', 'k'>, in<csr, 'k', 'j'>>>;
static_assert(spgemm_unsorted::O.out == out_kind::workspace && spgemm_unsorted::O.vars[1] == 'k');
using add_unsorted = K<out<csr_unsorted, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>>;
static_assert(add_unsorted::O.out == out_kind::append);
using add_to_coo = K<out<coo, 'i', 'j'>, add_expr<in<coo, 'i', 'j'>, in<coo, 'i', 'j'>>>;
static_assert(add_to_coo::O.out == out_kind::assemble, "COO result: assembled in order (symbolic, numeric pass)");
using ell_out = K<out<ell, 'i', 'j'>, add_expr<in<csr, 'i', 'j'>, in<csr, 'i', 'j'>>>;
static_assert(ell_out::O.out == out_kind::stream, "derived maps (ELL): sorted stream packed");
// The output's derived levels bind no loop variables: only i and j are
// loops (the output's slot, diagonal or blocks used to become reduction
// loops over an unset extent, and ELL/DIA/BCSR/CSB results were all zero).
static_assert(ell_out::O.n == 2 && ell_out::O.vars[0] == 'i' && ell_out::O.vars[1] == 'j');
using dia_out = K<out<dia, 'i', 'j'>, in<csr, 'i', 'j'>>;
static_assert(dia_out::O.out == out_kind::stream && dia_out::O.n == 2);
using bcsr_out = K<out<bcsr<2>, 'i', 'j'>, in<csr, 'i', 'j'>>;
static_assert(bcsr_out::O.out == out_kind::stream && bcsr_out::O.n == 2);
using csb_out = K<out<csb<2>, 'i', 'j'>, in<csr, 'i', 'j'>>;
static_assert(csb_out::O.out == out_kind::stream && csb_out::O.n == 2);
using dot = K<tensorlev::access<scalar<double>>, mul_expr<in<sparse_vector, 'i'>, in<dense_vector, 'i'>>>;
static_assert(dot::O.out == out_kind::scalar);
using hash_out = K<out<hash_vector, 'i'>, mul_expr<in<csr, 'i', 'j'>, in<dense_vector, 'j'>>>;
static_assert(hash_out::O.out == out_kind::insert, "hashed results: symbolic pass, then insert");

// --- printed loop nests
using namespace tensorlev::indices;

TEST(CodegenPrint, SpMVCSRShowsInlinedLevelFunctions) {
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({2, 2}));
  tensor<double, dense_vector> x({2}), y({2});
  const std::string s = loop_nest(y(i), A(i, j) * x(j), {"y", "A", "x"});
  for (const char* want : {"loop order: i, j", "A2_pos[pA1]", "A2_pos[pA1 + 1]", "int j = A2_crd[pA2];",
                           "acc += A_vals[pA2] * x_vals[px1];", "y_vals[py1] = acc;",
                           "on a parallel executor: the i loop runs in chunks"})
    EXPECT_NE(s.find(want), std::string::npos) << "missing '" << want << "' in\n" << s;
  tensor<double, csc> B = pack<csc>(coordinate_list<double, int>({2, 2}));
  const std::string t = loop_nest(y(i), B(i, j) * x(j), {"y", "B", "x"});
  EXPECT_NE(t.find("on a parallel executor: the j loop runs in chunks, each adding into a private copy"),
            std::string::npos)
      << t;
  // Array-of-structs COO: each level reads its own lane of the tuples.
  tensor<double, coo_aos> E = pack<coo_aos>(coordinate_list<double, int>({2, 2}));
  const std::string aos = loop_nest(y(i), E(i, j) * x(j), {"y", "E", "x"});
  for (const char* want : {"E1_crd[pE1].c0", "E2_crd[pE2].c1"})
    EXPECT_NE(aos.find(want), std::string::npos) << "missing '" << want << "' in\n" << aos;
  using lane11 = singleton_aos_level<int, 12, 11>;
  EXPECT_EQ(lane11::code(level_fn::pos_access, "B3", "p", ""), "B3_crd[p].c11");
  // A CSR sum appends from chunks; a DCSR one assembles level by level from chunks.
  tensor<double, csr> C2 = pack<csr>(coordinate_list<double, int>({2, 2}));
  const std::string u = loop_nest(C2(i, j), A(i, j) + A(i, j), {"C", "A", "A"});
  EXPECT_NE(u.find("each collecting its entries; a scan of their counts places them"), std::string::npos) << u;
  // A hash vector (one table) inserts the chunks' lists in chunk order.
  tensor<double, hash_vector> h = pack<hash_vector>(coordinate_list<double, int>({2}));
  const std::string hs = loop_nest(h(i), A(i, j) * x(j), {"h", "A", "x"});
  EXPECT_NE(hs.find("on a parallel executor: the i loop runs in chunks, each collecting its own (coordinate, value) "
                    "list; the lists are inserted in chunk order"),
            std::string::npos)
      << hs;
  tensor<double, dcsr> D2 = pack<dcsr>(coordinate_list<double, int>({2, 2}));
  const std::string v = loop_nest(D2(i, j), A(i, j) + A(i, j), {"C", "A", "A"});
  EXPECT_NE(v.find("on a parallel executor: the i loop runs in chunks, each counting its positions per level; a "
                   "scan of the counts places every chunk's entries"),
            std::string::npos)
      << v;
}

TEST(CodegenPrint, SumMergesAndAppends) {
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({2, 2}));
  tensor<double, csr> B = A, C = A;
  const std::string s = loop_nest(C(i, j), A(i, j) + B(i, j), {"C", "A", "B"});
  for (const char* want : {"output: append", "while (pA2 < pA2_end && pB2 < pB2_end)", "int j = min(j_pA2, j_pB2);",
                           "if (j_pA2 == j && j_pB2 == j)", "else if (j_pA2 == j)", "C2.append_edges(pC1"})
    EXPECT_NE(s.find(want), std::string::npos) << "missing '" << want << "' in\n" << s;
}

TEST(CodegenPrint, SpGEMMUsesAWorkspace) {
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({2, 2}));
  tensor<double, csr> B = A, C = A;
  const std::string s = loop_nest(C(i, j), A(i, k) * B(k, j), {"C", "A", "B"});
  EXPECT_NE(s.find("workspace (Gustavson)"), std::string::npos) << s;
  EXPECT_NE(s.find("w[j] += A_vals[pA2] * B_vals[pB2];"), std::string::npos) << s;
}

TEST(CodegenPrint, TermsWithDifferentReductionsPrintSeparately) {
  tensor<double, dense_row_major> A({2, 2}), B({2, 2});
  tensor<double, csr> C = pack<csr>(coordinate_list<double, int>({2, 2}));
  tensor<double, dense_row_major> D({2, 2});
  const std::string s = loop_nest(A(i, j), B(i, j) + C(i, k) * D(k, j));
  EXPECT_NE(s.find("term group 1 (assigns)"), std::string::npos) << s;
  EXPECT_NE(s.find("term group 2 (accumulates)"), std::string::npos) << s;
}

}  // namespace
