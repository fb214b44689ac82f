// fuse() with temporaries (Diffuse's Definition 5, issue 20): a temporary
// whose every use lies in the fused kernel of the statement that first
// writes it is never allocated (a chunk's rows live in a per-thread
// workspace); otherwise fuse allocates it for the call. Programs of
// statement shapes over temporaries are run with their vector slots bound
// at random (outputs alias inputs in every combination, so the plan, not
// the test, decides what fuses and what is allocated) and compared exactly
// with reference loops that hold every temporary as a vector; extents
// cross the chunk size; executors run chunks in order and scrambled (this
// file), or on Kokkos threads (built again as tests/kokkos'
// test_kokkos_fuse_temporaries with TL_FUSE_KOKKOS). The paper's Figures
// 12 and 8 are tests, with allocations counted by a replaced operator new.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "common.hpp"
#include "fuse_executors.hpp"
#include "tensorlev/fuse.hpp"
#include "tensorlev/interop/raw.hpp"

using namespace tensorlev;
using namespace tensorlev::indices;

namespace {

using tltest::second_executor;

// The file runs in one of two modes: built as test_codegen_fuse_temporaries
// (and the Kokkos one), fuse keeps every temporary (keep_temporaries: its
// writer computes it into the workspace or an allocation); built again as
// test_codegen_fuse_substitute (TL_FUSE_SUBSTITUTE), fuse substitutes
// pointwise temporaries into their readers where it can. Every program
// runs in both, against the same reference.
#ifdef TL_FUSE_SUBSTITUTE
constexpr bool substituting = true;
template <class... A>
void fuse_m(const A&... a) {
  fuse(a...);
}
template <class... A>
std::string plan_m(const A&... a) {
  return fusion_plan(a...);
}
#else
constexpr bool substituting = false;
template <class... A>
void fuse_m(const A&... a) {
  fuse(keep_temporaries, a...);
}
template <class... A>
std::string plan_m(const A&... a) {
  return fusion_plan(keep_temporaries, a...);
}
#endif

using vec = tensor<double, dense_vector>;
using dvec = std::vector<double>;
constexpr int pool = 4;
constexpr int width = 3;  // columns of the dense matrix M and the matrix temporary

struct world {
  int n = 0;
  tensor<double, csr> A;
  tensor<double, grouped_rows<3>> G;  // A's entries in groups of 3 rows (loop 0 over blocks of rows)
  std::vector<std::array<int, 2>> Ac;
  std::vector<double> Av;
  tensor<double, dense_row_major> M;  // n x width
  tensor<double, csr> B;              // n x width, some components stored
  std::vector<std::array<int, 2>> Bc;
  std::vector<double> Bv;
  std::array<vec, pool> v;
  scalar<double> s;
};

// The reference: every tensor, temporaries included, as a vector.
struct ref_world {
  int n = 0;
  std::vector<std::array<int, 2>> Ac;
  std::vector<double> Av, M;
  std::vector<std::array<int, 2>> Bc;
  std::vector<double> Bv;
  std::array<dvec, pool> v;
  std::array<dvec, 2> t;  // vector temporaries t0, t1
  dvec T;                 // the matrix temporary, n x width
  double s = 0;
};

world make_world(int n, std::mt19937_64& rng) {
  world w;
  w.n = n;
  std::uniform_int_distribution<int> val(-3, 3), per_row(0, 4);
  const coordinate_list<double, int> list = tltest::random_rows(n, 4, rng, w.Ac, w.Av);
  w.A = pack<csr>(list);
  w.G = pack<grouped_rows<3>>(list);
  w.M = tensor<double, dense_row_major>({n, width});
  for (auto& x : w.M.values()) x = val(rng);
  coordinate_list<double, int> blist({n, width});
  for (int x = 0; x < n; ++x)
    for (int y = 0; y < width; ++y)
      if (per_row(rng) == 0) {
        const double v = val(rng);
        blist.push_back({x, y}, v);
        w.Bc.push_back({x, y});
        w.Bv.push_back(v);
      }
  w.B = pack<csr>(blist);
  for (auto& x : w.v) {
    x = vec({n});
    for (auto& e : x.values()) e = val(rng);
  }
  w.s.value() = val(rng);
  return w;
}

ref_world reference_of(const world& w) {
  ref_world r;
  r.n = w.n;
  r.Ac = w.Ac;
  r.Av = w.Av;
  r.M.assign(w.M.values().begin(), w.M.values().end());
  r.Bc = w.Bc;
  r.Bv = w.Bv;
  for (int k = 0; k < pool; ++k) r.v[k].assign(w.v[k].values().begin(), w.v[k].values().end());
  r.t[0].assign(static_cast<std::size_t>(w.n), 0.0);
  r.t[1].assign(static_cast<std::size_t>(w.n), 0.0);
  r.T.assign(static_cast<std::size_t>(w.n) * width, 0.0);
  r.s = w.s.value();
  return r;
}

// Slots: o, p (output vectors), a, b, c (input vectors).
struct binding {
  int o = 0, p = 0, a = 0, b = 0, c = 0;
};

struct temps {
  temporary<double> t0, t1;
  temporary<double, 2> T;
  // Each of its own type (a Name): one writer per type, so fuse can
  // substitute each of them.
  temporary<double, 1, int, struct u0_name> u0;
  temporary<double, 1, int, struct u1_name> u1;
  temporary<double, 2, int, struct U_name> U;
  explicit temps(int n) : t0({n}), t1({n}), T({n, width}), u0({n}), u1({n}), U({n, width}) {}
};

template <class F>
void each_row(int n, F f) {
  for (std::size_t x = 0; x < static_cast<std::size_t>(n); ++x) f(x);
}

// Programs: run(ex, w, t, b) runs them through fuse; ref(r, b) on the
// reference. Each names what its plan must show for distinct slots.

// Figure 12's chain and a dot of the temporary: one kernel, t0 never allocated.
struct chain {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 1;
  static constexpr int substituted = substituting ? 1 : 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.v[b.a](i) + w.v[b.b](i), defer(w.v[b.o](i)) = t.t0(i) + w.v[b.c](i),
         defer(w.s()) = t.t0(i) * w.v[b.c](i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] + r.v[b.b][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.t[0][x] + r.v[b.c][x]; });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.v[b.c][x]; });
  }
};

// Two temporaries, one updated in place with +=, a negation and a difference.
struct two_temps {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 2;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.v[b.a](i) - w.v[b.b](i), defer(t.t1(i)) = -(t.t0(i) * w.v[b.c](i)),
         defer(t.t0(i)) += t.t1(i), defer(w.v[b.o](i)) = t.t0(i) - 2.0 * t.t1(i),
         defer(w.s()) += w.v[b.o](i) * t.t1(i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] - r.v[b.b][x]; });
    each_row(r.n, [&](std::size_t x) { r.t[1][x] = -(r.t[0][x] * r.v[b.c][x]); });
    each_row(r.n, [&](std::size_t x) { r.t[0][x] += r.t[1][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.t[0][x] - 2.0 * r.t[1][x]; });
    each_row(r.n, [&](std::size_t x) { r.s += r.v[b.o][x] * r.t[1][x]; });
  }
};

// A temporary written by SpMV (rows without entries: = zero-fills its
// chunk rows in the workspace, which holds the last chunk's values).
struct spmv_into_temp {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 1;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.A(i, j) * w.v[b.a](j), defer(w.v[b.o](i)) = t.t0(i) + w.v[b.b](i),
         defer(w.s()) = t.t0(i) * w.v[b.c](i));
  }
  static void ref(ref_world& r, const binding& b) {
    for (std::size_t e = 0; e < r.Av.size(); ++e) r.t[0][r.Ac[e][0]] += r.Av[e] * r.v[b.a][r.Ac[e][1]];
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.t[0][x] + r.v[b.b][x]; });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.v[b.c][x]; });
  }
};

// A temporary read at other rows (SpMV): a second kernel, t0 allocated.
struct read_by_spmv {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 0;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = 2.0 * w.v[b.a](i), defer(w.v[b.o](i)) = w.A(i, j) * t.t0(j),
         defer(w.v[b.p](i)) = t.t0(i) + w.v[b.o](i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = 2.0 * r.v[b.a][x]; });
    dvec y(static_cast<std::size_t>(r.n), 0.0);
    for (std::size_t e = 0; e < r.Av.size(); ++e) y[r.Ac[e][0]] += r.Av[e] * r.t[0][r.Ac[e][1]];
    r.v[b.o] = y;
    each_row(r.n, [&](std::size_t x) { r.v[b.p][x] = r.t[0][x] + r.v[b.o][x]; });
  }
};

// A matrix temporary: rows scaled, row-wise dots, its squared norm; a
// vector temporary written by a reduction; the matrix temporary written
// again by a sparse matrix (= zero-fills its chunk rows in the workspace,
// which holds the last chunk's values).
struct matrix_temp {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 2;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.T(i, j)) = w.v[b.a](i) * w.M(i, j), defer(w.v[b.o](i)) = t.T(i, j) * w.M(i, j),
         defer(w.s()) = t.T(i, j) * t.T(i, j), defer(t.T(i, j)) += w.M(i, j),
         defer(t.t1(i)) = t.T(i, j) * w.M(i, j), defer(t.T(i, j)) = w.B(i, j) * w.v[b.c](i),
         defer(w.v[b.p](i)) += t.t1(i) - w.v[b.c](i), defer(w.v[b.p](i)) += t.T(i, j) * w.M(i, j));
  }
  static void ref(ref_world& r, const binding& b) {
    const auto at = [](std::size_t x, std::size_t y) { return x * width + y; };
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.T[at(x, y)] = r.v[b.a][x] * r.M[at(x, y)];
    });
    each_row(r.n, [&](std::size_t x) {
      double sum = 0;
      for (std::size_t y = 0; y < width; ++y) sum += r.T[at(x, y)] * r.M[at(x, y)];
      r.v[b.o][x] = sum;
    });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.s += r.T[at(x, y)] * r.T[at(x, y)];
    });
    for (std::size_t x = 0; x < r.T.size(); ++x) r.T[x] += r.M[x];
    each_row(r.n, [&](std::size_t x) {
      r.t[1][x] = 0;
      for (std::size_t y = 0; y < width; ++y) r.t[1][x] += r.T[at(x, y)] * r.M[at(x, y)];
    });
    std::fill(r.T.begin(), r.T.end(), 0.0);
    for (std::size_t e = 0; e < r.Bv.size(); ++e)
      r.T[at(static_cast<std::size_t>(r.Bc[e][0]), static_cast<std::size_t>(r.Bc[e][1]))] =
          r.Bv[e] * r.v[b.c][static_cast<std::size_t>(r.Bc[e][0])];
    each_row(r.n, [&](std::size_t x) { r.v[b.p][x] += r.t[1][x] - r.v[b.c][x]; });
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.v[b.p][x] += r.T[at(x, y)] * r.M[at(x, y)];
    });
  }
};

// A temporary read after a pending reduction of it: the read starts a new
// kernel, so t0 is allocated.
struct read_after_reduction {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = substituting ? 1 : 0;
  static constexpr int substituted = substituting ? 1 : 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.v[b.a](i) + w.v[b.b](i), defer(w.s()) = t.t0(i) * t.t0(i),
         defer(w.v[b.o](i)) = w.s() * t.t0(i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] + r.v[b.b][x]; });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.t[0][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.s * r.t[0][x]; });
  }
};

// Two fused kernels, each with its own eliminated temporary: the second
// starts where a statement reads the scalar the first reduces.
struct two_kernels {
  // Temporaries never allocated with slots distinct, kept and substituted;
  // and how many the substituting plan substitutes.
  static constexpr int eliminated = 2;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.v[b.a](i) + w.v[b.b](i), defer(w.s()) = t.t0(i) * t.t0(i),
                           defer(t.t1(i)) = w.s() * w.v[b.a](i) + w.v[b.c](i),
                           defer(w.v[b.o](i)) = t.t1(i) - w.v[b.b](i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] + r.v[b.b][x]; });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.t[0][x]; });
    each_row(r.n, [&](std::size_t x) { r.t[1][x] = r.s * r.v[b.a][x] + r.v[b.c][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.t[1][x] - r.v[b.b][x]; });
  }
};

// Named temporaries: u0 into statements 2 and 3, u1 (its expression now
// over a and b) into 3 and 4; neither writer runs. Kept, both live in the
// workspace.
struct named_chain {
  static constexpr int eliminated = 2;
  static constexpr int substituted = substituting ? 2 : 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.u0(i)) = w.v[b.a](i) - w.v[b.b](i), defer(t.u1(i)) = 2.0 * t.u0(i) - w.v[b.a](i),
                           defer(w.s()) = t.u0(i) * t.u1(i), defer(w.v[b.o](i)) = -t.u1(i) + w.v[b.c](i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] - r.v[b.b][x]; });
    each_row(r.n, [&](std::size_t x) { r.t[1][x] = 2.0 * r.t[0][x] - r.v[b.a][x]; });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.t[1][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = -r.t[1][x] + r.v[b.c][x]; });
  }
};

// u0 read at other rows (SpMV) stays and is allocated; its pointwise
// reads (statements 3 and 4) are substituted all the same.
struct named_partial {
  static constexpr int eliminated = 0;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.u0(i)) = w.v[b.a](i) * w.v[b.b](i), defer(w.v[b.o](i)) = w.A(i, j) * t.u0(j),
                           defer(w.v[b.p](i)) = t.u0(i) + w.v[b.o](i), defer(w.s()) += t.u0(i) * w.v[b.c](i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) { r.t[0][x] = r.v[b.a][x] * r.v[b.b][x]; });
    dvec y(static_cast<std::size_t>(r.n), 0.0);
    for (std::size_t e = 0; e < r.Av.size(); ++e) y[r.Ac[e][0]] += r.Av[e] * r.t[0][r.Ac[e][1]];
    r.v[b.o] = y;
    each_row(r.n, [&](std::size_t x) { r.v[b.p][x] = r.t[0][x] + r.v[b.o][x]; });
    each_row(r.n, [&](std::size_t x) { r.s += r.t[0][x] * r.v[b.c][x]; });
  }
};

// A matrix temporary substituted into a row-wise dot, a squared norm and a
// += read through other variables (U(i, k): renamed).
struct named_matrix {
  static constexpr int eliminated = 1;
  static constexpr int substituted = substituting ? 1 : 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.U(i, j)) = w.v[b.a](i) * w.M(i, j) - w.M(i, j),
                           defer(w.v[b.o](i)) = t.U(i, j) * w.M(i, j), defer(w.s()) = t.U(i, j) * t.U(i, j),
                           defer(w.v[b.p](i)) += t.U(i, k) * w.M(i, k));
  }
  static void ref(ref_world& r, const binding& b) {
    const auto at = [](std::size_t x, std::size_t y) { return x * width + y; };
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.T[at(x, y)] = r.v[b.a][x] * r.M[at(x, y)] - r.M[at(x, y)];
    });
    each_row(r.n, [&](std::size_t x) {
      double sum = 0;
      for (std::size_t y = 0; y < width; ++y) sum += r.T[at(x, y)] * r.M[at(x, y)];
      r.v[b.o][x] = sum;
    });
    r.s = 0;
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.s += r.T[at(x, y)] * r.T[at(x, y)];
    });
    each_row(r.n, [&](std::size_t x) {
      for (std::size_t y = 0; y < width; ++y) r.v[b.p][x] += r.T[at(x, y)] * r.M[at(x, y)];
    });
  }
};

// Functions and quotients: u0 (a square root) is read twice, so it is
// computed once into the workspace; u1 (a quotient) is read once and
// substituted.
struct named_functions {
  static constexpr int eliminated = 2;
  static constexpr int substituted = substituting ? 1 : 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.u0(i)) = sqrt(w.v[b.a](i) * w.v[b.a](i) + w.v[b.b](i) * w.v[b.b](i)),
                           defer(t.u1(i)) = w.v[b.a](i) / (w.v[b.b](i) * w.v[b.b](i) + 1.0),
                           defer(w.v[b.o](i)) = t.u0(i) * w.v[b.c](i), defer(w.v[b.p](i)) = t.u1(i) - t.u0(i));
  }
  static void ref(ref_world& r, const binding& b) {
    each_row(r.n, [&](std::size_t x) {
      r.t[0][x] = std::sqrt(r.v[b.a][x] * r.v[b.a][x] + r.v[b.b][x] * r.v[b.b][x]);
    });
    each_row(r.n, [&](std::size_t x) { r.t[1][x] = r.v[b.a][x] / (r.v[b.b][x] * r.v[b.b][x] + 1.0); });
    each_row(r.n, [&](std::size_t x) { r.v[b.o][x] = r.t[0][x] * r.v[b.c][x]; });
    each_row(r.n, [&](std::size_t x) { r.v[b.p][x] = r.t[1][x] - r.t[0][x]; });
  }
};

// The same with A in groups of 3 rows: the SpMV's chunks are whole groups
// (a multiple of 3 rows), its block flush writes the temporary's window.
struct grouped_spmv_into_temp {
  static constexpr int eliminated = 1;
  static constexpr int substituted = 0;
  static auto make(world& w, temps& t, const binding& b) {
    return std::make_tuple(defer(t.t0(i)) = w.G(i, j) * w.v[b.a](j), defer(w.v[b.o](i)) = t.t0(i) + w.v[b.b](i),
                           defer(w.s()) = t.t0(i) * w.v[b.c](i));
  }
  static void ref(ref_world& r, const binding& b) { spmv_into_temp::ref(r, b); }
};

template <class... S>
void run_fused(const executor& ex, const std::tuple<S...>& s) {
  std::apply([&](const auto&... x) { fuse_m(ex, x...); }, s);
}
template <class... S>
std::string plan_of(const std::tuple<S...>& s) {
  return std::apply([](const auto&... x) { return plan_m(x...); }, s);
}
std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t c = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++c;
  return c;
}

template <class P>
void check_program(const std::vector<int>& extents, int bindings) {
  {
    // With outputs distinct from every vector read (a and c alias: reads
    // only), the plan eliminates what the program says.
    std::mt19937_64 r2(99);
    world w = make_world(5000, r2);
    temps t(5000);
    const std::string plan = plan_of(P::make(w, t, binding{0, 1, 2, 3, 2}));
    EXPECT_EQ(count_of(plan, "never allocated"), static_cast<std::size_t>(P::eliminated)) << plan;
    EXPECT_EQ(count_of(plan, "substituted:"), static_cast<std::size_t>(P::substituted)) << plan;
  }
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int> slot(0, pool - 1);
  for (int n : extents) {
    for (int trial = 0; trial < bindings; ++trial) {
      const binding b{slot(rng), slot(rng), slot(rng), slot(rng), slot(rng)};
      const world w0 = make_world(n, rng);
      ref_world r = reference_of(w0);
      P::ref(r, b);
      for (int run = 0; run < 2; ++run) {
        const executor ex = run == 0 ? executor(serial) : second_executor();
        world w = w0;
        temps t(n);
        run_fused(ex, P::make(w, t, b));
        const std::string where = "n=" + std::to_string(n) + " trial " + std::to_string(trial) + " run " +
                                  std::to_string(run) + " slots o" + std::to_string(b.o) + " p" + std::to_string(b.p) +
                                  " a" + std::to_string(b.a) + " b" + std::to_string(b.b) + " c" + std::to_string(b.c);
        for (int k = 0; k < pool; ++k)
          ASSERT_TRUE(std::equal(r.v[k].begin(), r.v[k].end(), w.v[k].values().begin())) << where << " vector " << k;
        ASSERT_EQ(w.s.value(), r.s) << where;
        // The values are gone once fuse returns.
        EXPECT_FALSE(t.t0.has_values()) << where;
        EXPECT_FALSE(t.T.has_values()) << where;
        EXPECT_FALSE(t.u0.has_values()) << where;
        EXPECT_FALSE(t.U.has_values()) << where;
      }
    }
  }
}

const std::vector<int> extents{0, 1, 7, 1023, 1025, 4100, 20000};

}  // namespace

TEST(FuseTemporaries, ChainEveryAliasing) { check_program<chain>(extents, 6); }
TEST(FuseTemporaries, SpmvIntoTemporaryEveryAliasing) { check_program<spmv_into_temp>(extents, 6); }
TEST(FuseTemporaries, GroupedSpmvIntoTemporaryEveryAliasing) { check_program<grouped_spmv_into_temp>(extents, 4); }
TEST(FuseTemporaries, TwoTemporariesEveryAliasing) { check_program<two_temps>(extents, 6); }
TEST(FuseTemporaries, ReadAtOtherRowsEveryAliasing) { check_program<read_by_spmv>(extents, 6); }
TEST(FuseTemporaries, MatrixTemporaryEveryAliasing) { check_program<matrix_temp>(extents, 4); }
TEST(FuseTemporaries, ReadAfterReductionEveryAliasing) { check_program<read_after_reduction>(extents, 4); }
TEST(FuseTemporaries, TwoKernelsEveryAliasing) { check_program<two_kernels>(extents, 4); }
TEST(FuseTemporaries, NamedChainEveryAliasing) { check_program<named_chain>(extents, 6); }
TEST(FuseTemporaries, NamedPartialEveryAliasing) { check_program<named_partial>(extents, 4); }
TEST(FuseTemporaries, NamedMatrixEveryAliasing) { check_program<named_matrix>(extents, 4); }
TEST(FuseTemporaries, NamedFunctionsEveryAliasing) { check_program<named_functions>(extents, 4); }

// What the plans say, slots distinct.
TEST(FuseTemporaries, PlansSayWhatIsAllocated) {
  std::mt19937_64 rng(5);
  world w = make_world(3000, rng);
  temps t(3000);
  auto& [a, b, c, o] = w.v;
  std::string plan = plan_m(defer(t.t0(i)) = a(i) + b(i), defer(o(i)) = t.t0(i) + c(i));
  EXPECT_EQ(plan.find("kernel 2"), std::string::npos) << plan;
  EXPECT_NE(plan.find("temporary written first by statement 1: never allocated"), std::string::npos) << plan;
  plan = plan_m(defer(t.t0(i)) = 2.0 * a(i), defer(o(i)) = w.A(i, j) * t.t0(j));
  EXPECT_NE(plan.find("statement 2 starts a new kernel: it reads what statement 1 writes, at other rows"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("temporary written first by statement 1: allocated for the call (24000 bytes): statement 2 "
                      "reads it in another kernel than statement 1"),
            std::string::npos)
      << plan;
  // A temporary written by a statement that cannot be fused (CSC: a scatter).
  tensor<double, csc> B = pack<csc>(coordinate_list<double, int>({3000, 3000}));
  plan = plan_m(defer(t.t0(i)) = B(i, j) * a(j));
  EXPECT_NE(plan.find("allocated for the call (24000 bytes): statement 1, which writes it, runs alone"),
            std::string::npos)
      << plan;
  plan = plan_m(defer(t.t0(i)) = B(i, j) * a(j), defer(o(i)) = t.t0(i));
  EXPECT_NE(plan.find("allocated for the call (24000 bytes): statement 2 reads it in another kernel"),
            std::string::npos)
      << plan;
  tensor<double, dense_row_major> W({3000, 200});
  temporary<double, 2> X({3000, 200});
  // A temporary too wide for the workspace is allocated (kept), or
  // substituted (its reader reads 2 W(i, j) instead).
  plan = plan_m(defer(X(i, j)) = 2.0 * W(i, j), defer(o(i)) = X(i, j) * W(i, j));
  EXPECT_NE(plan.find(substituting ? "temporary written first by statement 1: never allocated (substituted: statement 2 "
                                     "read its expression instead, in registers; statement 1 does not run"
                                   : "allocated for the call (4800000 bytes): a chunk's rows of it take 1638400 bytes"),
            std::string::npos)
      << plan;
  if (substituting) {
    EXPECT_NE(plan.find("kernel 1: statement 2 alone (its own loop nests): out(i) = c * t1(i,j) * t2(i,j)\n"),
              std::string::npos)
        << plan;
  }
  const auto k0 = kernels_run();
  fuse_m(defer(t.t0(i)) = B(i, j) * a(j), defer(o(i)) = t.t0(i) + c(i));
  EXPECT_EQ(kernels_run() - k0, 2u);
  for (std::size_t x = 0; x < 3000; ++x) EXPECT_EQ(o.values()[x], c.values()[x]) << x;  // B is zero
}

TEST(FuseTemporaries, RefusesReadsBeforeTheFirstWrite) {
  std::mt19937_64 rng(6);
  world w = make_world(100, rng);
  temps t(100);
  vec& a = w.v[0];
  vec& b = w.v[1];
  vec& o = w.v[3];
  const auto message = [](auto f) {
    try {
      f();
    } catch (const tensorlev::error& e) {
      return std::string(e.what());
    }
    return std::string("not refused");
  };
  std::string m = message([&] { fuse_m(defer(o(i)) = t.t0(i) + a(i)); });
  EXPECT_NE(m.find("statement 1 (out(i) = (t1(i) + t2(i))) reads a temporary that no earlier statement"),
            std::string::npos)
      << m;
  m = message([&] { fuse_m(defer(o(i)) = a(i), defer(t.t0(i)) += a(i)); });
  EXPECT_NE(m.find("statement 2 (out(i) += t1(i)) adds (+=) into a temporary"), std::string::npos) << m;
  m = message([&] { fuse_m(defer(t.t0(i)) = t.t0(i) + a(i)); });
  EXPECT_NE(m.find("reads a temporary"), std::string::npos) << m;
  // Values do not survive a call: a second fuse cannot read the first one's.
  fuse_m(defer(t.t0(i)) = a(i), defer(o(i)) = t.t0(i));
  m = message([&] { fuse_m(defer(b(i)) = t.t0(i)); });
  EXPECT_NE(m.find("reads a temporary"), std::string::npos) << m;
  // A failed call leaves no values behind either.
  EXPECT_FALSE(t.t0.has_values());
  EXPECT_THROW(temporary<double>({-1}), tensorlev::shape_error);
}

// Figure 2's stencil in one dimension (two dimensions: the next test):
// center, west and east view one grid at offsets 1, 0 and 2. The
// sum and the scaling fuse into one kernel whose temporaries t1 and avg are
// never allocated; the copy back into center writes what the kernel reads
// at other rows (west and east overlap center), so it is a second kernel,
// and work, which it reads, is allocated. The grid after each sweep equals
// a Jacobi sweep on a copy.
TEST(FuseTemporaries, Figure2StencilOneKernelPlusTheCopy) {
  for (int n : {1, 2, 1000, 9000}) {
    std::vector<double> grid(static_cast<std::size_t>(n) + 2), ref;
    for (std::size_t k = 0; k < grid.size(); ++k) grid[k] = static_cast<double>(k % 11) - 5.0;
    ref = grid;
    auto west = vector_view(n, grid.data());
    auto center = vector_view(n, grid.data() + 1);
    auto east = vector_view(n, grid.data() + 2);
    temporary<double> t1({n}), avg({n}), work({n});
    const auto s1 = defer(t1(i)) = center(i) + west(i);
    const auto s2 = defer(avg(i)) = t1(i) + east(i);
    const auto s3 = defer(work(i)) = 0.25 * avg(i);
    const auto s4 = defer(center(i)) = work(i);
    const std::string plan = plan_m(s1, s2, s3, s4);
    // One row: the three views do not overlap, and everything fuses.
    const bool overlap = n > 1;
    if (!overlap) {
      EXPECT_NE(plan.find("kernel 1: loop over 1 rows in chunks of 1024: [1] out(i) = (t1(i) + t2(i)); [2] out(i) = "
                          "(t1(i) + t2(i)); [3] out(i) = c * t1(i); [4] out(i) = t1(i)\n"),
                std::string::npos)
          << plan;
      EXPECT_NE(plan.find("temporary written first by statement 3: never allocated"), std::string::npos) << plan;
    } else {
    EXPECT_NE(plan.find("kernel 1: loop over " + std::to_string(n) + " rows in chunks of 1024: [1] out(i) = (t1(i) + "
                        "t2(i)); [2] out(i) = (t1(i) + t2(i)); [3] out(i) = c * t1(i)\n  statement 4 starts a new "
                        "kernel: it writes what statement 1 reads, at other rows\nkernel 2: statement 4 alone"),
              std::string::npos)
        << plan;
    EXPECT_NE(plan.find("temporary written first by statement 1: never allocated"), std::string::npos) << plan;
    EXPECT_NE(plan.find("temporary written first by statement 2: never allocated"), std::string::npos) << plan;
    EXPECT_NE(plan.find("temporary written first by statement 3: allocated for the call (" + std::to_string(8 * n) +
                        " bytes): statement 4 reads it in another kernel"),
              std::string::npos)
        << plan;
    }
    for (int sweep = 0; sweep < 4; ++sweep) {
      const executor ex = sweep % 2 == 0 ? executor(serial) : second_executor();
      const auto k0 = kernels_run();
      fuse_m(ex, s1, s2, s3, s4);
      EXPECT_EQ(kernels_run() - k0, overlap ? 2u : 1u);
      const std::vector<double> old = ref;
      for (std::size_t k = 1; k + 1 < ref.size(); ++k) ref[k] = 0.25 * ((old[k] + old[k - 1]) + old[k + 1]);
      ASSERT_EQ(grid, ref) << "n=" << n << " sweep " << sweep;
    }
    // Written in place as one statement, the sweep would read updated
    // neighbours: refused.
    if (overlap) {
      EXPECT_THROW(fuse_m(defer(center(i)) = 0.25 * (center(i) + west(i) + east(i))), tensorlev::error);
    }
  }
}

// Figure 2's stencil as the paper writes it, in two dimensions: center,
// north, south, west and east are strided views (dense_view with a leading
// dimension) of one (n + 2) x (n + 2) grid. The four sums and the scaling
// fuse into one kernel whose temporaries t1..t4 are never allocated; the
// copy back into center writes what the kernel reads at other rows, so it
// is a second kernel, and work is allocated. The halo (the grid's border)
// is never written. The grid after each sweep equals a Jacobi sweep on a copy.
TEST(FuseTemporaries, Figure2StencilTwoDimensions) {
  for (int n : {1, 2, 7, 130}) {
    const int w = n + 2;
    std::vector<double> grid(static_cast<std::size_t>(w * w)), ref;
    for (std::size_t k = 0; k < grid.size(); ++k) grid[k] = static_cast<double>((k * 7) % 13) - 6.0;
    ref = grid;
    double* g = grid.data();
    auto center = dense_view(n, n, w, g + w + 1);
    auto north = dense_view(n, n, w, g + 1);
    auto south = dense_view(n, n, w, g + 2 * w + 1);
    auto west = dense_view(n, n, w, g + w);
    auto east = dense_view(n, n, w, g + w + 2);
    temporary<double, 2> t1({n, n}), t2({n, n}), t3({n, n}), t4({n, n}), work({n, n});
    const auto s1 = defer(t1(i, j)) = center(i, j) + north(i, j);
    const auto s2 = defer(t2(i, j)) = t1(i, j) + east(i, j);
    const auto s3 = defer(t3(i, j)) = t2(i, j) + west(i, j);
    const auto s4 = defer(t4(i, j)) = t3(i, j) + south(i, j);
    const auto s5 = defer(work(i, j)) = 0.2 * t4(i, j);
    const auto s6 = defer(center(i, j)) = work(i, j);
    const std::string plan = plan_m(s1, s2, s3, s4, s5, s6);
    const bool overlap = n > 1;
    EXPECT_EQ(count_of(plan, "never allocated"), overlap ? 4u : 5u) << plan;
    if (overlap) {
      EXPECT_NE(plan.find("statement 6 starts a new kernel: it writes what statement 1 reads, at other rows\nkernel 2: "
                          "statement 6 alone"),
                std::string::npos)
          << plan;
      EXPECT_NE(plan.find("temporary written first by statement 5: allocated for the call (" +
                          std::to_string(8 * n * n) + " bytes): statement 6 reads it in another kernel"),
                std::string::npos)
          << plan;
    } else {
      EXPECT_EQ(plan.find("kernel 2"), std::string::npos) << plan;
    }
    for (int sweep = 0; sweep < 4; ++sweep) {
      const executor ex = sweep % 2 == 0 ? executor(serial) : second_executor();
      const auto k0 = kernels_run();
      fuse_m(ex, s1, s2, s3, s4, s5, s6);
      EXPECT_EQ(kernels_run() - k0, overlap ? 2u : 1u);
      const std::vector<double> old = ref;
      for (int r = 1; r <= n; ++r)
        for (int c = 1; c <= n; ++c) {
          const auto at = [&](int y, int x) { return old[static_cast<std::size_t>(y * w + x)]; };
          ref[static_cast<std::size_t>(r * w + c)] =
              0.2 * ((((at(r, c) + at(r - 1, c)) + at(r, c + 1)) + at(r, c - 1)) + at(r + 1, c));
        }
      ASSERT_EQ(grid, ref) << "n=" << n << " sweep " << sweep;
    }
    if (overlap) {
      EXPECT_THROW(fuse_m(defer(center(i, j)) = 0.2 * (center(i, j) + north(i, j))), tensorlev::error);
    }
  }
}

// Black-Scholes (the paper's example: 67 tasks into one), each iteration
// one fused kernel over the options, every intermediate a temporary never
// allocated; compared with the formula evaluated by the same operations.
TEST(FuseTemporaries, BlackScholesOneKernelPerIteration) {
  for (int n : {0, 1, 3000, 10000}) {
    vec S({n}), X({n}), T({n}), call({n}), put({n});
    for (int k = 0; k < n; ++k) {
      S.values()[k] = 10.0 + k % 31;
      X.values()[k] = 12.0 + k % 17;
      T.values()[k] = 0.25 + 0.125 * (k % 13);
    }
    temporary<double> sqrtT({n}), d1({n}), d2({n}), c1({n}), c2({n}), xe({n});
    const double r = 0.02, v = 0.3, h = 1.0 / std::sqrt(2.0);
    const auto s1 = defer(sqrtT(i)) = sqrt(T(i));
    const auto s2 = defer(d1(i)) = (log(S(i) / X(i)) + (r + 0.5 * v * v) * T(i)) / (v * sqrtT(i));
    const auto s3 = defer(d2(i)) = d1(i) - v * sqrtT(i);
    const auto s4 = defer(c1(i)) = 0.5 + 0.5 * erf(h * d1(i));
    const auto s5 = defer(c2(i)) = 0.5 + 0.5 * erf(h * d2(i));
    const auto s6 = defer(xe(i)) = X(i) * exp(-r * T(i));
    const auto s7 = defer(call(i)) = S(i) * c1(i) - xe(i) * c2(i);
    const auto s8 = defer(put(i)) = xe(i) * (1.0 - c2(i)) - S(i) * (1.0 - c1(i));
    const std::string plan = plan_m(s1, s2, s3, s4, s5, s6, s7, s8);
    EXPECT_EQ(plan.find("kernel 2"), std::string::npos) << plan;
    EXPECT_EQ(count_of(plan, "never allocated"), 6u) << plan;
    for (int iteration = 0; iteration < 3; ++iteration) {
      const executor ex = iteration == 1 ? second_executor() : executor(serial);
      const auto k0 = kernels_run();
      fuse_m(ex, s1, s2, s3, s4, s5, s6, s7, s8);
      EXPECT_EQ(kernels_run() - k0, 1u);
      for (int k = 0; k < n; ++k) {
        const double s = S.values()[k], x = X.values()[k], t = T.values()[k];
        const double sq = std::sqrt(t), e1 = (std::log(s / x) + (r + 0.5 * v * v) * t) / (v * sq), e2 = e1 - v * sq;
        const double n1 = 0.5 + 0.5 * std::erf(h * e1), n2 = 0.5 + 0.5 * std::erf(h * e2), xr = x * std::exp(-r * t);
        ASSERT_NEAR(call.values()[k], s * n1 - xr * n2, 1e-12 * s) << n << " " << k;
        ASSERT_NEAR(put.values()[k], xr * (1.0 - n2) - s * (1.0 - n1), 1e-12 * s) << n << " " << k;
        ASSERT_NEAR(call.values()[k] - put.values()[k], s - xr, 1e-9 * s) << "put-call parity " << k;
      }
      // The next iteration's prices move.
      for (auto& x : S.values()) x *= 1.01;
    }
  }
}

// Value types, index types and orders other than double vectors of int.
TEST(FuseTemporaries, OtherValueIndexTypesAndOrders) {
  const int n = 2500;
  {
    tensor<float, dense_vector> a({n}), e({n});
    for (int k = 0; k < n; ++k) a.values()[k] = static_cast<float>(k % 9);
    temporary<float> c({n});
    fuse_m(defer(c(i)) = a(i) * a(i), defer(e(i)) = c(i) - a(i));
    for (int k = 0; k < n; ++k) ASSERT_EQ(e.values()[k], static_cast<float>((k % 9) * (k % 9) - k % 9)) << k;
  }
  {
    using cd = std::complex<double>;
    tensor<cd, dense_vector> a({n}), e({n});
    for (int k = 0; k < n; ++k) a.values()[k] = cd(k % 5, -(k % 3));
    temporary<cd> c({n});
    scalar<cd> s;
    fuse_m(defer(c(i)) = a(i) * a(i), defer(e(i)) = c(i) + a(i), defer(s()) = c(i) * a(i));
    cd ref{};
    for (int k = 0; k < n; ++k) {
      const cd x(k % 5, -(k % 3));
      ASSERT_EQ(e.values()[k], x * x + x) << k;
      ref += x * x * x;
    }
    EXPECT_EQ(s.value(), ref);
  }
  {
    using big = tensor<double, dense_vector, std::int64_t>;
    big a({n}), e({n});
    for (int k = 0; k < n; ++k) a.values()[k] = k;
    temporary<double, 1, std::int64_t> c({n});
    fuse_m(defer(c(i)) = 2.0 * a(i), defer(e(i)) = c(i) + a(i));
    for (int k = 0; k < n; ++k) ASSERT_EQ(e.values()[k], 3.0 * k) << k;
  }
  {
    // Order 3, and an inner dimension of 0.
    tensor<double, dense_tensor<3>> A({n, 2, 3});
    for (std::size_t x = 0; x < A.values().size(); ++x) A.values()[x] = static_cast<double>(x % 11);
    tensor<double, dense_vector> e({n});
    temporary<double, 3> C({n, 2, 3});
    fuse_m(defer(C(i, j, k)) = A(i, j, k) * A(i, j, k), defer(e(i)) = C(i, j, k) - A(i, j, k));
    for (int r = 0; r < n; ++r) {
      double want = 0;
      for (int q = 0; q < 6; ++q) {
        const double x = static_cast<double>((static_cast<std::size_t>(r) * 6 + static_cast<std::size_t>(q)) % 11);
        want += x * x - x;
      }
      ASSERT_EQ(e.values()[r], want) << r;
    }
    tensor<double, dense_row_major> Z({n, 0});
    temporary<double, 2> Y({n, 0});
    for (auto& x : e.values()) x = 5;
    fuse_m(defer(Y(i, j)) = 2.0 * Z(i, j), defer(e(i)) = Y(i, j) * Z(i, j));
    for (int r = 0; r < n; ++r) ASSERT_EQ(e.values()[r], 0.0) << r;
  }
  EXPECT_THROW((temporary<double, 2>({1 << 20, 1 << 12})), tensorlev::overflow_error);
}

// A statement that throws while fuse runs leaves no values behind.
TEST(FuseTemporaries, ValuesReleasedWhenAStatementThrows) {
  const int n = 50;
  tensor<double, dense_vector> a({n}), o({n});
  coordinate_list<double, int> list({n, n});
  for (int k = 0; k < n; ++k) list.push_back({k, (k * 7) % n}, 1.0);
  auto C = pack<csr>(list);
  const auto B = pack<csc>(list);
  temporary<double> t({n});
  // B is CSC: the first statement runs alone, so t is allocated; the
  // second (a sparse output read transposed on its own right) throws.
  EXPECT_THROW(fuse_m(defer(t(i)) = B(i, j) * a(j), defer(o(i)) = t(i), defer(C(i, j)) = C(j, i)), tensorlev::error);
  EXPECT_FALSE(t.has_values());
}

TEST(FuseTemporaries, WindowLevel) {
  const window_level<int> w(10, 3, 4);
  const tensorlev::ancestors<int> none(nullptr, 0);
  EXPECT_EQ(w.dimension(), 10);
  EXPECT_EQ(w.coord_bounds(none).begin, 3);
  EXPECT_EQ(w.coord_bounds(none).end, 7);
  EXPECT_EQ(w.locate(0, none, 5).pos, 2);
  EXPECT_EQ(w.locate(2, none, 3).pos, 8);
  EXPECT_EQ(w.size(3), 12);
  EXPECT_EQ(window_level<int>(6).length(), 6);
  EXPECT_THROW(window_level<int>(10, 8, 3), tensorlev::shape_error);
  EXPECT_THROW(window_level<int>(10, -1, 3), tensorlev::shape_error);
  static_assert(tensorlev::locatable_level<window_level<int>> && tensorlev::insertable_level<window_level<int>> &&
                tensorlev::coord_iterable_level<window_level<int>>);
}

#ifdef TL_FUSE_SUBSTITUTE
namespace {
using sub_vec = tensor<double, dense_vector>;
using c_t = temporary<double, 1, int, struct c_name>;
using d_t = temporary<double, 1, int, struct d_name>;
template <class... S>
using substitution_of = tensorlev::cg::substitution<S...>;
}  // namespace

// What is substituted, decided from the types alone.
TEST(FuseSubstitute, DecidedFromTypes) {
  const int n = 10;
  sub_vec a({n}), b({n}), o({n});
  scalar<double> s;
  c_t c({n});
  d_t d({n});
  temporary<double> u({n}), v({n});
  temporary<float, 1, int, struct f_name> f({n});
  tensor<double, csr> A = pack<csr>(coordinate_list<double, int>({n, n}));
  tensor<double, sparse_vector> x = pack<sparse_vector>(coordinate_list<double, int>({n}));
  tensor<float, dense_vector> fa({n});
  // chain_temp: both substituted, neither writer runs; nothing between a
  // writer and its readers writes a vector, so no object is checked.
  {
    using sub = substitution_of<decltype(defer(c(i)) = a(i) + b(i)), decltype(defer(d(i)) = 2.0 * c(i) - a(i)),
                                decltype(defer(s()) = c(i) * d(i))>;
    static_assert(sub::any && !sub::checked);
    static_assert(sub::dropped<0>() && sub::dropped<1>() && !sub::dropped<2>());
    static_assert(sub::at<2>::src[0] == 0 && sub::at<2>::src[1] == 1 && sub::at<1>::src[0] == 0);
    static_assert(sub::into<0>() == 0b110 && sub::into<1>() == 0b100);
    // Statement 3 reads (a + b) * (2 (a + b) - a): the second a and b are
    // copies of statement 1's, so they read through the first ones; the
    // last a is statement 2's own access, which the types do not prove to
    // be the same object. Kernel numbering: 0 is the output.
    static_assert(sub::shares<2>() && sub::read_map<2>() == std::array<int, 6>{0, 1, 2, 1, 2, 5});
    using K = typename tensorlev::cg::fused_statement<sub::final_t<2>>::K;
    static_assert(K::read_source<3>() == 1 && K::read_source<4>() == 2 && K::read_source<5>() == 5);
  }
  // A matrix temporary read twice through the same variables shares its
  // operand; through swapped ones (A(i, j) and A(j, i)) it does not.
  {
    tensor<double, dense_row_major> M({n, n}), R({n, n});
    temporary<double, 2, int, struct sh_name> C({n, n});
    using same = substitution_of<decltype(defer(C(i, j)) = 2.0 * M(i, j) + M(i, j)),
                                 decltype(defer(R(i, j)) = C(i, j) * C(i, j))>;
    static_assert(same::shares<1>() && same::read_map<1>() == std::array<int, 5>{0, 1, 2, 1, 2});
    using swapped = substitution_of<decltype(defer(C(i, j)) = 2.0 * M(i, j)),
                                    decltype(defer(R(i, j)) = C(i, j) - C(j, i))>;
    static_assert(swapped::at<1>::any && !swapped::shares<1>());
    // Reads of the same operand written in the reader itself are not copies.
    static_assert(!substitution_of<decltype(defer(c(i)) = a(i) + b(i)), decltype(defer(s()) = c(i) * a(i) * a(i))>::shares<1>());
  }
  // A vector written between writer and reader: checked on the objects.
  static_assert(substitution_of<decltype(defer(c(i)) = a(i) + b(i)), decltype(defer(o(i)) = 2.0 * a(i)),
                                decltype(defer(s()) = c(i) * a(i))>::checked);
  // Unnamed temporaries of one type with two writers: none.
  static_assert(!substitution_of<decltype(defer(u(i)) = a(i) + b(i)), decltype(defer(v(i)) = 2.0 * u(i)),
                                 decltype(defer(s()) = u(i) * v(i))>::any);
  // ... with one writer: substituted.
  static_assert(substitution_of<decltype(defer(u(i)) = a(i) + b(i)), decltype(defer(s()) = u(i) * a(i))>::any);
  // Not pointwise writers: a reduction, a broadcast, a constant, +=, a
  // sparse operand; and a writer that reads its own temporary.
  static_assert(!substitution_of<decltype(defer(c(i)) = A(i, j) * a(j)), decltype(defer(o(i)) = c(i))>::any);
  static_assert(!substitution_of<decltype(defer(c(i)) = 2.0), decltype(defer(o(i)) = c(i) + a(i))>::any);
  static_assert(!substitution_of<decltype(defer(c(i)) += a(i)), decltype(defer(o(i)) = c(i) + a(i))>::any);
  static_assert(!substitution_of<decltype(defer(c(i)) = x(i) + a(i)), decltype(defer(o(i)) = c(i))>::any);
  // Readers: another variable (SpMV), another value type.
  static_assert(!substitution_of<decltype(defer(c(i)) = a(i) + b(i)), decltype(defer(o(i)) = A(i, j) * c(j))>::any);
  static_assert(!substitution_of<decltype(defer(f(i)) = fa(i) * fa(i)), decltype(defer(s()) = f(i) * a(i))>::any);
  static_assert(substitution_of<decltype(defer(f(i)) = fa(i) * fa(i)), decltype(defer(fa(i)) = f(i) + fa(i))>::any);
  // A function read twice stays; read once, substituted.
  static_assert(!substitution_of<decltype(defer(c(i)) = sqrt(a(i))), decltype(defer(o(i)) = c(i) + a(i)),
                                 decltype(defer(s()) = c(i) * a(i))>::any);
  static_assert(substitution_of<decltype(defer(c(i)) = sqrt(a(i))), decltype(defer(o(i)) = c(i) + a(i))>::any);
  // A term without every variable (a constant, a scalar, a broadcast):
  // not into a reader that sums (each term sums over its own reduction
  // variables), into one that does not.
  static_assert(!substitution_of<decltype(defer(c(i)) = a(i) + 1.0), decltype(defer(s()) = c(i))>::any);
  static_assert(!substitution_of<decltype(defer(c(i)) = a(i) - s()), decltype(defer(s()) += c(i) * b(i))>::any);
  static_assert(substitution_of<decltype(defer(c(i)) = a(i) + 1.0), decltype(defer(o(i)) = c(i) * b(i))>::any);
  static_assert(substitution_of<decltype(defer(c(i)) = 2.0 * (a(i) + b(i))), decltype(defer(s()) = c(i))>::any);
}

// Reducing readers of writers with terms that lack a variable keep the
// temporary; readers that do not reduce take its expression. Compared with
// the kept form and with loops.
TEST(FuseSubstitute, TermsSumOverTheirOwnVariables) {
  const int n = 10, w = 3;
  sub_vec a({n}), b({n}), o({n});
  for (int x = 0; x < n; ++x) a.values()[x] = x, b.values()[x] = x % 3 - 1;
  scalar<double> s, al(2.0);
  c_t c({n});
  fuse(defer(c(i)) = a(i) + 1.0, defer(s()) = c(i));
  EXPECT_EQ(s.value(), 55.0);
  fuse(defer(c(i)) = a(i) - al(), defer(s()) = -c(i));
  EXPECT_EQ(s.value(), -25.0);
  s.value() = 1;
  fuse(defer(c(i)) = a(i) + 1.0, defer(s()) += c(i) * b(i));
  double want = 1;
  for (int x = 0; x < n; ++x) want += (x + 1.0) * (x % 3 - 1);
  EXPECT_EQ(s.value(), want);
  fuse(defer(c(i)) = a(i) + 1.0, defer(o(i)) = c(i) * b(i));  // substituted: no sum
  for (int x = 0; x < n; ++x) ASSERT_EQ(o.values()[x], (x + 1.0) * (x % 3 - 1)) << x;
  EXPECT_NE(fusion_plan(defer(c(i)) = a(i) + 1.0, defer(o(i)) = c(i) * b(i)).find("substituted:"), std::string::npos);
  EXPECT_EQ(fusion_plan(defer(c(i)) = a(i) + 1.0, defer(s()) = c(i)).find("substituted:"), std::string::npos);
  // A broadcast term: C(i, j) = M(i, j) + a(i), summed over j.
  tensor<double, dense_row_major> M({n, w});
  for (std::size_t x = 0; x < M.values().size(); ++x) M.values()[x] = static_cast<double>(x % 5);
  temporary<double, 2, int, struct bc_name> C({n, w});
  fuse(defer(C(i, j)) = M(i, j) + a(i), defer(o(i)) = C(i, j));
  for (int x = 0; x < n; ++x) {
    double r = 0;
    for (int y = 0; y < w; ++y) r += static_cast<double>((x * w + y) % 5) + x;
    ASSERT_EQ(o.values()[x], r) << x;
  }
}

// A read through swapped variables (E(i, j) = C(j, i)), a dropped writer
// between two statements of one fused kernel, a scalar operand written in
// between (the statements run as written), sparse readers.
TEST(FuseSubstitute, RenamesDropsScalarsSparseReaders) {
  const int n = 6000;
  sub_vec a({n}), b({n}), o1({n}), o2({n});
  for (int x = 0; x < n; ++x) a.values()[x] = x % 9 - 4, b.values()[x] = x % 4;
  {
    const int m = 7;
    tensor<double, dense_row_major> A({m, m}), E({m, m});
    for (std::size_t x = 0; x < A.values().size(); ++x) A.values()[x] = static_cast<double>(x);
    temporary<double, 2, int, struct sq_name> C({m, m});
    const auto s1 = defer(C(i, j)) = 2.0 * A(i, j);
    const auto s2 = defer(E(i, j)) = C(j, i) - A(i, j);
    EXPECT_NE(fusion_plan(s1, s2).find("substituted:"), std::string::npos);
    fuse(s1, s2);
    for (int x = 0; x < m; ++x)
      for (int y = 0; y < m; ++y) ASSERT_EQ(E.values()[x * m + y], 2.0 * (y * m + x) - (x * m + y)) << x << " " << y;
  }
  c_t c({n});
  {
    const auto s1 = defer(o1(i)) = 2.0 * a(i);
    const auto s2 = defer(c(i)) = a(i) + b(i);
    const auto s3 = defer(o2(i)) = c(i) - o1(i);
    const std::string plan = fusion_plan(s1, s2, s3);
    EXPECT_NE(plan.find("kernel 1: loop over 6000 rows in chunks of 1024: [1] out(i) = c * t1(i); [3] out(i) = ((t1(i) "
                        "+ t2(i)) - t3(i))\n"),
              std::string::npos)
        << plan;
    EXPECT_NE(plan.find("statement 2 does not run"), std::string::npos) << plan;
    const auto k0 = kernels_run();
    fuse(s1, s2, s3);
    EXPECT_EQ(kernels_run() - k0, 1u);
    for (int x = 0; x < n; ++x) ASSERT_EQ(o2.values()[x], (x % 9 - 4) + (x % 4) - 2.0 * (x % 9 - 4)) << x;
  }
  {
    scalar<double> al(3.0);
    const auto s1 = defer(c(i)) = al() * a(i);
    const auto s2 = defer(al()) = b(i) * b(i);
    const auto s3 = defer(o1(i)) = c(i) + al();
    EXPECT_EQ(fusion_plan(s1, s2, s3).find("substituted:"), std::string::npos);
    fuse(s1, s2, s3);
    double bb = 0;
    for (int x = 0; x < n; ++x) bb += (x % 4) * (x % 4);
    EXPECT_EQ(al.value(), bb);
    for (int x = 0; x < n; ++x) ASSERT_EQ(o1.values()[x], 3.0 * (x % 9 - 4) + bb) << x;
  }
  {
    coordinate_list<double, int> list({n});
    for (int x = 0; x < n; x += 7) list.push_back({x}, x % 5 + 1.0);
    const auto sv = pack<sparse_vector>(list);
    scalar<double> s;
    fuse(defer(c(i)) = a(i) - b(i), defer(o1(i)) = c(i) * sv(i), defer(s()) = sv(i) * c(i));
    double want = 0;
    for (int x = 0; x < n; ++x) {
      const double v = x % 7 == 0 ? x % 5 + 1.0 : 0.0;
      ASSERT_EQ(o1.values()[x], ((x % 9 - 4) - (x % 4)) * v) << x;
      want += v * ((x % 9 - 4) - (x % 4));
    }
    EXPECT_EQ(s.value(), want);
  }
  // Sparse outputs (CSR, COO) of a reader: stored where B is, extents 0, 1
  // and more.
  for (int m : {0, 1, 50}) {
    tensor<double, dense_row_major> Md({m, 4});
    for (std::size_t x = 0; x < Md.values().size(); ++x) Md.values()[x] = static_cast<double>(x % 7) - 3;
    coordinate_list<double, int> list({m, 4});
    for (int x = 0; x < m; ++x)
      for (int y = 0; y < 4; y += 1 + x % 3) list.push_back({x, y}, y + 1.0);
    const auto B = pack<csr>(list);
    temporary<double, 2, int, struct sp_name> C({m, 4});
    auto Y1 = pack<csr>(coordinate_list<double, int>({m, 4}));
    auto Y2 = pack<coo>(coordinate_list<double, int>({m, 4}));
    const auto w = defer(C(i, j)) = 2.0 * Md(i, j);
    EXPECT_NE(fusion_plan(w, defer(Y1(i, j)) = C(i, j) * B(i, j)).find("substituted:"), std::string::npos);
    fuse(w, defer(Y1(i, j)) = C(i, j) * B(i, j));
    fuse(w, defer(Y2(i, j)) = B(i, j) * C(i, j));
    std::vector<double> want(static_cast<std::size_t>(m) * 4, 0.0), got1(want.size(), 0.0), got2(want.size(), 0.0);
    for (std::size_t e = 0; e < list.size(); ++e) {
      const auto at = static_cast<std::size_t>(list.coords(e)[0]) * 4 + static_cast<std::size_t>(list.coords(e)[1]);
      want[at] = 2.0 * Md.values()[at] * list.value(e);
    }
    EXPECT_EQ(Y1.stored(), list.size()) << m;
    EXPECT_EQ(Y2.stored(), list.size()) << m;
    for_each_component(Y1, [&](const auto& c, double v) { got1[static_cast<std::size_t>(c[0]) * 4 + static_cast<std::size_t>(c[1])] = v; });
    for_each_component(Y2, [&](const auto& c, double v) { got2[static_cast<std::size_t>(c[0]) * 4 + static_cast<std::size_t>(c[1])] = v; });
    EXPECT_EQ(got1, want) << m;
    EXPECT_EQ(got2, want) << m;
  }
}

// chain_temp: one statement, one loop; the plan says so, and the result is
// the chain's (exact: small integers).
TEST(FuseSubstitute, ChainTempIsOneStatement) {
  const int n = 9000;
  sub_vec a({n}), b({n});
  for (int x = 0; x < n; ++x) a.values()[x] = x % 7 - 3, b.values()[x] = x % 5;
  scalar<double> s;
  c_t c({n});
  d_t d({n});
  const auto s1 = defer(c(i)) = a(i) + b(i);
  const auto s2 = defer(d(i)) = 2.0 * c(i) - a(i);
  const auto s3 = defer(s()) = c(i) * d(i);
  const std::string plan = fusion_plan(s1, s2, s3);
  EXPECT_EQ(plan,
            "kernel 1: statement 3 alone (its own loop nests): out() = (t1(i) + t2(i)) * (c * (t3(i) + t4(i)) - t5(i))\n"
            "temporary written first by statement 1: never allocated (substituted: statements 2, 3 read its "
            "expression instead, in registers; statement 1 does not run: out(i) = (t1(i) + t2(i)))\n"
            "temporary written first by statement 2: never allocated (substituted: statement 3 read its expression "
            "instead, in registers; statement 2 does not run: out(i) = (c * (t1(i) + t2(i)) - t3(i)))\n"
            "statement 3 reads each copy of a substituted operand once: t3 is t1, t4 is t2\n");
  double ref = 0;
  for (int x = 0; x < n; ++x) {
    const double cx = (x % 7 - 3) + (x % 5);
    ref += cx * (2.0 * cx - (x % 7 - 3));
  }
  for (const executor& ex : {executor(serial), second_executor()}) {
    const auto k0 = kernels_run();
    fuse(ex, s1, s2, s3);
    EXPECT_EQ(kernels_run() - k0, 1u);
    EXPECT_EQ(s.value(), ref);
    EXPECT_FALSE(c.has_values());
  }
  // Kept, the three statements share one chunked kernel and the workspace.
  EXPECT_NE(fusion_plan(keep_temporaries, s1, s2, s3)
                .find("kernel 1: loop over 9000 rows in chunks of 1024: [1] out(i) = (t1(i) + t2(i)); [2]"),
            std::string::npos);
  s.value() = 0;
  fuse(keep_temporaries, s1, s2, s3);
  EXPECT_EQ(s.value(), ref);
}

// Copies of one substituted operand read once (shared_reads): a matrix
// temporary read twice by each of two statements of one fused kernel, one
// writing rows and one a sum, over several chunks of rows, serially and on
// the second executor, exactly against loops.
TEST(FuseSubstitute, CopiesReadOnce) {
  const int m = 3000, w = 3;
  tensor<double, dense_row_major> M({m, w}), R({m, w});
  for (std::size_t x = 0; x < M.values().size(); ++x) M.values()[x] = static_cast<double>(x % 11) - 5;
  temporary<double, 2, int, struct copies_name> C({m, w});
  scalar<double> s;
  const auto s1 = defer(C(i, j)) = 2.0 * M(i, j) + M(i, j);
  const auto s2 = defer(R(i, j)) = C(i, j) * C(i, j);
  const auto s3 = defer(s()) = C(i, j) - C(i, j) * M(i, j);
  const std::string plan = fusion_plan(s1, s2, s3);
  EXPECT_NE(plan.find("kernel 1: loop over 3000 rows in chunks of 1024: [2] "), std::string::npos) << plan;
  EXPECT_NE(plan.find("statement 2 reads each copy of a substituted operand once: t3 is t1, t4 is t2\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("statement 3 reads each copy of a substituted operand once: t3 is t1, t4 is t2\n"),
            std::string::npos)
      << plan;
  double want = 0;
  for (std::size_t x = 0; x < M.values().size(); ++x) {
    const double v = M.values()[x];
    want += 3.0 * v - 3.0 * v * v;
  }
  for (const executor& ex : {executor(serial), second_executor()}) {
    std::fill(R.values().begin(), R.values().end(), -1.0);
    s.value() = -1.0;
    const auto k0 = kernels_run();
    fuse(ex, s1, s2, s3);
    EXPECT_EQ(kernels_run() - k0, 1u);
    for (std::size_t x = 0; x < M.values().size(); ++x)
      ASSERT_EQ(R.values()[x], 9.0 * M.values()[x] * M.values()[x]) << x;
    EXPECT_EQ(s.value(), want);
    EXPECT_FALSE(C.has_values());
  }
}

// Substituting must not move a read past a write of what it reads: a
// reader that overwrites the writer's operand runs the statements as
// written, and so does any statement in between that may alias it.
TEST(FuseSubstitute, WritesOfTheOperandsKeepTheStatements) {
  const int n = 5000;
  sub_vec a({n}), b({n}), o({n});
  for (int x = 0; x < n; ++x) a.values()[x] = x % 9, b.values()[x] = 1 + x % 4;
  c_t c({n});
  // o is not a: substituted.
  EXPECT_NE(fusion_plan(defer(c(i)) = a(i) + b(i), defer(o(i)) = 2.0 * c(i)).find("substituted:"), std::string::npos);
  // a is overwritten by the reader itself, then read by a later reader.
  const auto s1 = defer(c(i)) = a(i) + b(i);
  const auto s2 = defer(a(i)) = 2.0 * c(i);
  const auto s3 = defer(o(i)) = c(i) - a(i);
  const std::string plan = fusion_plan(s1, s2, s3);
  EXPECT_EQ(plan.find("substituted:"), std::string::npos) << plan;
  EXPECT_NE(plan.find("never allocated (a chunk's rows"), std::string::npos) << plan;
  fuse(s1, s2, s3);
  for (int x = 0; x < n; ++x) {
    const double cx = (x % 9) + (1 + x % 4);
    ASSERT_EQ(a.values()[x], 2.0 * cx) << x;
    ASSERT_EQ(o.values()[x], cx - 2.0 * cx) << x;
  }
  // A view of a (another type) written in between.
  auto av = vector_view(n, a.values().data());
  const auto v2 = defer(av(i)) = 0.5 * b(i);
  EXPECT_EQ(fusion_plan(s1, v2, defer(o(i)) = 2.0 * c(i)).find("substituted:"), std::string::npos);
  for (int x = 0; x < n; ++x) a.values()[x] = x % 9;
  fuse(s1, v2, defer(o(i)) = 2.0 * c(i));
  for (int x = 0; x < n; ++x) {
    ASSERT_EQ(o.values()[x], 2.0 * ((x % 9) + (1 + x % 4))) << x;
    ASSERT_EQ(a.values()[x], 0.5 * (1 + x % 4)) << x;
  }
}

// Errors a substituted writer would have raised are raised all the same.
TEST(FuseSubstitute, ErrorsOfSubstitutedWriters) {
  const int n = 100;
  sub_vec a({n}), b({n + 1}), o({n});
  scalar<double> s;
  c_t c({n});
  // Shapes: c has n rows, b n + 1.
  try {
    fuse(defer(c(i)) = a(i) + b(i), defer(s()) = c(i) * a(i));
    ADD_FAILURE() << "not refused";
  } catch (const tensorlev::shape_error& e) {
    EXPECT_NE(std::string(e.what()).find("statement 1 (out(i) = (t1(i) + t2(i))): index variable 'i': operand 2 has "
                                         "extent 101 in dimension 0 but the output has extent 100"),
              std::string::npos)
        << e.what();
  }
  // A read of another object of the writer's type: a temporary that no
  // statement writes (unnamed temporaries share a type).
  temporary<double> u({n}), v({n});
  try {
    fuse(defer(u(i)) = 2.0 * a(i), defer(o(i)) = v(i) + a(i));
    ADD_FAILURE() << "not refused";
  } catch (const tensorlev::error& e) {
    EXPECT_NE(std::string(e.what()).find("statement 2 (out(i) = (t1(i) + t2(i))) reads a temporary that no earlier "
                                         "statement of this fuse writes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(u.has_values());
  EXPECT_FALSE(v.has_values());
}
#endif

#ifndef TL_FUSE_KOKKOS
// Allocation counting: every operator new of this test binary goes through
// here; while armed, allocations of at least `big` bytes are counted.
namespace {
std::atomic<bool> armed{false};
std::atomic<std::size_t> big{0};
std::atomic<int> big_allocations{0};
void* counted(std::size_t bytes) {
  if (armed.load(std::memory_order_relaxed) && bytes >= big.load(std::memory_order_relaxed))
    big_allocations.fetch_add(1, std::memory_order_relaxed);
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
// Counts allocations of at least `bytes` while it lives.
struct allocation_counter {
  explicit allocation_counter(std::size_t bytes) {
    big = bytes;
    big_allocations = 0;
    armed = true;
  }
  allocation_counter(const allocation_counter&) = delete;
  allocation_counter& operator=(const allocation_counter&) = delete;
  ~allocation_counter() { armed = false; }
  [[nodiscard]] int count() const { return big_allocations.load(); }
};
}  // namespace

void* operator new(std::size_t bytes) { return counted(bytes); }
void* operator new[](std::size_t bytes) { return counted(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
// The aligned forms (fuse's chunk workspace).
void* counted_aligned(std::size_t bytes, std::align_val_t al) {
  if (armed.load(std::memory_order_relaxed) && bytes >= big.load(std::memory_order_relaxed))
    big_allocations.fetch_add(1, std::memory_order_relaxed);
  const auto a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (bytes + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new(std::size_t bytes, std::align_val_t al) { return counted_aligned(bytes, al); }
void* operator new[](std::size_t bytes, std::align_val_t al) { return counted_aligned(bytes, al); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

// Figure 12: c = a + b; e = c + d runs as one loop and never allocates c.
TEST(FuseTemporaries, Figure12OneLoopNoAllocationOfC) {
  const int n = 1 << 17;
  vec a({n}), b({n}), d({n}), e({n});
  for (int x = 0; x < n; ++x) {
    a.values()[x] = x % 7;
    b.values()[x] = x % 5 - 2;
    d.values()[x] = x % 3;
  }
  temporary<double> c({n});
  const auto s1 = defer(c(i)) = a(i) + b(i);
  const auto s2 = defer(e(i)) = c(i) + d(i);
  for (const executor& ex : {executor(serial), second_executor()}) {
    fuse_m(ex, s1, s2);  // the thread's chunk workspace grows once
    const auto k0 = kernels_run();
    int allocations = 0;
    {
      // Every block of 16 KB or more: c's values (1 MB), and a workspace
      // (32 KB a chunk) allocated again; fuse's own plan is smaller.
      const allocation_counter count(16384);
      fuse_m(ex, s1, s2);
      allocations = count.count();
    }
    EXPECT_EQ(kernels_run() - k0, 1u);
    EXPECT_EQ(allocations, 0);
    for (int x = 0; x < n; ++x) ASSERT_EQ(e.values()[x], x % 7 + x % 5 - 2 + x % 3) << x;
  }
  // The counter sees c when c is allocated: a read at other rows (here c
  // read backwards through a permutation) keeps it.
  coordinate_list<double, int> perm({n, n});
  for (int x = 0; x < n; ++x) perm.push_back({x, n - 1 - x}, 1.0);
  const auto P = pack<csr>(perm);
  int allocations = 0;
  {
    const allocation_counter count(sizeof(double) * n);
    fuse_m(s1, defer(e(i)) = P(i, j) * c(j));
    allocations = count.count();
  }
  EXPECT_EQ(allocations, 1);
  for (int x = 0; x < n; ++x) ASSERT_EQ(e.values()[x], (n - 1 - x) % 7 + (n - 1 - x) % 5 - 2) << x;
  // And the workspace when it grows: a matrix temporary whose chunk rows
  // take 1 MB (the most a temporary may take) grows it once, then not.
  tensor<double, dense_row_major> M({n, 32});
  for (auto& v : M.values()) v = 0.5;
  temporary<double, 2> W({n, 32});
  const auto w1 = defer(W(i, j)) = a(i) * M(i, j);
  const auto w2 = defer(e(i)) = W(i, j) * M(i, j);
  EXPECT_NE(plan_m(w1, w2).find("never allocated"), std::string::npos) << plan_m(w1, w2);
  for (int call = 0; call < 2; ++call) {
    const allocation_counter count(16384);
    fuse_m(w1, w2);
    // Substituted, W has no values anywhere, and no workspace either.
    EXPECT_EQ(count.count(), call == 0 && !substituting ? 1 : 0) << call;
  }
  for (int x = 0; x < n; ++x) ASSERT_EQ(e.values()[x], 8.0 * (x % 7)) << x;
}

// A fuse call plans in place: a CG iteration's three calls allocate
// nothing at all up to 65536 rows (no plan, access list or partial sums on
// the heap: up to 16 chunks' partial sums in place), so its fixed cost on
// small systems is the planning's arithmetic only; beyond, one array of
// partial sums per reduction. Before, each call made about ten small
// allocations.
TEST(FuseTemporaries, CgIterationAllocatesNothing) {
  for (const int n : {1, 14, 3000, 20000, 65536, 65537}) {  // 1, 1, 3, 16, 16 and 17 chunks
    coordinate_list<double, int> t({n, n});
    for (int x = 0; x < n; ++x) {
      t.push_back({x, x}, 4.0);
      if (x > 0) t.push_back({x, x - 1}, -1.0);
      if (x + 1 < n) t.push_back({x, x + 1}, -1.0);
    }
    const auto A = pack<csr>(t);
    vec p({n}), q({n}), x({n}), r({n});
    for (int k = 0; k < n; ++k) r.values()[k] = p.values()[k] = 1.0 + k % 5;
    scalar<double> pq, rr;
    const auto iteration = [&] {
      fuse(defer(q(i)) = A(i, j) * p(j), defer(pq()) = p(i) * q(i));
      const double alpha = 1.0 / (pq.value() + 1.0);
      fuse(defer(x(i)) += alpha * p(i), defer(r(i)) += -alpha * q(i), defer(rr()) = r(i) * r(i));
      fuse(defer(p(i)) = r(i) + 0.5 * p(i));
    };
    iteration();  // anything a first call sets up
    int allocations = 0;
    {
      const allocation_counter count(1);
      iteration();
      allocations = count.count();
    }
    EXPECT_EQ(allocations, n > 65536 ? 2 : 0) << n;  // beyond: pq's and rr's partial sums
    // The values are the statements' (checked against loops elsewhere): finite.
    EXPECT_TRUE(std::isfinite(rr.value())) << n;
  }
}

// Figure 8: z = 2x; w = y + z; v = w^2; norm over w's second half. The
// last reads w through another partition (rows n/2.. of w as rows of a
// half-length vector: a selection matrix here), so it starts a new kernel:
// only z is eliminated; w is allocated (once), v is the user's.
TEST(FuseTemporaries, Figure8OnlyZEliminated) {
  const int n = 1 << 16, h = n - n / 2;
  vec x({n}), y({n}), v({n}), wh({h});
  for (int k = 0; k < n; ++k) {
    x.values()[k] = k % 4;
    y.values()[k] = 1 - k % 3;
  }
  coordinate_list<double, int> sel({h, n});
  for (int r = 0; r < h; ++r) sel.push_back({r, n / 2 + r}, 1.0);
  const auto S = pack<csr>(sel);
  temporary<double> z({n}), w({n});
  scalar<double> norm2;
  const auto s1 = defer(z(i)) = 2.0 * x(i);
  const auto s2 = defer(w(i)) = y(i) + z(i);
  const auto s3 = defer(v(i)) = w(i) * w(i);
  const auto s4 = defer(wh(i)) = S(i, j) * w(j);
  const auto s5 = defer(norm2()) = wh(i) * wh(i);
  const std::string plan = plan_m(s1, s2, s3, s4, s5);
  EXPECT_NE(plan.find("kernel 1: loop over 65536 rows in chunks of 4096: [1] out(i) = c * t1(i); [2] out(i) = (t1(i) "
                      "+ t2(i)); [3] out(i) = t1(i) * t2(i)\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("temporary written first by statement 1: never allocated"), std::string::npos) << plan;
  EXPECT_NE(plan.find("temporary written first by statement 2: allocated for the call (524288 bytes): statement 4 "
                      "reads it in another kernel"),
            std::string::npos)
      << plan;
  fuse_m(s1, s2, s3, s4, s5);  // warm-up
  int allocations = 0;
  const auto k0 = kernels_run();
  {
    const allocation_counter count(sizeof(double) * n);
    fuse_m(s1, s2, s3, s4, s5);
    allocations = count.count();
  }
  EXPECT_EQ(allocations, 1);  // w's values; z has none
  EXPECT_EQ(kernels_run() - k0, 2u);
  double ref = 0;
  for (int k = 0; k < n; ++k) {
    const double wk = (1 - k % 3) + 2.0 * (k % 4);
    ASSERT_EQ(v.values()[k], wk * wk) << k;
    if (k >= n / 2) ref += wk * wk;
  }
  EXPECT_EQ(norm2.value(), ref);
}
#endif
