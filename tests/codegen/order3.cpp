// The third-order kernels of seed 003's Table 5 (TTV, TTM, MTTKRP,
// INNERPROD, PLUS) with COO, CSF and other third-order formats, into dense
// outputs, against dense references.
#include "common.hpp"

namespace {
using namespace tltest;
using namespace tensorlev::indices;

// TL_PART (0 or 1) picks half of the formats: one TU each.
#ifndef TL_PART
#define TL_PART 0
#endif
using B_formats = std::conditional_t<TL_PART == 0, std::tuple<coo_tensor<3>, coo_aos_tensor<3>, csf, mode_generic>,
                                     std::tuple<dense_sparse_sparse, dense_dense_hashed, dense_tensor<3>>>;
#define TL_TEST_NAME2(base, part) base##_part##part
#define TL_TEST_NAME(base, part) TL_TEST_NAME2(base, part)

template <class FB>
std::size_t kernels3(int I, int J, int K, double f, std::mt19937_64& rng) {
  std::size_t bad = 0;
  const std::string tag = fname<FB>() + " " + std::to_string(I) + "x" + std::to_string(J) + "x" + std::to_string(K);
  auto B = random_operand<FB>(std::array<int, 3>{I, J, K}, f, rng);
  auto at = [&](const std::vector<double>& d, int a, int b, int c) { return d[(a * J + b) * K + c]; };
  {  // TTV: A(i,j) = B(i,j,k) * c(k)
    auto c = random_operand<dense_vector>(std::array<int, 1>{K}, 1.0, rng);
    std::vector<double> ref(static_cast<std::size_t>(I * J), 0.0);
    for (int a = 0; a < I; ++a)
      for (int b = 0; b < J; ++b)
        for (int q = 0; q < K; ++q) ref[a * J + b] += at(B.d, a, b, q) * c.d[q];
    tensor<double, dense_row_major> A({I, J});
    A(i, j) = B.t(i, j, k) * c.t(k);
    bad += count_mismatches<double>(A.values(), ref, "TTV " + tag);
  }
  {  // TTM: A(i,j,k) = B(i,j,l) * C(k,l)
    const int L = 3;
    auto C = random_operand<dense_row_major>(std::array<int, 2>{L, K}, 1.0, rng);
    std::vector<double> ref(static_cast<std::size_t>(I * J * L), 0.0);
    for (int a = 0; a < I; ++a)
      for (int b = 0; b < J; ++b)
        for (int q = 0; q < L; ++q)
          for (int r = 0; r < K; ++r) ref[(a * J + b) * L + q] += at(B.d, a, b, r) * C.d[q * K + r];
    tensor<double, dense_tensor<3>> A({I, J, L});
    A(i, j, k) = B.t(i, j, l) * C.t(k, l);
    bad += count_mismatches<double>(A.values(), ref, "TTM " + tag);
  }
  {  // MTTKRP: A(i,j) = B(i,k,l) * C(k,j) * D(l,j)
    const int R = 2;
    auto C = random_operand<dense_row_major>(std::array<int, 2>{J, R}, 1.0, rng);
    auto D = random_operand<dense_row_major>(std::array<int, 2>{K, R}, 1.0, rng);
    std::vector<double> ref(static_cast<std::size_t>(I * R), 0.0);
    for (int a = 0; a < I; ++a)
      for (int b = 0; b < J; ++b)
        for (int q = 0; q < K; ++q)
          for (int r = 0; r < R; ++r) ref[a * R + r] += at(B.d, a, b, q) * C.d[b * R + r] * D.d[q * R + r];
    tensor<double, dense_row_major> A({I, R});
    A(i, j) = B.t(i, k, l) * C.t(k, j) * D.t(l, j);
    bad += count_mismatches<double>(A.values(), ref, "MTTKRP " + tag);
  }
  {  // INNERPROD: a = B(i,j,k) * C(i,j,k), C in CSF and dense
    auto C = random_operand<csf>(std::array<int, 3>{I, J, K}, f, rng);
    auto Cd = random_operand<dense_tensor<3>>(std::array<int, 3>{I, J, K}, 1.0, rng);
    double ref = 0, refd = 0;
    for (std::size_t x = 0; x < B.d.size(); ++x) ref += B.d[x] * C.d[x], refd += B.d[x] * Cd.d[x];
    scalar<double> a;
    a() = B.t(i, j, k) * C.t(i, j, k);
    if (a.value() != ref) ++bad, ADD_FAILURE() << "INNERPROD " << tag << ": " << a.value() << " vs " << ref;
    a() = B.t(i, j, k) * Cd.t(i, j, k);
    if (a.value() != refd) ++bad, ADD_FAILURE() << "INNERPROD dense " << tag << ": " << a.value() << " vs " << refd;
  }
  {  // PLUS: A(i,j,k) = B(i,j,k) + C(i,j,k), C in COO
    auto C = random_operand<coo_tensor<3>>(std::array<int, 3>{I, J, K}, f, rng);
    std::vector<double> ref(B.d.size());
    for (std::size_t x = 0; x < ref.size(); ++x) ref[x] = B.d[x] + C.d[x];
    tensor<double, dense_tensor<3>> A({I, J, K});
    A(i, j, k) = B.t(i, j, k) + C.t(i, j, k);
    bad += count_mismatches<double>(A.values(), ref, "PLUS " + tag);
  }
  return bad;
}

TEST(Codegen, TL_TEST_NAME(Table5KernelsExhaustiveSmall, TL_PART)) {
  std::mt19937_64 rng(30);
  std::size_t bad = 0;
  for_each_format<B_formats>([&]<class FB>(std::type_identity<FB>) {
    for (int I = 0; I <= 3; ++I)
      for (int J = 0; J <= 3; ++J)
        for (int K = 0; K <= 3; ++K)
          for (double f : {0.0, 0.3, 1.0}) bad += kernels3<FB>(I, J, K, f, rng);
  });
  EXPECT_EQ(bad, 0u);
}

TEST(Codegen, TL_TEST_NAME(Table5KernelsRandomLarger, TL_PART)) {
  std::mt19937_64 rng(31);
  std::size_t bad = 0;
  for_each_format<B_formats>([&]<class FB>(std::type_identity<FB>) { bad += kernels3<FB>(17, 13, 11, 0.05, rng); });
  EXPECT_EQ(bad, 0u);
}

}  // namespace
