#pragma once
/// @file dist/schedule.hpp
/// Distributed matrix products driven by a DISTAL-style schedule (§3.3):
/// C(i,j) = A(i,k) B(k,j) over dense tiles in any distributions, where the
/// schedule says which variables are distributed over which machine
/// dimensions, how the rest of k is divided into sequential steps, whether
/// steps rotate, and how often each input is communicated. A schedule only
/// changes where data moves and how, never the result.
///
///     using namespace tensorlev::dist;
///     matmul(C, A, B, matmul_schedule().distribute("ij").divide(q).rotate("ij"));  // Cannon
///     matmul(C, A, B, matmul_schedule::summa());
///     matmul(C, A, B, matmul_schedule::johnson());   // on a 3D grid, C on a face ("xy->xy0")
///
/// Commands (the statement's variables are i, j, k):
/// - `distribute("ij")`: machine dimension m divides variable m of the
///   string into blocks; rank (.., c_m, ..) runs block c_m (owner computes
///   when i and j are distributed; distributing k makes every k block a
///   partial product, summed into C at the end: a distributed reduction).
/// - `divide(n)` / `split(chunk)`: the rank's k range runs as n sequential
///   steps (at most one per index), or steps of `chunk` indices.
/// - `rotate("ij")`: step t runs k block (t + sum of the rank's coordinates
///   of the named variables) mod steps (DISTAL's rotate: broadcasts become
///   systolic shifts).
/// - `communicate('A', 'k')`: fetch A's panel at each step (the default);
///   `communicate('A', 'i')` (any distributed variable): fetch all of the
///   rank's A once, before the steps.
/// - `reorder({"ko", "ii", "ji", "ki"})`: the order of the rank's local
///   loops (DISTAL's names; this is the default). Rows or columns placed
///   before "ko" run the steps one row / column at a time, with their own
///   (smaller, more) messages; the order of ii, ji, ki is the generated
///   leaf product's loop order.
/// - `blas(false)`: leaf products by the generated kernel even when a
///   BLAS is linked.
///
/// How data moves follows from the schedule: at each fetch every rank
/// computes, for every rank, the box it needs and the nearest rank that
/// holds it (its own tile, a replicated copy, or the panel it fetched at
/// the previous step), so every rank agrees on the messages. When one rank
/// sends the same box to all other ranks of a grid axis, the fetch is an
/// MPI broadcast on that axis (SUMMA); otherwise point-to-point messages,
/// counted as shifts when they form a permutation along one axis (Cannon)
/// and as all-to-all traffic otherwise. Partial products go to C's holders
/// by a reduction along the distributed-k axis when C sits on one face of
/// it (Johnson, 2.5D), in place when each rank computes its own C tile,
/// and by messages otherwise.

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "box.hpp"
#include "kernels.hpp"

namespace tensorlev::dist {

/// A schedule for C(i,j) = A(i,k) B(k,j) (see the file comment).
class matmul_schedule {
 public:
  /// Machine dimension m divides variable vars[m] ('i', 'j' or 'k').
  matmul_schedule& distribute(std::string_view vars) {
    dist_.assign(vars.begin(), vars.end());
    for (std::size_t a = 0; a < dist_.size(); ++a) {
      if (dist_[a] != 'i' && dist_[a] != 'j' && dist_[a] != 'k')
        throw shape_error(std::string("tensorlev::dist::matmul_schedule::distribute: '") + dist_[a] +
                          "' is not a variable of C(i,j) = A(i,k) B(k,j)");
      for (std::size_t b = 0; b < a; ++b)
        if (dist_[a] == dist_[b])
          throw shape_error(std::string("tensorlev::dist::matmul_schedule::distribute: '") + dist_[a] +
                            "' is distributed twice");
    }
    return *this;
  }
  /// The rank's k range runs as n sequential steps.
  matmul_schedule& divide(long long n) {
    cut_.divide(n, "tensorlev::dist::matmul_schedule");
    return *this;
  }
  /// The rank's k range runs in steps of `chunk` indices.
  matmul_schedule& split(long long chunk) {
    cut_.split(chunk, "tensorlev::dist::matmul_schedule");
    return *this;
  }
  /// Step t runs k block (t + the rank's coordinates of `vars`) mod steps.
  matmul_schedule& rotate(std::string_view vars) {
    rot_.assign(vars.begin(), vars.end());
    return *this;
  }
  /// When input 'A' or 'B' is fetched: at each k step ('k'), or once
  /// (a distributed variable).
  matmul_schedule& communicate(char tensor, char var) {
    if (var != 'i' && var != 'j' && var != 'k')
      throw shape_error(std::string("tensorlev::dist::matmul_schedule::communicate: '") + var +
                        "' is not a variable of C(i,j) = A(i,k) B(k,j)");
    if (tensor != 'A' && tensor != 'B')
      throw shape_error(std::string("tensorlev::dist::matmul_schedule::communicate: '") + tensor +
                        "' is not an input of C(i,j) = A(i,k) B(k,j)");
    once_[tensor == 'B' ? 1 : 0] = var != 'k';
    return *this;
  }

  /// The order of the rank's local loops, in DISTAL's names: "ko" (the k
  /// steps), "ii" and "ji" (the rank's rows and columns of C) and "ki"
  /// (the k indices of one step); the default is {"ko", "ii", "ji", "ki"}
  /// (DISTAL Fig. 12). The distributed loops always stay outermost.
  /// - Loops placed before "ko" tile the rank's C block: with "ii" first,
  ///   each row of the block runs all the steps and fetches its own
  ///   panels (more, smaller messages; B's panels are fetched once per
  ///   row); with "ii" and "ji" first, each component does.
  /// - The order of "ii", "ji" and "ki" is the loop order of the leaf
  ///   product when it is generated (no BLAS, or `blas(false)`).
  /// "ki" must come after "ko" (it iterates inside one step).
  matmul_schedule& reorder(std::initializer_list<std::string_view> loops) {
    static constexpr std::string_view names[4] = {"ko", "ii", "ji", "ki"};
    static constexpr char codes[4] = {'o', 'i', 'j', 'k'};
    const std::string fn = "tensorlev::dist::matmul_schedule::reorder: ";
    if (loops.size() != 4)
      throw shape_error(fn + "name the four local loops \"ko\", \"ii\", \"ji\", \"ki\" once each (" +
                        std::to_string(loops.size()) + " given)");
    std::array<char, 4> order{};
    std::size_t n = 0;
    for (std::string_view l : loops) {
      std::size_t v = 0;
      while (v < 4 && names[v] != l) ++v;
      if (v == 4) {
        const bool distributed = l == "io" || l == "jo";
        throw shape_error(fn + "\"" + std::string(l) + "\" is not a local loop" +
                          (distributed ? " (distributed loops always stay outermost)"
                                       : " (the loops are \"ko\", \"ii\", \"ji\", \"ki\")"));
      }
      if (std::find(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), codes[v]) !=
          order.begin() + static_cast<std::ptrdiff_t>(n))
        throw shape_error(fn + "\"" + std::string(l) + "\" is named twice");
      order[n++] = codes[v];
    }
    if (std::find(order.begin(), order.end(), 'k') < std::find(order.begin(), order.end(), 'o'))
      throw shape_error(fn + "\"ki\" must come after \"ko\" (it iterates inside one k step)");
    order_ = order;
    leaf_.clear();
    for (char c : order)
      if (c != 'o') leaf_ += c;
    return *this;
  }
  /// Leaf products of float and double go to the BLAS when one is linked
  /// (TENSORLEV_DIST_BLAS; the default), or to the generated kernel in the
  /// reorder's loop order (`blas(false)`).
  matmul_schedule& blas(bool use) {
    blas_ = use;
    return *this;
  }

  // DISTAL Fig. 12 as schedules (q: grid side; the grid is the tensors').
  /// SUMMA on a 2D grid: k steps at the owners' block boundaries.
  static matmul_schedule summa() { return matmul_schedule().distribute("ij"); }
  /// Cannon on a q x q grid: q rotated steps.
  static matmul_schedule cannon(long long q) { return matmul_schedule().distribute("ij").divide(q).rotate("ij"); }
  /// PUMMA on a 2D grid: steps rotated by the row coordinate only (A is
  /// broadcast along rows, B shifted along columns).
  static matmul_schedule pumma(long long steps) { return matmul_schedule().distribute("ij").divide(steps).rotate("i"); }
  /// Johnson's 3D algorithm on a g x g x g grid: every rank one k block.
  static matmul_schedule johnson() { return matmul_schedule().distribute("ijk"); }
  /// Solomonik's 2.5D algorithm on a q x q x c grid: k split over the c
  /// slices, Cannon (q rotated steps) within each slice, then a reduction.
  static matmul_schedule two_point_five_d(long long q) {
    return matmul_schedule().distribute("ijk").divide(q).rotate("ij");
  }
  /// COSMA-style: a 3D grid and n sequential steps of each rank's k block.
  static matmul_schedule cosma(long long steps) { return matmul_schedule().distribute("ijk").divide(steps); }

  [[nodiscard]] const std::vector<char>& distributed() const noexcept { return dist_; }
  [[nodiscard]] const std::vector<char>& rotated_by() const noexcept { return rot_; }
  [[nodiscard]] long long parts() const noexcept { return cut_.parts; }
  [[nodiscard]] long long chunk() const noexcept { return cut_.chunk; }
  [[nodiscard]] bool fetch_once(char tensor) const noexcept { return once_[tensor == 'B' ? 1 : 0]; }
  /// The local loops, outermost first: 'o' (ko), 'i' (ii), 'j' (ji), 'k' (ki).
  [[nodiscard]] const std::array<char, 4>& local_order() const noexcept { return order_; }
  /// The generated leaf's loop order ("" until reorder is called: the planner's).
  [[nodiscard]] std::string_view leaf_order() const noexcept { return leaf_; }
  [[nodiscard]] bool uses_blas() const noexcept { return blas_; }
  /// A hash of every command (matmul checks that every rank passed the same schedule).
  [[nodiscard]] unsigned long long hash() const noexcept {
    detail::value_hash h;
    for (char c : dist_) h.mix(c);
    h.mix(-1);
    h.mix(cut_.parts);
    h.mix(cut_.chunk);
    for (char c : rot_) h.mix(c);
    h.mix(-2);
    h.mix(once_[0]);
    h.mix(once_[1]);
    for (char c : order_) h.mix(c);
    h.mix(blas_);
    return h.h;
  }
  /// The machine dimension that divides v, or -1.
  [[nodiscard]] int machine_dim_of(char v) const noexcept {
    for (std::size_t m = 0; m < dist_.size(); ++m)
      if (dist_[m] == v) return static_cast<int>(m);
    return -1;
  }

 private:
  std::vector<char> dist_{'i', 'j'};
  detail::step_cut cut_;
  std::vector<char> rot_;
  bool once_[2] = {false, false};
  std::array<char, 4> order_{'o', 'i', 'j', 'k'};
  std::string leaf_;
  bool blas_ = true;
};

namespace detail {

// A 2-D box (rows [r0, r1), columns [c0, c1)).
inline boxn box_2d(long long r0, long long r1, long long c0, long long c1) {
  boxn b{2, {}, {}};
  b.lo[0] = r0, b.hi[0] = r1, b.lo[1] = c0, b.hi[1] = c1;
  return b;
}

// The axis along which a and b differ, if they differ in exactly one coordinate.
inline int single_axis(const machine_grid& g, int a, int b) {
  const auto pa = g.coords_of(a);
  const auto pb = g.coords_of(b);
  int axis = -1;
  for (std::size_t m = 0; m < pa.size(); ++m)
    if (pa[m] != pb[m]) {
      if (axis >= 0) return -1;
      axis = static_cast<int>(m);
    }
  return axis;
}

struct message {
  int src;
  int dst;
  boxn box;
  bool from_held;  // from the sender's previous panel (else its tile)
};

// One input's fetches: every rank's tile, and the panel each rank fetched
// last (all known on every rank).
template <class V>
class fetcher {
 public:
  template <class T>
  explicit fetcher(const T& t) : g_(t.grid()), tile_(static_cast<std::size_t>(g_.size())) {
    for (int r = 0; r < g_.size(); ++r) tile_[static_cast<std::size_t>(r)] = to_boxn(t.map().box_of(g_.coords_of(r)), 2);
    held_.assign(static_cast<std::size_t>(g_.size()), box_2d(0, 0, 0, 0));
    mine_ = t.local().values();  // the tile outlives the fetcher (both live in one matmul call)
    owner_.resize(static_cast<std::size_t>(g_.size()));
    for (int r = 0; r < g_.size(); ++r) owner_[static_cast<std::size_t>(r)] = t.map().is_owner(g_.coords_of(r));
  }

  // Every rank's needed box (index = rank); returns this rank's panel.
  const std::vector<V>& fetch(const std::vector<boxn>& need) {
    const int me = g_.rank();
    const int p = g_.size();
    std::vector<message> msgs;
    for (int r = 0; r < p; ++r) {
      const boxn& b = need[static_cast<std::size_t>(r)];
      if (b.empty()) continue;
      // The nearest rank whose tile or last panel holds all of b.
      int best = -1;
      bool best_held = false;
      long long best_d = 0;
      for (int s = 0; s < p; ++s) {
        const auto us = static_cast<std::size_t>(s);
        const bool in_tile = tile_[us].contains(b);
        const bool in_held = held_[us].contains(b);
        if (!in_tile && !in_held) continue;
        // Nearest first; at equal distance a panel fetched at the previous
        // step beats a tile (the systolic choice: Cannon's shifts).
        const long long d = grid_distance(g_, g_.coords_of(s), g_.coords_of(r));
        const bool held_only = in_held && (!in_tile || d > 0);
        if (best < 0 || d < best_d || (d == best_d && held_only && !best_held)) {
          best = s;
          best_d = d;
          best_held = held_only;
        }
      }
      if (best >= 0) {
        msgs.push_back({best, r, b, best_held});
        continue;
      }
      // Pieces from the owner copies of the tiles b overlaps.
      for (int s = 0; s < p; ++s) {
        const auto us = static_cast<std::size_t>(s);
        if (!owner_[us]) continue;
        const boxn piece = tile_[us].meet(b);
        if (!piece.empty()) msgs.push_back({s, r, piece, false});
      }
    }
    // Every rank has the same list: a message too large for MPI is refused everywhere.
    for (const message& m : msgs) (void)mpi_count(m.box.size(), "matmul: a panel");
    const boxn my_need = need[static_cast<std::size_t>(me)];
    std::vector<V> out(static_cast<std::size_t>(my_need.size()));
    // Local pieces.
    for (const message& m : msgs)
      if (m.src == me && m.dst == me) copy_from_self(m, out.data(), my_need);
    std::erase_if(msgs, [](const message& m) { return m.src == m.dst; });
    if (!msgs.empty()) {
      const int axis = broadcast_axis(msgs);
      if (axis >= 0) run_broadcasts(msgs, axis, out.data(), my_need);
      else run_point_to_point(msgs, out.data(), my_need);
    }
    held_ = need;
    last_.swap(out);
    return last_;
  }

 private:
  void copy_from_self(const message& m, V* out, const boxn& to) const {
    if (m.from_held) copy_box(last_.data(), held_[static_cast<std::size_t>(m.src)], out, to, m.box);
    else copy_box(mine_.data(), tile_[static_cast<std::size_t>(m.src)], out, to, m.box);
  }
  std::vector<V> pack_piece(const message& m) const {
    std::vector<V> buf(static_cast<std::size_t>(m.box.size()));
    copy_from_self(m, buf.data(), m.box);
    return buf;
  }

  // The axis d if the messages are broadcasts along d: each (sender, box)
  // reaches every other rank of the sender's d-axis, no sender receives,
  // and nothing else moves.
  int broadcast_axis(const std::vector<message>& msgs) const {
    const int d = single_axis(g_, msgs.front().src, msgs.front().dst);
    if (d < 0) return -1;
    const int others = g_.dims()[static_cast<std::size_t>(d)] - 1;
    std::vector<int> received(static_cast<std::size_t>(g_.size()), 0);
    for (const message& m : msgs) {
      if (single_axis(g_, m.src, m.dst) != d) return -1;
      if (++received[static_cast<std::size_t>(m.dst)] > 1) return -1;
      // A root only sends: with two ranks on the axis, a swap is a shift.
      for (const message& o : msgs)
        if (o.dst == m.src) return -1;
      int same = 0;
      for (const message& o : msgs) same += o.src == m.src && o.box == m.box && o.from_held == m.from_held ? 1 : 0;
      if (same != others) return -1;
    }
    return d;
  }

  void run_broadcasts(const std::vector<message>& msgs, int axis, V* out, const boxn& my_need) {
    const auto ua = static_cast<std::size_t>(axis);
    const int me = g_.rank();
    for (const message& m : msgs) {
      const bool i_send = m.src == me;
      const bool i_get = m.dst == me;
      // One broadcast per sender, reached from the sender's first message
      // or the receiver's only one.
      bool first_of_sender = true;
      for (const message& o : msgs) {
        if (&o == &m) break;
        if (o.src == m.src) first_of_sender = false;
      }
      if (!(i_get || (i_send && first_of_sender))) continue;
      std::vector<V> buf = i_send ? pack_piece(m) : std::vector<V>(static_cast<std::size_t>(m.box.size()));
      g_.broadcast(buf.data(), buf.size(), static_cast<int>(g_.coords_of(m.src)[ua]), g_.axis(ua));
      if (i_get) copy_box(buf.data(), m.box, out, my_need, m.box);
    }
  }

  void run_point_to_point(const std::vector<message>& msgs, V* out, const boxn& my_need) {
    const int me = g_.rank();
    // A permutation along one axis is a shift; anything else all-to-all traffic.
    std::vector<int> sends(static_cast<std::size_t>(g_.size()), 0), recvs(static_cast<std::size_t>(g_.size()), 0);
    const int axis0 = single_axis(g_, msgs.front().src, msgs.front().dst);
    bool shift = axis0 >= 0;
    for (const message& m : msgs) {
      shift = shift && single_axis(g_, m.src, m.dst) == axis0 && ++sends[static_cast<std::size_t>(m.src)] == 1 &&
              ++recvs[static_cast<std::size_t>(m.dst)] == 1;
    }
    const comm_kind kind = shift ? comm_kind::shift : comm_kind::alltoall;
    std::vector<std::vector<V>> inbox;
    std::vector<std::vector<V>> outbox;
    std::vector<MPI_Request> reqs;
    std::vector<const message*> incoming;
    inbox.reserve(msgs.size());
    outbox.reserve(msgs.size());
    for (std::size_t q = 0; q < msgs.size(); ++q) {
      const message& m = msgs[q];
      const int tag = static_cast<int>(q % 30000);
      if (m.dst == me) {
        inbox.emplace_back(static_cast<std::size_t>(m.box.size()));
        incoming.push_back(&m);
        reqs.emplace_back();
        check_mpi(MPI_Irecv(inbox.back().data(), mpi_count(m.box.size(), "matmul"), mpi_type<V>(), m.src, tag,
                            g_.comm(), &reqs.back()),
                  "MPI_Irecv");
        g_.stats().received(kind, m.box.size() * static_cast<long long>(sizeof(V)));
      }
      if (m.src == me) {
        outbox.push_back(pack_piece(m));
        reqs.emplace_back();
        check_mpi(MPI_Isend(outbox.back().data(), mpi_count(m.box.size(), "matmul"), mpi_type<V>(), m.dst, tag,
                            g_.comm(), &reqs.back()),
                  "MPI_Isend");
        g_.stats().sent(kind, m.box.size() * static_cast<long long>(sizeof(V)));
      }
    }
    check_mpi(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (std::size_t q = 0; q < incoming.size(); ++q) copy_box(inbox[q].data(), incoming[q]->box, out, my_need, incoming[q]->box);
  }

  const machine_grid& g_;
  std::vector<boxn> tile_;
  std::vector<boxn> held_;
  std::vector<bool> owner_;
  std::span<const V> mine_;
  std::vector<V> last_;
};

}  // namespace detail

/// C(i,j) = A(i,k) B(k,j) on dense tiles in any distributions, as the
/// schedule says. Collective; C's previous values are replaced.
template <class V, class DC, class DA, class DB, index_type I>
void matmul(dist_tensor<V, dense_row_major, DC, I>& C, const dist_tensor<V, dense_row_major, DA, I>& A,
            const dist_tensor<V, dense_row_major, DB, I>& B, const matmul_schedule& s, const executor& ex = serial) {
  const machine_grid& g = C.grid();
  std::string why = detail::same_grid("matmul", g, A, B);
  if (why.empty()) why = detail::product_shapes("matmul", C, A, B);
  if (why.empty() && s.distributed().size() != g.order())
    why = "tensorlev::dist::matmul: the schedule distributes " + std::to_string(s.distributed().size()) +
          " variables over a grid of " + std::to_string(g.order()) + " dimensions";
  for (char v : s.rotated_by())
    if (why.empty() && s.machine_dim_of(v) < 0)
      why = std::string("tensorlev::dist::matmul: rotate by '") + v + "', not distributed";
  if (why.empty() && !s.rotated_by().empty() && s.parts() == 0 && s.chunk() == 0)
    why = "tensorlev::dist::matmul: rotate needs divide or split";
  agree(g, why.empty(), why);
  detail::agree_on_value(g, s.hash(), "tensorlev::dist::matmul: the ranks passed different schedules");

  const long long M = C.dims()[0];
  const long long N = C.dims()[1];
  const long long K = A.dims()[1];
  const int p = g.size();
  // Each rank's range of a variable.
  const auto range = [&](char v, const std::vector<long long>& c) -> std::array<long long, 2> {
    const long long n = v == 'i' ? M : v == 'j' ? N : K;
    const int m = s.machine_dim_of(v);
    if (m < 0) return {0, n};
    return block_bounds(n, g.dims()[static_cast<std::size_t>(m)], c[static_cast<std::size_t>(m)]);
  };
  // The k steps of a rank: sub-ranges of its k range.
  std::vector<long long> cuts;  // for the default (inputs' block boundaries)
  if (s.parts() == 0 && s.chunk() == 0) {
    cuts = A.map().splits(1);
    cuts.insert(cuts.end(), B.map().splits(0).begin(), B.map().splits(0).end());
  }
  const auto compute_steps = [&](const std::vector<long long>& c) {
    const auto kr = range('k', c);
    std::vector<std::array<long long, 2>> st;
    if (s.parts() > 0) {
      // No more steps than indices (a huge n would only add empty steps).
      const long long parts = std::max(1LL, std::min(s.parts(), kr[1] - kr[0]));
      for (long long t = 0; t < parts; ++t) {
        const auto b = block_bounds(kr[1] - kr[0], parts, t);
        st.push_back({kr[0] + b[0], kr[0] + b[1]});
      }
    } else if (s.chunk() > 0) {
      for (long long k0 = kr[0]; k0 < kr[1];) {
        const long long k1 = k0 + std::min(s.chunk(), kr[1] - k0);  // no overflow for huge chunks
        st.push_back({k0, k1});
        k0 = k1;
      }
    } else {
      std::vector<long long> pts{kr[0], kr[1]};
      for (long long x : cuts)
        if (x > kr[0] && x < kr[1]) pts.push_back(x);
      std::sort(pts.begin(), pts.end());
      pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
      for (std::size_t q = 0; q + 1 < pts.size(); ++q) st.push_back({pts[q], pts[q + 1]});
      if (st.empty()) st.push_back({kr[0], kr[0]});
    }
    return st;
  };
  // Each rank's steps, computed once (ranks are found by coordinates).
  std::vector<std::vector<std::array<long long, 2>>> steps_by_rank(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) steps_by_rank[static_cast<std::size_t>(r)] = compute_steps(g.coords_of(r));
  const auto steps_of = [&](const std::vector<long long>& c) -> const std::vector<std::array<long long, 2>>& {
    return steps_by_rank[static_cast<std::size_t>(g.rank_of(c))];
  };
  // Step t of rank c runs block (t + rotation) mod steps.
  const auto block_at = [&](const std::vector<long long>& c, std::size_t t) {
    const auto& st = steps_of(c);
    long long shift = 0;
    for (char v : s.rotated_by()) shift += c[static_cast<std::size_t>(s.machine_dim_of(v))];
    return st[static_cast<std::size_t>((static_cast<long long>(t) + shift) % static_cast<long long>(st.size()))];
  };
  std::vector<std::vector<long long>> coords(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) coords[static_cast<std::size_t>(r)] = g.coords_of(r);
  std::size_t nsteps = 0;
  for (const auto& c : coords) nsteps = std::max(nsteps, steps_of(c).size());
  // The C tiles the steps run over (reorder): the rank's whole block, or
  // its rows / columns / components one at a time when "ii" / "ji" come
  // before "ko", in the order the loops are given.
  const auto& order = s.local_order();
  const auto pos = [&](char v) { return std::find(order.begin(), order.end(), v) - order.begin(); };
  const bool i_out = pos('i') < pos('o');
  const bool j_out = pos('j') < pos('o');
  const bool i_first = pos('i') < pos('j');
  const auto tile_count = [&](const std::vector<long long>& c) -> long long {
    const auto ri = range('i', c);
    const auto rj = range('j', c);
    if (ri[1] <= ri[0] || rj[1] <= rj[0]) return 0;  // no C block here: nothing to fetch
    return (i_out ? ri[1] - ri[0] : 1) * (j_out ? rj[1] - rj[0] : 1);
  };
  const auto tile_at = [&](const std::vector<long long>& c, long long u) -> detail::boxn {
    const auto ri = range('i', c);
    const auto rj = range('j', c);
    const long long ni = i_out ? ri[1] - ri[0] : 1;
    const long long nj = j_out ? rj[1] - rj[0] : 1;
    detail::boxn b = detail::box_2d(ri[0], ri[1], rj[0], rj[1]);
    if (i_out) {
      b.lo[0] = ri[0] + (i_first ? u / nj : u % ni);
      b.hi[0] = b.lo[0] + 1;
    }
    if (j_out) {
      b.lo[1] = rj[0] + (i_first ? u % nj : u / ni);
      b.hi[1] = b.lo[1] + 1;
    }
    return b;
  };
  long long ntiles = 0;
  std::vector<long long> tiles_by_rank(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    tiles_by_rank[static_cast<std::size_t>(r)] = tile_count(coords[static_cast<std::size_t>(r)]);
    ntiles = std::max(ntiles, tiles_by_rank[static_cast<std::size_t>(r)]);
  }
  const auto me = g.coord_vector();
  const auto ir = range('i', me);
  const auto jr = range('j', me);
  const I rows = static_cast<I>(ir[1] - ir[0]);
  const I cols = static_cast<I>(jr[1] - jr[0]);
  std::vector<V> partial(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols), V{});
  detail::fetcher<V> fa(A);
  detail::fetcher<V> fb(B);
  const bool a_once = s.fetch_once('A');
  const bool b_once = s.fetch_once('B');
  // The fetchers' panels (valid until their next fetch; no copies) and
  // their boxes on this rank.
  const std::vector<V>* a_panel = nullptr;
  const std::vector<V>* b_panel = nullptr;
  detail::boxn a_box = detail::box_2d(0, 0, 0, 0), b_box = a_box;
  // The part `want` of a panel over `box`: in place when it is whole rows.
  std::vector<V> a_scratch, b_scratch, c_scratch;
  const auto slice = [](const std::vector<V>& panel, const detail::boxn& box, const detail::boxn& want,
                        std::vector<V>& scratch) -> std::span<const V> {
    if (want.lo[1] == box.lo[1] && want.hi[1] == box.hi[1])
      return std::span<const V>(panel).subspan(static_cast<std::size_t>((want.lo[0] - box.lo[0]) * (box.hi[1] - box.lo[1])),
                                               static_cast<std::size_t>(want.size()));
    scratch.resize(static_cast<std::size_t>(want.size()));
    detail::copy_box(panel.data(), box, scratch.data(), want, want);
    return scratch;
  };
  const int me_rank = g.rank();
  for (long long u = 0; u < ntiles; ++u) {
    for (std::size_t t = 0; t < nsteps; ++t) {
      const bool first = u == 0 && t == 0;
      // Every rank's needed panels at this step of this tile.
      std::vector<detail::boxn> need_a(static_cast<std::size_t>(p), detail::box_2d(0, 0, 0, 0)), need_b = need_a;
      for (int r = 0; r < p; ++r) {
        const auto ur = static_cast<std::size_t>(r);
        const auto& c = coords[ur];
        if (t >= steps_of(c).size() || u >= tiles_by_rank[ur]) continue;
        const auto kb = block_at(c, t);
        const auto kr = range('k', c);
        const auto tb = tile_at(c, u);
        if (a_once) {
          const auto ri = range('i', c);
          need_a[ur] = detail::box_2d(ri[0], ri[1], kr[0], kr[1]);
        } else {
          need_a[ur] = detail::box_2d(tb.lo[0], tb.hi[0], kb[0], kb[1]);
        }
        if (b_once) {
          const auto rj = range('j', c);
          need_b[ur] = detail::box_2d(kr[0], kr[1], rj[0], rj[1]);
        } else {
          need_b[ur] = detail::box_2d(kb[0], kb[1], tb.lo[1], tb.hi[1]);
        }
      }
      const auto ume = static_cast<std::size_t>(me_rank);
      if (!a_once || first) {
        a_panel = &fa.fetch(need_a);
        a_box = need_a[ume];
      }
      if (!b_once || first) {
        b_panel = &fb.fetch(need_b);
        b_box = need_b[ume];
      }
      if (t >= steps_of(me).size() || u >= tiles_by_rank[ume]) continue;
      const auto kb = block_at(me, t);
      const I w = static_cast<I>(kb[1] - kb[0]);
      if (w == 0) continue;
      const auto tb = tile_at(me, u);
      const auto a_use = slice(*a_panel, a_box, detail::box_2d(tb.lo[0], tb.hi[0], kb[0], kb[1]), a_scratch);
      const auto b_use = slice(*b_panel, b_box, detail::box_2d(kb[0], kb[1], tb.lo[1], tb.hi[1]), b_scratch);
      const I tr = static_cast<I>(tb.hi[0] - tb.lo[0]);
      const I tc = static_cast<I>(tb.hi[1] - tb.lo[1]);
      if (tc == cols) {  // whole rows of the partial product: in place
        const auto out = std::span<V>(partial).subspan(static_cast<std::size_t>(tb.lo[0] - ir[0]) *
                                                           static_cast<std::size_t>(cols),
                                                       static_cast<std::size_t>(tr) * static_cast<std::size_t>(cols));
        detail::gemm_add<V, I>(tr, w, tc, a_use, b_use, out, ex, s.leaf_order(), s.uses_blas());
      } else {
        c_scratch.assign(static_cast<std::size_t>(tr) * static_cast<std::size_t>(tc), V{});
        detail::gemm_add<V, I>(tr, w, tc, a_use, b_use, std::span<V>(c_scratch), ex, s.leaf_order(), s.uses_blas());
        for (I r = 0; r < tr; ++r)
          for (I q = 0; q < tc; ++q)
            partial[static_cast<std::size_t>(tb.lo[0] - ir[0] + r) * static_cast<std::size_t>(cols) +
                    static_cast<std::size_t>(tb.lo[1] - jr[0] + q)] +=
                c_scratch[static_cast<std::size_t>(r) * static_cast<std::size_t>(tc) + static_cast<std::size_t>(q)];
      }
    }
  }

  // Partial products to C's holders.
  const detail::boxn my_part = detail::box_2d(ir[0], ir[1], jr[0], jr[1]);
  std::vector<detail::boxn> part(static_cast<std::size_t>(p), detail::box_2d(0, 0, 0, 0)), cbox = part;
  for (int r = 0; r < p; ++r) {
    const auto& c = coords[static_cast<std::size_t>(r)];
    const auto ri = range('i', c);
    const auto rj = range('j', c);
    part[static_cast<std::size_t>(r)] = detail::box_2d(ri[0], ri[1], rj[0], rj[1]);
    cbox[static_cast<std::size_t>(r)] = detail::to_boxn(C.map().box_of(c), 2);
  }
  auto cv = C.local().values();
  const int mk = s.machine_dim_of('k');
  const bool owner_computes = mk < 0 && part == cbox;
  if (owner_computes) {
    std::copy(partial.begin(), partial.end(), cv.begin());
    return;
  }
  // Reduction along the k axis onto a face that holds C tile for tile.
  if (mk >= 0) {
    const machine_dim& md = DC::statement().machine[static_cast<std::size_t>(mk)];
    bool face = DC::levels == 1 && md.kind == machine_dim_kind::fixed;
    for (int r = 0; r < p && face; ++r) {
      const auto& c = coords[static_cast<std::size_t>(r)];
      const bool on_face = c[static_cast<std::size_t>(mk)] == md.fixed;
      face = on_face ? cbox[static_cast<std::size_t>(r)] == part[static_cast<std::size_t>(r)]
                     : cbox[static_cast<std::size_t>(r)].empty();
    }
    if (face) {
      g.reduce_sum(partial.data(), partial.size(), static_cast<int>(md.fixed), g.axis(static_cast<std::size_t>(mk)));
      if (C.holds()) std::copy(partial.begin(), partial.end(), cv.begin());
      return;
    }
  }
  // General: every partial to every holder of the C entries it covers, summed.
  for (int r = 0; r < p; ++r)  // every rank checks every message, so all refuse together
    for (int h = 0; h < p; ++h)
      (void)mpi_count(part[static_cast<std::size_t>(r)].meet(cbox[static_cast<std::size_t>(h)]).size(),
                      "matmul: a partial product");
  std::fill(cv.begin(), cv.end(), V{});
  const detail::boxn my_c = cbox[static_cast<std::size_t>(g.rank())];
  std::vector<std::vector<V>> inbox;
  std::vector<std::vector<V>> outbox;
  std::vector<detail::boxn> inbox_box;
  std::vector<int> inbox_src;
  std::vector<MPI_Request> reqs;
  inbox.reserve(static_cast<std::size_t>(p));
  outbox.reserve(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    // From rank r to me.
    const detail::boxn in = part[ur].meet(my_c);
    if (!in.empty() && r != g.rank()) {
      inbox.emplace_back(static_cast<std::size_t>(in.size()));
      inbox_box.push_back(in);
      inbox_src.push_back(r);
      reqs.emplace_back();
      check_mpi(MPI_Irecv(inbox.back().data(), mpi_count(in.size(), "matmul"), mpi_type<V>(), r, 977, g.comm(),
                          &reqs.back()),
                "MPI_Irecv");
      g.stats().received(comm_kind::alltoall, in.size() * static_cast<long long>(sizeof(V)));
    }
    // From me to rank r.
    const detail::boxn out = my_part.meet(cbox[ur]);
    if (!out.empty() && r != g.rank()) {
      outbox.emplace_back(static_cast<std::size_t>(out.size()));
      detail::copy_box(partial.data(), my_part, outbox.back().data(), out, out);
      reqs.emplace_back();
      check_mpi(MPI_Isend(outbox.back().data(), mpi_count(out.size(), "matmul"), mpi_type<V>(), r, 977, g.comm(),
                          &reqs.back()),
                "MPI_Isend");
      g.stats().sent(comm_kind::alltoall, out.size() * static_cast<long long>(sizeof(V)));
    }
  }
  check_mpi(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  const auto add_box = [&](const V* src, const detail::boxn& from, const detail::boxn& b) {
    for (long long r = b.lo[0]; r < b.hi[0]; ++r)
      for (long long c = b.lo[1]; c < b.hi[1]; ++c)
        cv[static_cast<std::size_t>((r - my_c.lo[0]) * (my_c.hi[1] - my_c.lo[1]) + (c - my_c.lo[1]))] +=
            src[(r - from.lo[0]) * (from.hi[1] - from.lo[1]) + (c - from.lo[1])];
  };
  // In the order of the sending ranks (own partial included) on every
  // holder, so the copies of a replicated C agree bit for bit.
  bool own_added = false;
  for (std::size_t q = 0; q < inbox.size(); ++q) {
    if (!own_added && inbox_src[q] > g.rank()) {
      add_box(partial.data(), my_part, my_part.meet(my_c));
      own_added = true;
    }
    add_box(inbox[q].data(), inbox_box[q], inbox_box[q]);
  }
  if (!own_added) add_box(partial.data(), my_part, my_part.meet(my_c));
}

}  // namespace tensorlev::dist
