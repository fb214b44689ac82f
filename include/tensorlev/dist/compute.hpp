#pragma once
/// @file dist/compute.hpp
/// Any dense tensor-algebra statement over a machine grid, as a DISTAL
/// schedule (§3.3) says:
///
///     using namespace tensorlev::dist;
///     // TTV, A(i,j) = B(i,j,k) c(k): (i, j) over a 2D grid (DISTAL §7.2).
///     compute<"ij", "ijk", "k">(A, statement_schedule().distribute("ij"), B, c);
///     // MTTKRP on a 3D grid: every (i, j, k) block on one rank.
///     compute<"il", "ijk", "jl", "kl">(A, statement_schedule().distribute("ijk"), B, C, D);
///     // SUMMA, and Cannon (rotated steps), as statements.
///     compute<"ij", "ik", "kj">(C, statement_schedule().distribute("ij").divide('k', q), A, B);
///     compute<"ij", "ik", "kj">(C, statement_schedule().distribute("ij").divide('k', q).rotate("ij"), A, B);
///     // Inner product: the sum on every rank.
///     double s = reduce<"ijk", "ijk">(statement_schedule().distribute("ij"), B, C);
///
/// The strings name each tensor's index variables (output first); variables
/// missing from the output are summed. The schedule:
/// - `distribute(vars)`: machine dimension m divides variable vars[m] into
///   blocks (at the split points of the first tensor, the output first,
///   whose distribution partitions that variable over m, so the blocks
///   are the pieces it holds; even blocks where none does), so each rank
///   runs one block of the iteration space:
///   distributed output variables give owner-computes, a distributed
///   summed variable a distributed reduction.
/// - `divide(v, n)` / `split(v, chunk)`: the rank's range of v runs as n
///   sequential steps (at most one per index), or steps of `chunk` indices. Inputs that read v are
///   fetched one step's slice at a time (communicate under the step loop);
///   the others once.
/// - `rotate(vars)`: step t runs the rank's step (t + its coordinates on
///   the machine dimensions of the distributed vars) mod steps.
/// - `communicate(input, v)`: input number `input` (from 0) is fetched at
///   each step (v the divided variable) or once (v a distributed one).
/// - `divide_at_splits(v)`: steps between the inputs' split points along
///   v (SUMMA's k steps); `divide(n)` / `split(chunk)` without a variable
///   divide the statement's one summed variable.
/// - `reorder({"ko", "ii", "ji", "ki"})`: output variables whose loops come
///   before the step loop tile the rank's block (each tile runs all steps
///   and fetches its own boxes); the order of the "vi" loops is a
///   generated matrix-product leaf's loop order. `blas(false)`: generated
///   leaves even with a BLAS linked.
/// Presets for C(i,j) = A(i,k) B(k,j): `summa()`, `cannon(q)`,
/// `pumma(steps)`, `johnson()`, `two_point_five_d(q)`, `cosma(steps)`
/// (matmul, summa and cannon in schedule.hpp run them).
///
/// This is the one dense engine. Each fetch (`detail::fetcher`) takes, for
/// every rank, the box of the input its block (or step, or tile) reads,
/// from the nearest rank whose tile or previously fetched box holds all of
/// it (at equal distance the previous box wins: systolic shifts), or in
/// pieces from the owners. When one rank sends the same box to every other
/// rank of a grid axis the fetch is an MPI broadcast on that axis (SUMMA);
/// a permutation along one axis is counted as shifts (Cannon); anything
/// else as all-to-all traffic. Each rank runs its leaf on those boxes;
/// partial outputs go to every rank holding the output entries they cover,
/// where they are summed (`reduce`), or by MPI_Reduce along the machine
/// dimension of the one distributed summed variable when the output sits
/// on a face of it (Johnson, 2.5D). So the same statement runs in any
/// distributions of its tensors: when they match the schedule nothing
/// moves (TTV, TTM and innerprod in §7.2), and when they do not the
/// schedule moves what each block reads. A statement that is a matrix
/// product of its boxes (C = A B, TTM, TTV, matrix-vector: out = P Q,
/// first input P R, second R Q) runs its leaf as one gemm (BLAS when
/// linked, DISTAL §7.2.1); others run the generated kernel of the
/// statement.
///
/// The output may be in any format. A dense row-major output
/// (`dense_vector`, `dense_row_major`, `dense_tensor<N>`) receives
/// partial boxes as above. Any other output (CSR, DCSR, COO, CSF, ...:
/// SpGEMM, a sparse result of a split reduction) is computed per step in
/// its own format, and each rank's entries go to the ranks holding the
/// output entries they cover as coordinate lists, summed there by a pack
/// in the order of the sending ranks (so replicas agree bit for bit;
/// every coordinate a product reaches is stored, as single-node; entries
/// of one coordinate from several steps are summed on their rank first).
/// Where every rank's block is its own output piece, in one step and one
/// tile, and the output is not also an input, the kernel writes the piece
/// directly and nothing moves. An exception of one rank's kernel (an index
/// overflow) is thrown on every rank once the statement's fetches are
/// done, with one type everywhere (overflow_error where it was one, else
/// tensorlev::error), naming the rank.
///
/// Inputs may be in any format. A sparse input (or a dense one not
/// row-major) is used in place where each rank's block is exactly its own
/// piece (SpMV and SpMM with the reduction split, TTM, MTTKRP with a
/// distributed reduction: nothing moves); otherwise each rank receives
/// the entries of the box its block (or step, or tile) reads, from itself
/// where its piece holds the box, else from the owners, as coordinate
/// lists packed in the input's format: a sparse input divided into steps
/// (sparse SUMMA: C(i,j) = A(i,k) B(k,j) with k divided, A and B in CSR
/// tiles), SpGEMM with rows distributed and B in row blocks (each rank
/// reads all of B: the box is dense in k, not the rows A's pattern names),
/// SpMV with A's rows on a line and j distributed. Counted as all-to-all
/// traffic; `communicate` does not apply to sparse inputs (their boxes
/// move at each step or tile that reads them). Point-to-point messages
/// go in pieces of at most 2^30 values (`detail::mpi_chunk`). The
/// fixed-schedule sparse kernels (row-blocked SpMV with a ghost exchange
/// and the like) are in kernels.hpp and algorithms.hpp.

#include <algorithm>
#include <array>
#include <concepts>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "box.hpp"
#include "fetch_plan.hpp"
#include "kernels.hpp"

namespace tensorlev::dist {

namespace detail {
// (A loop, not string_view::find: GCC 12 with -fsanitize=address rejects
// find in constant expressions, as in notation.hpp.)
constexpr bool has_char(std::string_view s, char c) {
  for (char x : s)
    if (x == c) return true;
  return false;
}
}  // namespace detail

/// A schedule for compute, reduce and matmul (see the file comment): the
/// one schedule type of the dist engine. SUMMA, Cannon, PUMMA, Johnson,
/// 2.5D and COSMA-style are presets of it for C(i,j) = A(i,k) B(k,j).
class statement_schedule {
 public:
  /// Machine dimension m divides variable vars[m] into blocks.
  statement_schedule& distribute(std::string_view vars) {
    for (std::size_t a = 0; a < vars.size(); ++a) {
      const char c = vars[a];
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        throw shape_error(std::string("tensorlev::dist::statement_schedule::distribute: '") + c +
                          "' is not a variable name (a letter)");
      for (std::size_t b = 0; b < a; ++b)
        if (vars[a] == vars[b])
          throw shape_error(std::string("tensorlev::dist::statement_schedule::distribute: '") + vars[a] +
                            "' is distributed twice");
    }
    dist_.assign(vars.begin(), vars.end());
    return *this;
  }
  /// The rank's range of `var` runs as n sequential steps; the inputs that
  /// read `var` are fetched one step's slice at a time (DISTAL's divide
  /// with communicate under the outer loop).
  statement_schedule& divide(char var, long long n) {
    cut_.divide(n, "tensorlev::dist::statement_schedule");
    step_var_ = var;
    return *this;
  }
  /// divide of the statement's one summed variable (k of a matrix product).
  statement_schedule& divide(long long n) { return divide(summed_var, n); }
  /// The rank's range of `var` runs in steps of `chunk` indices.
  statement_schedule& split(char var, long long chunk) {
    cut_.split(chunk, "tensorlev::dist::statement_schedule");
    step_var_ = var;
    return *this;
  }
  /// split of the statement's one summed variable.
  statement_schedule& split(long long chunk) { return split(summed_var, chunk); }
  /// The rank's range of `var` runs as steps between the split points of
  /// the inputs' dimensions that `var` indexes (SUMMA's k steps at the
  /// owners' block boundaries). matmul does this with k when the schedule
  /// divides nothing.
  /// With `max_width` > 0, a step between two split points wider than it
  /// is cut into near-equal steps of at most `max_width` indices (SUMMA's
  /// panel width: each step still reads one owner's block, and smaller
  /// steps let the ranks' broadcasts and products interleave).
  statement_schedule& divide_at_splits(char var, long long max_width = 0) {
    if (max_width < 0)
      throw shape_error("tensorlev::dist::statement_schedule::divide_at_splits: width " + std::to_string(max_width));
    cut_ = {};
    step_var_ = var;
    panel_ = max_width;
    return *this;
  }
  /// Step t runs the rank's step (t + its coordinates on the machine
  /// dimensions of the distributed `vars`) mod steps (DISTAL's rotate).
  statement_schedule& rotate(std::string_view vars) {
    rot_.assign(vars.begin(), vars.end());
    return *this;
  }
  /// A char as the input (matmul's old letters 'A' / 'B') is refused at
  /// compile time.
  template <class C>
    requires std::same_as<C, char>
  statement_schedule& communicate(C, char) {
    static_assert(!std::same_as<C, char>,
                  "tensorlev::dist::statement_schedule::communicate: number the input from 0 (communicate(0, 'k') "
                  "for A of C(i,j) = A(i,k) B(k,j)), not by letter");
    return *this;
  }
  /// Input `input` (counted from 0) is fetched at each step when `var` is
  /// the divided variable (the default for inputs that read it), or once
  /// for all steps when `var` is a distributed variable.
  statement_schedule& communicate(std::size_t input, char var) {
    if (input >= max_inputs)
      throw shape_error("tensorlev::dist::statement_schedule::communicate: input " + std::to_string(input) +
                        " (a statement has at most " + std::to_string(max_inputs) + " inputs)");
    if (once_.size() <= input) once_.resize(input + 1, 0);
    once_[input] = var;
    return *this;
  }
  /// The order of the rank's local loops in DISTAL's names: "ko" is the
  /// step loop of divided variable k, "vi" the rank's loop over variable
  /// v (matmul's default is {"ko", "ii", "ji", "ki"}, DISTAL Fig. 12). The
  /// distributed loops always stay outermost.
  /// - Output variables placed before the step loop tile the rank's
  ///   output block: with "ii" first each row of the block runs all the
  ///   steps and fetches its own panels (more, smaller messages); with
  ///   "ii" and "ji" first each component does.
  /// - The order of the "vi" loops is the leaf's loop order when the leaf
  ///   is a generated matrix product (no BLAS, or `blas(false)`).
  /// The statement checks at run time that every variable is named (a
  /// statement's variables are not known here).
  statement_schedule& reorder(std::initializer_list<std::string_view> loops) {
    const std::string fn = "tensorlev::dist::statement_schedule::reorder: ";
    std::string order;
    char outer = 0;
    std::size_t outer_at = 0;
    for (std::string_view l : loops) {
      const bool name_ok = l.size() == 2 && (l[1] == 'o' || l[1] == 'i') &&
                           ((l[0] >= 'a' && l[0] <= 'z') || (l[0] >= 'A' && l[0] <= 'Z'));
      if (!name_ok)
        throw shape_error(fn + "\"" + std::string(l) +
                          "\" is not a local loop (name them \"ko\" for the steps of k and \"vi\" for variable v)");
      if (l[1] == 'o') {
        if (outer != 0)
          throw shape_error(fn + "\"" + std::string(l) + "\" is not a local loop (only the divided variable has a "
                                 "step loop; distributed loops always stay outermost)");
        outer = l[0];
        outer_at = order.size();
        continue;
      }
      if (detail::has_char(order, l[0])) throw shape_error(fn + "\"" + std::string(l) + "\" is named twice");
      order += l[0];
    }
    if (outer != 0 && order.find(outer) != std::string::npos && order.find(outer) < outer_at)
      throw shape_error(fn + "\"" + std::string(1, outer) + "i\" must come after \"" + std::string(1, outer) +
                        "o\" (it iterates inside one step)");
    leaf_ = order;
    outer_ = outer;
    tiles_ = order.substr(0, outer != 0 ? outer_at : 0);
    reordered_ = true;
    return *this;
  }
  /// Leaf products of float and double (and their complex) go to the BLAS
  /// when one is linked (TENSORLEV_DIST_BLAS; the default), or to the
  /// generated kernel in the reorder's loop order (`blas(false)`).
  statement_schedule& blas(bool use) {
    blas_ = use;
    return *this;
  }

  // DISTAL Fig. 12 as presets for C(i,j) = A(i,k) B(k,j) (variables i, j,
  // k; q: grid side; the grid is the tensors').
  /// SUMMA's default panel width (Elemental's default block size).
  static constexpr long long summa_panel = 128;
  /// SUMMA on a 2D grid: k steps at the owners' block boundaries, at most
  /// `panel` wide (0: whole blocks).
  static statement_schedule summa(long long panel = summa_panel) {
    return statement_schedule().distribute("ij").divide_at_splits('k', panel);
  }
  /// Cannon on a q x q grid: q rotated steps (even cuts of k; `cannon()`
  /// in schedule.hpp steps at the tensors' k splits instead).
  static statement_schedule cannon(long long q) { return statement_schedule().distribute("ij").divide('k', q).rotate("ij"); }
  /// PUMMA on a 2D grid: steps rotated by the row coordinate only (A is
  /// broadcast along rows, B shifted along columns).
  static statement_schedule pumma(long long steps) {
    return statement_schedule().distribute("ij").divide('k', steps).rotate("i");
  }
  /// Johnson's 3D algorithm on a g x g x g grid: every rank one k block.
  static statement_schedule johnson() { return statement_schedule().distribute("ijk"); }
  /// Solomonik's 2.5D algorithm on a q x q x c grid: k split over the c
  /// slices, Cannon (q rotated steps) within each slice, then a reduction.
  static statement_schedule two_point_five_d(long long q) {
    return statement_schedule().distribute("ijk").divide('k', q).rotate("ij");
  }
  /// COSMA-style: a 3D grid and n sequential steps of each rank's k block.
  static statement_schedule cosma(long long steps) { return statement_schedule().distribute("ijk").divide('k', steps); }

  [[nodiscard]] const std::string& distributed() const noexcept { return dist_; }
  /// The divided variable (0: none; `summed_var`: the statement's summed one).
  [[nodiscard]] char step_variable() const noexcept { return step_var_; }
  [[nodiscard]] long long parts() const noexcept { return cut_.parts; }
  [[nodiscard]] long long chunk() const noexcept { return cut_.chunk; }
  /// divide_at_splits' widest step (0: no limit).
  [[nodiscard]] long long panel_width() const noexcept { return panel_; }
  [[nodiscard]] const std::string& rotated_by() const noexcept { return rot_; }
  /// The variable input `input` is communicated under (0: the default).
  [[nodiscard]] char communicated_at(std::size_t input) const noexcept {
    return input < once_.size() ? once_[input] : 0;
  }
  [[nodiscard]] std::size_t communicate_entries() const noexcept { return once_.size(); }
  /// The variables of the "vi" loops in reorder's order ("" until reorder).
  [[nodiscard]] std::string_view leaf_order() const noexcept { return leaf_; }
  /// The variables whose loops come before the step loop (output tiles).
  [[nodiscard]] std::string_view tile_variables() const noexcept { return tiles_; }
  /// The variable of reorder's step loop ("ko": 'k'; 0 when none named).
  [[nodiscard]] char reorder_step_variable() const noexcept { return outer_; }
  [[nodiscard]] bool reordered() const noexcept { return reordered_; }
  [[nodiscard]] bool uses_blas() const noexcept { return blas_; }
  /// The most inputs communicate can name.
  static constexpr std::size_t max_inputs = 64;
  /// step_variable() of divide(n) / split(chunk) without a variable.
  static constexpr char summed_var = '#';
  /// A hash of every command (the engine checks that every rank passed the same schedule).
  [[nodiscard]] unsigned long long hash() const noexcept {
    detail::value_hash h;
    for (char c : dist_) h.mix(c);
    h.mix(-1);
    h.mix(step_var_);
    h.mix(cut_.parts);
    h.mix(cut_.chunk);
    for (char c : rot_) h.mix(c);
    h.mix(-2);
    for (char c : once_) h.mix(c);
    h.mix(-3);
    for (char c : leaf_) h.mix(c);
    h.mix(outer_);
    h.mix(static_cast<long long>(tiles_.size()));
    h.mix(reordered_);
    h.mix(blas_);
    h.mix(panel_);
    return h.h;
  }

 private:
  std::string dist_;
  char step_var_ = 0;
  detail::step_cut cut_;
  std::string rot_;
  std::string once_;
  std::string leaf_;
  std::string tiles_;
  char outer_ = 0;
  bool reordered_ = false;
  bool blas_ = true;
  long long panel_ = 0;
};

namespace detail {

template <class F>
inline constexpr bool row_major_dense_v =
    std::is_base_of_v<format<typename tensorlev::detail::chain_levels<F::order, dense<>, dense<>, dense<>>::type>, F>;


// Runs point-to-point messages of boxes: the sender copies `box` out of
// its array `src` over `src_box`. Then, for every message to this rank in
// list order (its messages to itself included), calls
// take(data, data_box, box): `box` lies in the array `data` over
// `data_box`. Counted as `kind`.
template <class V, class Take>
void exchange_boxes(const machine_grid& g, const std::vector<box_message>& msgs, std::span<const V> src,
                    const boxn& src_box, comm_kind kind, int tag, Take&& take) {
  const int me = g.rank();
  std::vector<std::vector<V>> inbox(msgs.size()), outbox;
  std::vector<MPI_Request> reqs;
  outbox.reserve(msgs.size());
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.src == m.dst) continue;
    const long long bytes = m.box.size() * static_cast<long long>(sizeof(V));
    if (m.dst == me) {
      inbox[q].resize(static_cast<std::size_t>(m.box.size()));
      irecv_chunked(inbox[q].data(), m.box.size(), m.src, tag, g.comm(), reqs);
      g.stats().received(kind, bytes);
    }
    if (m.src == me) {
      outbox.emplace_back(static_cast<std::size_t>(m.box.size()));
      auto& buf = outbox.back();
      copy_box(src.data(), src_box, buf.data(), m.box, m.box);
      isend_chunked(buf.data(), m.box.size(), m.dst, tag, g.comm(), reqs);
      g.stats().sent(kind, bytes);
    }
  }
  wait_all(reqs);
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.dst != me) continue;
    if (m.src == me) take(src.data(), src_box, m.box);
    else take(static_cast<const V*>(inbox[q].data()), m.box, m.box);
  }
}

// Every rank's box of tensor t, and whether it owns it (replicas do not).
template <class T>
std::pair<std::vector<boxn>, std::vector<bool>> tiles_of(const T& t, const std::vector<std::vector<long long>>& coords) {
  std::vector<boxn> tiles;
  std::vector<bool> owner;
  for (const auto& c : coords) {
    tiles.push_back(to_boxn(t.map().box_of(c), t.dims().size()));
    owner.push_back(t.map().is_owner(c));
  }
  return {std::move(tiles), std::move(owner)};
}

using message = fetch_message;

// One input's fetches: every rank's tile, and the box each rank fetched
// last (all known on every rank). fetch takes, for every rank, the box it
// needs from the nearest rank whose tile or last fetched box holds all of
// it, or in pieces from the owners (plan_fetch, fetch_plan.hpp: indexed,
// not a scan of all ranks per rank); broadcasts along an axis run as
// such, a permutation along one axis as shifts, anything else as
// all-to-all traffic.
template <class V>
class fetcher {
 public:
  // t's tiles, moved over g (t's grid or an equal one: the traffic is
  // counted in g's stats()).
  template <class T>
  fetcher(const machine_grid& g, const T& t) : g_(g), coords_(g.dims()), tile_(static_cast<std::size_t>(g_.size())) {
    const std::size_t n = t.dims().size();
    for (int r = 0; r < g_.size(); ++r) tile_[static_cast<std::size_t>(r)] = to_boxn(t.map().box_of(g_.coords_of(r)), n);
    owner_.resize(static_cast<std::size_t>(g_.size()));
    for (int r = 0; r < g_.size(); ++r) owner_[static_cast<std::size_t>(r)] = t.map().is_owner(g_.coords_of(r));
    start(t.local().values());  // the tile outlives the fetcher (both live in one engine call)
  }
  // Every rank's tile (row-major values; this rank's in `mine`, which
  // outlives the fetcher) and whether it owns it, on grid g.
  fetcher(const machine_grid& g, std::vector<boxn> tile, std::vector<bool> owner, std::span<const V> mine)
      : g_(g), coords_(g.dims()), tile_(std::move(tile)), owner_(std::move(owner)) {
    start(mine);
  }

  // Every rank's needed box (index = rank); returns this rank's panel.
  const std::vector<V>& fetch(const std::vector<boxn>& need) {
    const int me = g_.rank();
    std::vector<message> msgs = plan_fetch(coords_, tiles_, owner_, held_index_, need);
    const boxn my_need = need[static_cast<std::size_t>(me)];
    std::vector<V> out(static_cast<std::size_t>(my_need.size()));
    // Local pieces.
    for (const message& m : msgs)
      if (m.src == me && m.dst == me) copy_from_self(m, out.data(), my_need);
    std::erase_if(msgs, [](const message& m) { return m.src == m.dst; });
    if (!msgs.empty()) {
      const int axis = broadcast_axis(coords_, msgs);
      if (axis >= 0) run_broadcasts(msgs, axis, out.data(), my_need);
      else run_point_to_point(msgs, out.data(), my_need);
    }
    held_ = need;
    held_index_ = box_index(held_);
    last_.swap(out);
    return last_;
  }

 private:
  void start(std::span<const V> mine) {
    tiles_ = box_index(tile_);
    held_.assign(static_cast<std::size_t>(g_.size()), boxn{tile_.empty() ? 0 : tile_.front().n, {}, {}});
    held_index_ = box_index(held_);
    mine_ = mine;
  }
  void copy_from_self(const message& m, V* out, const boxn& to) const {
    if (m.from_held) copy_box(last_.data(), held_[static_cast<std::size_t>(m.src)], out, to, m.box);
    else copy_box(mine_.data(), tile_[static_cast<std::size_t>(m.src)], out, to, m.box);
  }
  std::vector<V> pack_piece(const message& m) const {
    std::vector<V> buf(static_cast<std::size_t>(m.box.size()));
    copy_from_self(m, buf.data(), m.box);
    return buf;
  }

  void run_broadcasts(const std::vector<message>& msgs, int axis, V* out, const boxn& my_need) {
    const auto ua = static_cast<std::size_t>(axis);
    const int me = g_.rank();
    // One broadcast per sender, reached from the sender's first message
    // or the receiver's only one.
    std::vector<char> sent(static_cast<std::size_t>(g_.size()), 0);
    for (const message& m : msgs) {
      const bool i_send = m.src == me;
      const bool i_get = m.dst == me;
      const bool first_of_sender = sent[static_cast<std::size_t>(m.src)] == 0;
      sent[static_cast<std::size_t>(m.src)] = 1;
      if (!(i_get || (i_send && first_of_sender))) continue;
      std::vector<V> buf = i_send ? pack_piece(m) : std::vector<V>(static_cast<std::size_t>(m.box.size()));
      g_.broadcast(buf.data(), buf.size(), coords_.coord(m.src, ua), g_.axis(ua));
      if (i_get) copy_box(buf.data(), m.box, out, my_need, m.box);
    }
  }

  void run_point_to_point(const std::vector<message>& msgs, V* out, const boxn& my_need) {
    const int me = g_.rank();
    // A permutation along one axis is a shift; anything else all-to-all traffic.
    std::vector<int> sends(static_cast<std::size_t>(g_.size()), 0), recvs(static_cast<std::size_t>(g_.size()), 0);
    const int axis0 = coords_.single_axis(msgs.front().src, msgs.front().dst);
    bool shift = axis0 >= 0;
    for (const message& m : msgs) {
      shift = shift && coords_.single_axis(m.src, m.dst) == axis0 && ++sends[static_cast<std::size_t>(m.src)] == 1 &&
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
        irecv_chunked(inbox.back().data(), m.box.size(), m.src, tag, g_.comm(), reqs);
        g_.stats().received(kind, m.box.size() * static_cast<long long>(sizeof(V)));
      }
      if (m.src == me) {
        outbox.push_back(pack_piece(m));
        isend_chunked(outbox.back().data(), m.box.size(), m.dst, tag, g_.comm(), reqs);
        g_.stats().sent(kind, m.box.size() * static_cast<long long>(sizeof(V)));
      }
    }
    wait_all(reqs);
    for (std::size_t q = 0; q < incoming.size(); ++q) copy_box(inbox[q].data(), incoming[q]->box, out, my_need, incoming[q]->box);
  }

  const machine_grid& g_;
  grid_coords coords_;
  std::vector<boxn> tile_;
  box_index tiles_;
  std::vector<boxn> held_;
  box_index held_index_;
  std::vector<bool> owner_;
  std::span<const V> mine_;
  std::vector<V> last_;
};

template <class V, std::size_t N, index_type I>
tensor_view<const V, dense_tensor<N>, I> dense_view(const boxn& b, std::span<const V> data) {
  using view = tensor_view<const V, dense_tensor<N>, I>;
  return [&]<std::size_t... d>(std::index_sequence<d...>) {
    return view({static_cast<I>(b.hi[d] - b.lo[d])...},
                typename view::level_tuple(dense_level<I>(static_cast<I>(b.hi[d] - b.lo[d]))...), data);
  }(std::make_index_sequence<N>{});
}

// t(v0, v1, ...) with the variables of string S (t const for an input).
template <fixed_string S, class T>
auto access_of(T&& t) {
  return [&]<std::size_t... d>(std::index_sequence<d...>) {
    return t(index_var<S.chars[d]>{}...);
  }(std::make_index_sequence<S.view().size()>{});
}


template <fixed_string Out, fixed_string... In>
consteval bool well_formed_statement() {
  constexpr std::string_view out = Out.view();
  for (std::size_t a = 0; a < out.size(); ++a) {
    for (std::size_t b = 0; b < a; ++b)
      if (out[a] == out[b]) return false;
    if ((!has_char(In.view(), out[a]) && ...)) return false;
  }
  return true;
}

// The statement's variables and, for each, its extent and range on each rank.
struct statement_plan {
  std::string vars;
  std::vector<long long> extent;
  std::vector<std::vector<long long>> coords;                  // by rank
  std::vector<std::vector<std::array<long long, 2>>> range;    // by rank, by variable
  std::string why;
  std::size_t step_var = std::string::npos;                   // the divided variable
  std::vector<std::vector<std::array<long long, 2>>> steps;    // by rank: its steps of step_var
  std::vector<long long> shift;                                // by rank: rotation
  std::size_t nsteps = 0;                                      // the most steps of any rank
  std::vector<std::size_t> tile_vars;                          // reorder: loops before the steps
  std::vector<long long> tiles;                                // by rank: its tile count
  long long ntiles = 1;                                        // the most tiles of any rank
  using ranges = std::vector<std::array<long long, 2>>;
  [[nodiscard]] static boxn project(const std::vector<std::size_t>& var_index, const ranges& rg) {
    boxn b{var_index.size(), {}, {}};
    for (std::size_t d = 0; d < var_index.size(); ++d) {
      b.lo[d] = rg[var_index[d]][0];
      b.hi[d] = rg[var_index[d]][1];
    }
    return b;
  }
  [[nodiscard]] boxn box(const std::vector<std::size_t>& var_index, std::size_t r) const {
    return project(var_index, range[r]);
  }
  /// Whether rank r runs step t of tile u.
  [[nodiscard]] bool runs_step(std::size_t r, long long u, std::size_t t) const {
    return u < tiles[r] && t < steps[r].size();
  }
  /// Rank r's variable ranges at step t of tile u (runs_step(r, u, t)):
  /// tile variables one index each (the first outermost), the divided
  /// variable the step's (rotated) range.
  [[nodiscard]] ranges at(std::size_t r, long long u, std::size_t t) const {
    ranges rg = range[r];
    for (std::size_t q = tile_vars.size(); q-- > 0;) {
      auto& x = rg[tile_vars[q]];
      const long long n = x[1] - x[0];
      x[0] += u % n;
      x[1] = x[0] + 1;
      u /= n;
    }
    if (step_var != std::string::npos) {
      const auto n = static_cast<long long>(steps[r].size());
      rg[step_var] = steps[r][static_cast<std::size_t>((static_cast<long long>(t) + shift[r]) % n)];
    }
    return rg;
  }
  [[nodiscard]] bool runs(std::size_t r) const {
    for (const auto& rg : range[r])
      if (rg[1] <= rg[0]) return false;
    return true;
  }
  [[nodiscard]] std::vector<std::size_t> indices(std::string_view s) const {
    std::vector<std::size_t> ix;
    for (char c : s) ix.push_back(vars.find(c));
    return ix;
  }
};

// Variables, extents (checked across tensors), every rank's block, steps
// and tiles. var_splits[m]: the split points of the variable machine
// dimension m distributes (a tensor's, from var_splits_of), else even
// blocks. names/dims: the output's first when has_output. step_splits:
// the inputs' split points along the divided variable (divide_at_splits).
inline statement_plan plan_statement(const char* fn, const machine_grid& g, const statement_schedule& s,
                                     const std::vector<std::string_view>& names,
                                     const std::vector<const std::vector<long long>*>& dims, bool has_output,
                                     const std::vector<long long>& step_splits = {},
                                     const std::vector<std::vector<long long>>& var_splits = {}) {
  const std::size_t inputs = names.size() - (has_output ? 1 : 0);
  statement_plan pl;
  const std::string where = std::string("tensorlev::dist::") + fn + ": ";
  for (std::size_t t = 0; t < names.size() && pl.why.empty(); ++t)
    for (std::size_t d = 0; d < names[t].size(); ++d) {
      const char v = names[t][d];
      const long long n = (*dims[t])[d];
      const auto at = pl.vars.find(v);
      if (at == std::string::npos) {
        pl.vars += v;
        pl.extent.push_back(n);
      } else if (pl.extent[at] != n) {
        pl.why = where + "variable '" + v + "' has extent " + std::to_string(pl.extent[at]) + " in one tensor but " +
                 std::to_string(n) + " in tensor " + std::to_string(t) + " (\"" + std::string(names[t]) +
                 (has_output ? "\", counted from 0 with the output first)" : "\", counted from 0)");
        break;
      }
    }
  const std::string& dist = s.distributed();
  if (pl.why.empty() && dist.size() != g.order())
    pl.why = where + "the schedule distributes " + std::to_string(dist.size()) + " variables (\"" + dist +
             "\") over a grid of " + std::to_string(g.order()) + " dimensions";
  for (char v : dist)
    if (pl.why.empty() && pl.vars.find(v) == std::string::npos)
      pl.why = where + "the schedule distributes '" + v + "', which is not a variable of the statement";
  const int p = g.size();
  for (int r = 0; r < p && pl.why.empty(); ++r) {
    pl.coords.push_back(g.coords_of(r));
    std::vector<std::array<long long, 2>> rg;
    for (std::size_t v = 0; v < pl.vars.size(); ++v) {
      const auto m = dist.find(pl.vars[v]);
      if (m == std::string::npos) {
        rg.push_back({0, pl.extent[v]});
      } else if (m < var_splits.size() && var_splits[m].size() == static_cast<std::size_t>(g.dims()[m]) + 1 &&
                 var_splits[m].back() == pl.extent[v]) {
        const auto c = static_cast<std::size_t>(pl.coords.back()[m]);
        rg.push_back({var_splits[m][c], var_splits[m][c + 1]});  // a tensor's split points
      } else {
        rg.push_back(block_bounds(pl.extent[v], g.dims()[m], pl.coords.back()[m]));
      }
    }
    pl.range.push_back(std::move(rg));
  }
  // Sequential steps of one variable (divide / split), rotated per rank.
  char sv = s.step_variable();
  if (pl.why.empty() && sv == statement_schedule::summed_var) {
    // divide(n) / split(chunk) without a variable: the one summed variable.
    std::string summed;
    for (char v : pl.vars)
      if (!has_output || names[0].find(v) == std::string_view::npos) summed += v;
    if (summed.size() != 1)
      pl.why = where + "divide or split without a variable needs a statement with one summed variable, not " +
               std::to_string(summed.size()) + (summed.empty() ? "" : " (\"" + summed + "\")");
    else
      sv = summed[0];
  }
  if (pl.why.empty() && sv != 0) {
    pl.step_var = pl.vars.find(sv);
    if (pl.step_var == std::string::npos)
      pl.why = where + "the schedule divides '" + sv + "', which is not a variable of the statement";
  }
  if (pl.why.empty() && !s.rotated_by().empty() && sv == 0) pl.why = where + "rotate needs divide or split";
  for (char v : s.rotated_by())
    if (pl.why.empty() && dist.find(v) == std::string::npos)
      pl.why = where + "rotate by '" + v + "', which is not distributed";
  for (std::size_t t = 0; t < s.communicate_entries() && pl.why.empty(); ++t) {
    const char v = s.communicated_at(t);
    if (v == 0) continue;
    if (t >= inputs)
      pl.why = where + "communicate names input " + std::to_string(t) + ", but the statement has " +
               std::to_string(inputs) + " inputs";
    else if (v != sv && dist.find(v) == std::string::npos)
      pl.why = where + "communicate input " + std::to_string(t) + " at '" + v +
               "': name the divided variable (each step) or a distributed one (once)";
  }
  // reorder: every variable's loop once, the step loop the divided variable's.
  if (pl.why.empty() && s.reordered()) {
    const std::string_view lo = s.leaf_order();
    for (char v : pl.vars)
      if (pl.why.empty() && lo.find(v) == std::string_view::npos)
        pl.why = where + "reorder does not name the loop \"" + std::string(1, v) + "i\" (name every variable's loop)";
    for (char v : lo)
      if (pl.why.empty() && pl.vars.find(v) == std::string::npos)
        pl.why = where + "reorder names \"" + std::string(1, v) + "i\", but '" + v +
                 "' is not a variable of the statement";
    const char ro = s.reorder_step_variable();
    if (pl.why.empty() && ro != 0 && ro != sv)
      pl.why = where + "reorder names the step loop \"" + std::string(1, ro) + "o\", but the schedule " +
               (sv == 0 ? std::string("divides nothing") : "divides '" + std::string(1, sv) + "'");
    for (char v : s.tile_variables()) {
      if (!pl.why.empty()) break;
      if (!has_output || names[0].find(v) == std::string_view::npos)
        pl.why = where + "reorder puts \"" + std::string(1, v) + "i\" before the step loop, but only output " +
                 "variables may tile the rank's block ('" + v + "' is summed)";
      else
        pl.tile_vars.push_back(pl.vars.find(v));
    }
  }
  for (int r = 0; r < p && pl.why.empty(); ++r) {
    std::vector<std::array<long long, 2>> st;
    const auto ur = static_cast<std::size_t>(r);
    if (!pl.runs(ur)) {
      pl.steps.push_back(st);
      pl.shift.push_back(0);
      pl.tiles.push_back(0);
      continue;
    }
    long long tiles = 1;
    for (std::size_t v : pl.tile_vars) tiles *= pl.range[ur][v][1] - pl.range[ur][v][0];
    pl.tiles.push_back(tiles);
    pl.ntiles = std::max(pl.ntiles, tiles);
    if (pl.step_var == std::string::npos) {
      st.push_back({0, 0});  // one step; the ranges are not cut
    } else {
      const auto rg = pl.range[ur][pl.step_var];
      if (s.parts() > 0) {
        // No more steps than indices (a huge n would only add empty steps).
        const long long parts = std::max(1LL, std::min(s.parts(), rg[1] - rg[0]));
        for (long long q = 0; q < parts; ++q) {
          const auto b = block_bounds(rg[1] - rg[0], parts, q);
          st.push_back({rg[0] + b[0], rg[0] + b[1]});
        }
      } else if (s.chunk() > 0) {
        for (long long k0 = rg[0]; k0 < rg[1];) {
          const long long k1 = k0 + std::min(s.chunk(), rg[1] - k0);  // no overflow for huge chunks
          st.push_back({k0, k1});
          k0 = k1;
        }
      } else {  // at the inputs' split points
        std::vector<long long> pts{rg[0], rg[1]};
        for (long long x : step_splits)
          if (x > rg[0] && x < rg[1]) pts.push_back(x);
        std::sort(pts.begin(), pts.end());
        pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
        for (std::size_t q = 0; q + 1 < pts.size(); ++q) {
          const long long w = pts[q + 1] - pts[q];
          const long long parts = s.panel_width() > 0 ? (w - 1) / s.panel_width() + 1 : 1;  // w >= 1; no overflow
          for (long long c = 0; c < parts; ++c) {
            const auto b = block_bounds(w, parts, c);
            st.push_back({pts[q] + b[0], pts[q] + b[1]});
          }
        }
      }
    }
    long long shift = 0;
    for (char v : s.rotated_by()) shift += pl.coords[ur][dist.find(v)];
    pl.nsteps = std::max(pl.nsteps, st.size());
    pl.steps.push_back(std::move(st));
    pl.shift.push_back(shift);
  }
  return pl;
}

// Every rank's box of the tensor named by s (empty where a rank's block is).
inline std::vector<boxn> needs(const statement_plan& pl, std::string_view s) {
  const auto ix = pl.indices(s);
  std::vector<boxn> need;
  for (std::size_t r = 0; r < pl.range.size(); ++r) need.push_back(pl.runs(r) ? pl.box(ix, r) : boxn{ix.size(), {}, {}});
  return need;
}

// The split points of the inputs' dimensions that variable v indexes
// (divide_at_splits; empty when the schedule divides otherwise).
template <fixed_string... In, class... T>
std::vector<long long> step_splits(const statement_schedule& s, std::string_view out, const T&... in) {
  std::vector<long long> pts;
  if (s.step_variable() == 0 || s.parts() > 0 || s.chunk() > 0) return pts;
  char v = s.step_variable();
  if (v == statement_schedule::summed_var) {  // resolved as plan_statement does; it reports errors
    std::string all;
    ((all += In.view()), ...);
    for (char c : all)
      if (out.find(c) == std::string_view::npos) {
        v = c;
        break;
      }
  }
  const auto add = [&](std::string_view names, const auto& t) {
    for (std::size_t d = 0; d < names.size(); ++d)
      if (names[d] == v) pts.insert(pts.end(), t.map().splits(d).begin(), t.map().splits(d).end());
  };
  (add(In.view(), in), ...);
  return pts;
}

template <fixed_string S>
struct names_tag {
  static constexpr auto value = S;
};

// The messages carrying each rank's partial output box to every rank
// holding output entries it covers (otile: every rank's tile), in the
// order of the sending ranks, each sender's by destination. The holders
// come from an index of the tiles: O(messages), not a test of every pair
// of ranks.
inline std::vector<box_message> partial_messages(const std::vector<boxn>& part, const std::vector<boxn>& otile) {
  std::vector<box_message> msgs;
  const box_index holders(otile);
  for (std::size_t r = 0; r < part.size(); ++r) {
    const boxn& pr = part[r];
    if (pr.empty()) continue;
    const std::size_t first = msgs.size();
    holders.meeting(pr, [&](const boxn& box, std::span<const int> ranks) {
      const boxn piece = pr.meet(box);
      for (int h : ranks) msgs.push_back({static_cast<int>(r), h, piece});
    });
    std::sort(msgs.begin() + static_cast<std::ptrdiff_t>(first), msgs.end(),
              [](const box_message& x, const box_message& y) { return x.dst < y.dst; });
  }
  return msgs;
}

// A rank's entries of a sparse partial output: coordinates (order per
// entry) relative to a box's lower corner, and values.
template <class V, class I>
struct entry_list {
  std::vector<I> coords;
  std::vector<V> values;
};

// Sends each message's entries (those of `mine` inside the message's box,
// `mine` over box `from`) to its destination, relative to the
// destination's tile; returns what this rank receives, in message order
// (the sending ranks' order), relative to its own tile. Counts go first
// (control traffic, not counted); the payload is counted as `kind`, one
// message of entries * (order * sizeof(I) + sizeof(V)) bytes where it is
// not empty, sent in pieces of at most mpi_chunk values (no size is
// refused).
template <class V, class I>
entry_list<V, I> exchange_entries(const machine_grid& g, const std::vector<box_message>& msgs,
                                  const entry_list<V, I>& mine, const boxn& from, const std::vector<boxn>& tiles,
                                  std::size_t order, comm_kind kind) {
  const int me = g.rank();
  // This rank's outgoing lists, one per distinct (piece, destination
  // tile corner): replicas of a tile get the same list.
  std::vector<entry_list<V, I>> lists;
  std::vector<std::pair<boxn, boxn>> keys;
  std::vector<std::size_t> list_of(msgs.size(), 0);
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.src != me) continue;
    const boxn& to = tiles[static_cast<std::size_t>(m.dst)];
    std::size_t k = 0;
    while (k < keys.size() && !(keys[k].first == m.box && keys[k].second == to)) ++k;
    list_of[q] = k;
    if (k < keys.size()) continue;
    keys.emplace_back(m.box, to);
    entry_list<V, I>& l = lists.emplace_back();
    const std::size_t n = mine.values.size();
    for (std::size_t e = 0; e < n; ++e) {
      const I* c = mine.coords.data() + e * order;
      bool inside = true;
      for (std::size_t d = 0; d < order && inside; ++d) {
        const long long x = from.lo[d] + static_cast<long long>(c[d]);
        inside = x >= m.box.lo[d] && x < m.box.hi[d];
      }
      if (!inside) continue;
      for (std::size_t d = 0; d < order; ++d)
        l.coords.push_back(static_cast<I>(from.lo[d] + static_cast<long long>(c[d]) - to.lo[d]));
      l.values.push_back(mine.values[e]);
    }
  }
  // Counts.
  std::vector<long long> counts(msgs.size(), 0);
  std::vector<MPI_Request> reqs;
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.src == m.dst) continue;
    if (m.src == me) {
      counts[q] = static_cast<long long>(lists[list_of[q]].values.size());
      reqs.emplace_back();
      check_mpi(MPI_Isend(&counts[q], 1, MPI_LONG_LONG, m.dst, 30703, g.comm(), &reqs.back()), "MPI_Isend");
    } else if (m.dst == me) {
      reqs.emplace_back();
      check_mpi(MPI_Irecv(&counts[q], 1, MPI_LONG_LONG, m.src, 30703, g.comm(), &reqs.back()), "MPI_Irecv");
    }
  }
  wait_all(reqs);
  long long received = 0;
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.dst == me) received += m.src == me ? static_cast<long long>(lists[list_of[q]].values.size()) : counts[q];
  }
  // Payload: coordinates, then values (in pieces of at most mpi_chunk).
  std::vector<entry_list<V, I>> inbox(msgs.size());
  const long long entry_bytes = static_cast<long long>(order * sizeof(I) + sizeof(V));
  const auto ord = static_cast<long long>(order);
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.src == m.dst || counts[q] == 0) continue;
    if (m.dst == me) {
      inbox[q].coords.resize(static_cast<std::size_t>(counts[q] * ord));
      inbox[q].values.resize(static_cast<std::size_t>(counts[q]));
      irecv_chunked(inbox[q].coords.data(), counts[q] * ord, m.src, 30704, g.comm(), reqs);
      irecv_chunked(inbox[q].values.data(), counts[q], m.src, 30705, g.comm(), reqs);
      g.stats().received(kind, counts[q] * entry_bytes);
    }
    if (m.src == me) {
      const entry_list<V, I>& l = lists[list_of[q]];
      isend_chunked(l.coords.data(), counts[q] * ord, m.dst, 30704, g.comm(), reqs);
      isend_chunked(l.values.data(), counts[q], m.dst, 30705, g.comm(), reqs);
      g.stats().sent(kind, counts[q] * entry_bytes);
    }
  }
  wait_all(reqs);
  entry_list<V, I> got;
  got.coords.reserve(static_cast<std::size_t>(received) * order);
  got.values.reserve(static_cast<std::size_t>(received));
  for (std::size_t q = 0; q < msgs.size(); ++q) {
    const box_message& m = msgs[q];
    if (m.dst != me) continue;
    const entry_list<V, I>& l = m.src == me ? lists[list_of[q]] : inbox[q];
    got.coords.insert(got.coords.end(), l.coords.begin(), l.coords.end());
    got.values.insert(got.values.end(), l.values.begin(), l.values.end());
  }
  return got;
}

// Tests only: the rank whose local kernel throws an injected
// overflow_error in compute's next statements (-1: none).
inline int fail_local_kernel_on_rank = -1;

// The first exception one rank's local work throws (the generated kernel
// on that rank's data: an index overflow, memory), kept so that the rank
// still takes part in every collective of the statement; agree() then
// throws the same type on every rank (overflow_error where the first
// failure was one, else tensorlev::error), naming the first failing rank
// and its message.
class local_failure {
 public:
  explicit local_failure(const machine_grid& g) : rank_(g.rank()) {}
  template <class F>
  void run(F&& f) {
    if (failed_) return;
    try {
      if (fail_local_kernel_on_rank == rank_) throw overflow_error("an injected failure (test)");
      f();
    } catch (const overflow_error& e) {
      failed_ = overflow_ = true;
      what_ = e.what();
    } catch (const std::exception& e) {
      failed_ = true;
      what_ = e.what();
    } catch (...) {
      failed_ = true;
      what_ = "an exception not derived from std::exception";
    }
  }
  void agree(const machine_grid& g) const {
    if (auto msg = first_failure(g, !failed_, "rank " + std::to_string(rank_) + "'s local kernel: " + what_)) {
      int overflow = overflow_ ? 1 : 0;
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, g.comm()), "MPI_Allreduce");
      const std::string text = "tensorlev::dist::compute: " + *msg;
      if (overflow) throw overflow_error(text);
      throw error(text);
    }
  }

 private:
  int rank_;
  bool failed_ = false;
  bool overflow_ = false;
  std::string what_;
};

// Packs this rank's received entries in format F over a box of extents
// dims (duplicates summed in the order received) where `here`, and agrees
// on the outcome: whether entries pack depends on this rank's data (a
// format's limits), so a failure on one rank throws on every rank, naming
// `what` and the rank.
template <format_type F, class V, class I>
std::optional<tensor<V, F, I>> pack_entries(const machine_grid& g, bool here, std::vector<I> dims,
                                            entry_list<V, I> got, const char* what) {
  std::optional<tensor<V, F, I>> piece;
  std::string why;
  int overflow = 0;
  if (here) {
    try {
      piece.emplace(pack<F>(coordinate_list<V, I>(std::move(dims), std::move(got.coords), std::move(got.values)),
                            duplicates::sum));
    } catch (const overflow_error& e) {
      why = "rank " + std::to_string(g.rank()) + ": " + e.what();
      overflow = 1;
    } catch (const std::exception& e) {
      why = "rank " + std::to_string(g.rank()) + ": " + e.what();
    }
  }
  if (auto msg = first_failure(g, why.empty(), why)) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &overflow, 1, MPI_INT, MPI_MAX, g.comm()), "MPI_Allreduce");
    const std::string text = std::string("tensorlev::dist::compute: packing ") + what + " failed: " + *msg;
    if (overflow) throw overflow_error(text);
    throw shape_error(text);
  }
  return piece;
}

// Messages that bring each rank the entries of a sparse input inside the
// box it needs (need: by rank; tiles/owner: the input's tiles and which
// copy owns each): from the rank itself when its own piece holds the box,
// else from the owners whose tiles meet it.
inline std::vector<box_message> sparse_fetch_messages(const std::vector<boxn>& need, const std::vector<boxn>& tiles,
                                                      const std::vector<bool>& owner) {
  std::vector<boxn> owned(tiles.size());
  for (std::size_t r = 0; r < tiles.size(); ++r) owned[r] = owner[r] ? tiles[r] : boxn{tiles[r].n, {}, {}};
  const box_index index(owned);
  std::vector<box_message> msgs;
  for (std::size_t r = 0; r < need.size(); ++r) {
    const boxn& b = need[r];
    if (b.empty()) continue;
    const int dst = static_cast<int>(r);
    if (tiles[r].contains(b)) {
      msgs.push_back({dst, dst, b});
      continue;
    }
    index.meeting(b, [&](const boxn& box, std::span<const int> ranks) {
      for (int o : ranks) msgs.push_back({o, dst, b.meet(box)});
    });
  }
  return msgs;
}

// A sparse input's pieces as the schedule reads them. Where every rank's
// block (or step, or tile) is exactly its own piece, the piece is used in
// place; otherwise each rank receives the entries of the box it reads
// (sparse_fetch_messages, exchange_entries: counted as all-to-all
// traffic, entries * (order * sizeof(I) + sizeof(V)) bytes a message) and
// packs them in the input's format, in coordinates relative to the box.
// A box is fetched again only when some rank's box changes.
template <class V, format_type F, class I>
class sparse_fetch {
 public:
  template <class T>
  sparse_fetch(const T& t, const std::vector<std::vector<long long>>& coords) {
    auto [tiles, owner] = tiles_of(t, coords);
    tiles_ = std::move(tiles);
    owner_ = std::move(owner);
  }
  // Collective: the boxes every rank reads now; then piece() is this
  // rank's.
  template <class T>
  void fetch(const machine_grid& g, const T& t, std::vector<boxn> need) {
    if (fetched_ && need == need_) return;
    fetched_ = true;
    need_ = std::move(need);
    const std::vector<box_message> msgs = sparse_fetch_messages(need_, tiles_, owner_);
    bool in_place = true;
    for (const box_message& m : msgs)
      in_place = in_place && m.src == m.dst && m.box == tiles_[static_cast<std::size_t>(m.src)];
    const auto me = static_cast<std::size_t>(g.rank());
    piece_.reset();
    if (in_place) return;  // every rank reads its own piece (the same on every rank)
    if (!listed_) {  // this rank's entries, relative to its tile
      listed_ = true;
      for_each_component(t.local(), [&](const auto& c, const V& v) {
        for (std::size_t d = 0; d < F::order; ++d) mine_.coords.push_back(c[d]);
        mine_.values.push_back(v);
      });
    }
    entry_list<V, I> got = exchange_entries(g, msgs, mine_, tiles_[me], need_, F::order, comm_kind::alltoall);
    std::vector<I> dims(F::order);
    for (std::size_t d = 0; d < F::order; ++d) dims[d] = static_cast<I>(std::max(0LL, need_[me].hi[d] - need_[me].lo[d]));
    // Its own piece where it reads all of it (received from itself).
    piece_ = pack_entries<F>(g, !(need_[me] == tiles_[me]) || need_[me].empty(), std::move(dims), std::move(got),
                             "a fetched sparse input");
  }
  // This rank's piece as last fetched (its own piece where it reads that).
  template <class T>
  [[nodiscard]] const tensor<V, F, I>& piece(const T& t) const {
    return piece_ ? *piece_ : t.local();
  }

 private:
  std::vector<boxn> tiles_;
  std::vector<bool> owner_;
  std::vector<boxn> need_;
  bool fetched_ = false;
  bool listed_ = false;
  entry_list<V, I> mine_;
  std::optional<tensor<V, F, I>> piece_;
};

// For each tile and step: fetches the inputs' boxes (in order, on every
// rank: per step for an input that reads the divided variable, else once),
// and calls run(product, ranges, spans) on the ranks that run the step,
// with the product of the inputs' accesses over the step's boxes in local
// coordinates, the step's variable ranges and the inputs' step boxes
// (row-major).
template <fixed_string... In, class Run, class... T>
void stepped_products(const machine_grid& g, const statement_plan& pl, const statement_schedule& s, std::size_t me,
                      Run&& run, const T&... in) {
  using T0 = std::tuple_element_t<0, std::tuple<T...>>;
  using V = typename T0::value_type;
  using I = typename T0::index_type;
  using names = std::tuple<names_tag<In>...>;
  constexpr std::size_t n = sizeof...(In);
  std::tuple<std::conditional_t<true, fetcher<V>, T>...> fetchers{fetcher<V>(g, in)...};  // traffic in g's stats
  const auto ins = std::forward_as_tuple(in...);
  constexpr std::array<bool, n> dense{row_major_dense_v<typename T::format_type>...};
  std::tuple<sparse_fetch<V, typename T::format_type, I>...> sparse{
      sparse_fetch<V, typename T::format_type, I>(in, pl.coords)...};
  std::array<const std::vector<V>*, n> data{};
  std::array<std::vector<V>, n> scratch;
  std::array<boxn, n> have{};
  std::array<bool, n> per_step{};
  std::array<bool, n> varies{};  // a sparse input's box changes with the step or tile
  std::array<std::vector<std::size_t>, n> ix;
  [&]<std::size_t... t>(std::index_sequence<t...>) {
    ((ix[t] = pl.indices(std::tuple_element_t<t, names>::value.view())), ...);
  }(std::make_index_sequence<n>{});
  for (std::size_t q = 0; q < n; ++q) {
    const bool reads = pl.step_var != std::string::npos &&
                       std::find(ix[q].begin(), ix[q].end(), pl.step_var) != ix[q].end();
    const char at = s.communicated_at(q);
    per_step[q] = reads && (at == 0 || at == pl.vars[pl.step_var]);
    varies[q] = reads;
    for (std::size_t v : pl.tile_vars) varies[q] = varies[q] || std::find(ix[q].begin(), ix[q].end(), v) != ix[q].end();
  }
  const std::size_t p = pl.range.size();
  // This step's slice of input q, in place when it is all of the fetched box.
  const auto slice = [&](std::size_t q, const boxn& want) -> std::span<const V> {
    if (have[q] == want) return *data[q];
    scratch[q].resize(static_cast<std::size_t>(want.size()));
    copy_box(data[q]->data(), have[q], scratch[q].data(), want, want);
    return scratch[q];
  };
  for (long long u = 0; u < pl.ntiles; ++u)
    for (std::size_t step = 0; step < pl.nsteps; ++step) {
      [&]<std::size_t... t>(std::index_sequence<t...>) {
        const auto fetch = [&](std::size_t q, auto& f) {
          if (!per_step[q] && (u > 0 || step > 0)) return;
          std::vector<boxn> need;
          for (std::size_t r = 0; r < p; ++r) {
            if (per_step[q])
              need.push_back(pl.runs_step(r, u, step) ? statement_plan::project(ix[q], pl.at(r, u, step))
                                                      : boxn{ix[q].size(), {}, {}});
            else
              need.push_back(pl.runs_step(r, 0, 0) ? pl.box(ix[q], r) : boxn{ix[q].size(), {}, {}});
          }
          data[q] = &f.fetch(need);
          have[q] = need[me];
        };
        ((dense[t] ? fetch(t, std::get<t>(fetchers)) : void()), ...);
        // A sparse input: the box of it each rank reads now (its own piece
        // in place where that is all of it).
        const auto fetch_sparse = [&]<std::size_t q>(std::integral_constant<std::size_t, q>) {
          if constexpr (!dense[q]) {
            // Per step and tile where it reads the divided or a tiled
            // variable, else the rank's block (as long as it runs at all,
            // so that a rank with fewer steps changes nothing).
            std::vector<boxn> need;
            for (std::size_t r = 0; r < p; ++r) {
              if (varies[q])
                need.push_back(pl.runs_step(r, u, step) ? statement_plan::project(ix[q], pl.at(r, u, step))
                                                        : boxn{ix[q].size(), {}, {}});
              else
                need.push_back(pl.runs_step(r, 0, 0) ? pl.box(ix[q], r) : boxn{ix[q].size(), {}, {}});
            }
            std::get<q>(sparse).fetch(g, std::get<q>(ins), std::move(need));
          }
        };
        (fetch_sparse(std::integral_constant<std::size_t, t>{}), ...);
        if (!pl.runs_step(me, u, step)) return;
        const auto rg = pl.at(me, u, step);
        const std::array<std::span<const V>, n> spans{
            (dense[t] ? slice(t, statement_plan::project(ix[t], rg)) : std::span<const V>())...};
        // A dense input's view over its step box; a sparse input's piece
        // of the step box (its own piece where that is the box).
        const auto operand = [&]<std::size_t q>(std::integral_constant<std::size_t, q>) -> decltype(auto) {
          using Tq = std::tuple_element_t<q, std::tuple<T...>>;
          constexpr auto S = std::tuple_element_t<q, names>::value;
          if constexpr (row_major_dense_v<typename Tq::format_type>)
            return dense_view<V, S.view().size(), I>(statement_plan::project(ix[q], rg), spans[q]);
          else
            return std::get<q>(sparse).piece(std::get<q>(ins));
        };
        std::tuple<decltype(operand(std::integral_constant<std::size_t, t>{}))...> operands{
            operand(std::integral_constant<std::size_t, t>{})...};
        run((access_of<std::tuple_element_t<t, names>::value>(std::as_const(std::get<t>(operands))) * ...), rg, spans);
      }(std::make_index_sequence<n>{});
    }
}

// A statement of the form Out = P Q, In0 = P R, In1 = R Q (P, Q, R
// strings of distinct variables, R summed) is a matrix product of row-major
// boxes: rows = the extents of P, columns Q, inner R. Returns |P| (0 is
// allowed), or -1 when the statement has another shape.
template <fixed_string Out, fixed_string... In>
consteval int gemm_rows_vars() {
  if constexpr (sizeof...(In) != 2) {
    return -1;
  } else {
    constexpr std::string_view in[2] = {In.view()...};
    constexpr std::string_view out = Out.view();
    for (std::size_t np = 0; np <= out.size(); ++np) {
      const std::size_t nq = out.size() - np;
      if (in[0].size() < np || in[1].size() < nq || in[0].size() - np != in[1].size() - nq) continue;
      const std::size_t nr = in[0].size() - np;
      bool ok = in[0].substr(0, np) == out.substr(0, np) && in[1].substr(nr) == out.substr(np) &&
                in[0].substr(np) == in[1].substr(0, nr);
      const std::string_view all[3] = {out, in[0].substr(np), {}};
      for (std::size_t a = 0; a < all[0].size() + all[1].size() && ok; ++a)
        for (std::size_t b = 0; b < a && ok; ++b) {
          const char ca = a < all[0].size() ? all[0][a] : all[1][a - all[0].size()];
          const char cb = b < all[0].size() ? all[0][b] : all[1][b - all[0].size()];
          ok = ca != cb;
        }
      if (ok) return static_cast<int>(np);
    }
    return -1;
  }
}

template <class T>
struct type_tag {};

template <fixed_string Out, fixed_string... In, class FO, class... FI>
consteval void check_statement(type_tag<FO>, type_tag<FI>...) {
  static_assert(sizeof...(In) >= 1, "tensorlev::dist::compute: name the output's and each input's variables, "
                                    "e.g. compute<\"ij\", \"ijk\", \"k\">(A, schedule, B, c)");
  static_assert(sizeof...(In) == sizeof...(FI), "tensorlev::dist::compute: give one variable string per input tensor");
  static_assert(((In.view().size() == FI::order) && ...),
                "tensorlev::dist::compute: an input's variable string must name one variable per dimension");
  static_assert(Out.view().size() == FO::order,
                "tensorlev::dist::compute: the output's variable string must name one variable per dimension");
  static_assert(well_formed_statement<Out, In...>(),
                "tensorlev::dist::compute: the output's variables must be distinct and each read by an input");
}

}  // namespace detail

namespace detail {

// The leaf loop order of a matrix-product statement (gemm_rows_vars' np
// rows) in gemm_add's letters (rows i, inner k, columns j) from reorder's
// variable order; "" when none was given. Sets `why` when the order
// interleaves the variables of two roles.
inline std::string gemm_leaf_order(std::string_view order, std::string_view tiles, std::string_view out,
                                   std::string_view in0, int np, std::string& why) {
  const auto role = [&](char v) {
    const auto at = out.find(v);
    return at == std::string_view::npos ? 'k' : at < static_cast<std::size_t>(np) ? 'i' : 'j';
  };
  // Tile variables run one index per tile: only the loops inside count;
  // roles with no such loop go first (extent 1), in the given order.
  std::string roles, first;
  for (char v : order) {
    const char r = role(v);
    if (tiles.find(v) == std::string_view::npos) {
      if (roles.empty() || roles.back() != r) roles += r;
    } else if (first.find(r) == std::string::npos) {
      first += r;
    }
  }
  std::string lead;
  for (char r : first)
    if (roles.find(r) == std::string::npos) lead += r;
  roles = lead + roles;
  for (char r : {'i', 'k', 'j'})
    if (roles.find(r) == std::string::npos && !order.empty()) roles += r;
  std::string sorted = roles;
  std::sort(sorted.begin(), sorted.end());
  if (!order.empty() && sorted != "ijk")
    why = "reorder's loop order \"" + std::string(order) + "\" interleaves the rows, columns and inner variables " +
          "of the matrix product \"" + std::string(out) + "\" = \"" + std::string(in0) + "\" x ...: keep each group " +
          "together";
  return order.empty() ? std::string() : roles;
}

// Whether sub-box b of a row-major array over `whole` is one contiguous
// range (leading dimensions one index each, then one partial dimension,
// then whole dimensions); sets its offset.
inline bool contiguous_in(const boxn& b, const boxn& whole, long long& offset) {
  std::size_t d = 0;
  while (d < b.n && b.hi[d] - b.lo[d] == 1 && whole.hi[d] - whole.lo[d] != 1) ++d;
  for (std::size_t e = d + 1; e < b.n; ++e)
    if (b.lo[e] != whole.lo[e] || b.hi[e] != whole.hi[e]) return false;
  offset = 0;
  for (std::size_t e = 0; e < b.n; ++e) offset = offset * (whole.hi[e] - whole.lo[e]) + (b.lo[e] - whole.lo[e]);
  return true;
}

// Sparse inputs are not moved: "" when every rank that runs a block reads
// exactly its own piece of each (no step or tile over their variables),
// else which input and rank do not.
// The part of run_statement for an output that is not dense row-major
// (see the file comment): each step computed in the output's format,
// entries routed to the holders and packed there; or, where every
// partial is its holder's whole tile in one step and the output is not
// an input, the kernel straight into the rank's piece.
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void run_sparse_output(const executor& ex, dist_tensor<V, FO, DO, I>& out, const statement_schedule& s,
                       const statement_plan& pl, const dist_tensor<V, FI, DI, I>&... in) {
  constexpr std::size_t N = FO::order;
  using piece_t = tensor<V, FO, I>;
  const machine_grid& g = out.grid();
  const auto me = static_cast<std::size_t>(g.rank());
  const auto out_ix = pl.indices(Out.view());
  const std::vector<boxn> part = needs(pl, Out.view());  // each rank's partial output box
  const std::vector<boxn> otile = tiles_of(out, pl.coords).first;
  const std::vector<box_message> msgs = partial_messages(part, otile);
  const auto empty_piece = [](std::vector<I> dims) { return pack<FO>(coordinate_list<V, I>(std::move(dims))); };
  std::vector<I> my_dims(N);
  for (std::size_t d = 0; d < N; ++d) my_dims[d] = out.local().dimension(d);
  const bool aliased = ((static_cast<const void*>(&out) == static_cast<const void*>(&in)) || ...);
  bool direct = !aliased && pl.nsteps <= 1 && pl.ntiles <= 1;
  for (const box_message& m : msgs)
    direct = direct && m.src == m.dst && m.box == part[static_cast<std::size_t>(m.src)] &&
             m.box == otile[static_cast<std::size_t>(m.dst)];
  local_failure fail(g);
  if (direct) {
    bool wrote = false;
    stepped_products<In...>(
        g, pl, s, me,
        [&](const auto& product, const statement_plan::ranges&, const auto&) {
          fail.run([&] { tensorlev::compute(ex, access_of<Out>(out.local()), product); });
          wrote = true;
        },
        in...);
    fail.agree(g);
    if (!wrote) out.local() = empty_piece(std::move(my_dims));
    return;
  }
  entry_list<V, I> mine;
  const boxn& pm = part[me];
  std::vector<I> part_dims(N);
  for (std::size_t d = 0; d < N; ++d) part_dims[d] = static_cast<I>(std::max(0LL, pm.hi[d] - pm.lo[d]));
  stepped_products<In...>(
      g, pl, s, me,
      [&](const auto& product, const statement_plan::ranges& rg, const auto&) {
        fail.run([&] {
          const boxn sb = statement_plan::project(out_ix, rg);
          std::vector<I> dims(N);
          for (std::size_t d = 0; d < N; ++d) dims[d] = static_cast<I>(std::max(0LL, sb.hi[d] - sb.lo[d]));
          piece_t step = empty_piece(std::move(dims));
          tensorlev::compute(ex, access_of<Out>(step), product);
          for_each_component(step, [&](const auto& c, const V& v) {
            for (std::size_t d = 0; d < N; ++d)
              mine.coords.push_back(static_cast<I>(static_cast<long long>(c[d]) + sb.lo[d] - pm.lo[d]));
            mine.values.push_back(v);
          });
        });
      },
      in...);
  // Steps of a divided summed variable reach one coordinate more than
  // once: summed here, so that each coordinate is sent once (tiles and
  // steps of output variables are disjoint).
  const bool summed_steps = pl.nsteps > 1 && pl.step_var != std::string::npos &&
                            Out.view().find(pl.vars[pl.step_var]) == std::string_view::npos;
  if (summed_steps)
    fail.run([&] {
      const piece_t sum = pack<FO>(coordinate_list<V, I>(part_dims, std::move(mine.coords), std::move(mine.values)),
                                   duplicates::sum);
      mine = {};
      for_each_component(sum, [&](const auto& c, const V& v) {
        mine.coords.insert(mine.coords.end(), c.begin(), c.end());
        mine.values.push_back(v);
      });
    });
  fail.agree(g);
  entry_list<V, I> got = exchange_entries(g, msgs, mine, pm, otile, N, comm_kind::reduce);
  out.local() = std::move(*pack_entries<FO>(g, true, std::move(my_dims), std::move(got), "a sparse output"));
}

// The dense row-major output's part of run_statement: each rank's partial
// box, summed at the output's holders (or reduced onto a face).
template <int np, fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I,
          format_type... FI, class... DI>
void run_dense_output(const executor& ex, dist_tensor<V, FO, DO, I>& out, const statement_schedule& s,
                      const statement_plan& pl, const std::string& leaf, const dist_tensor<V, FI, DI, I>&... in) {
  const machine_grid& g = out.grid();
  const auto me = static_cast<std::size_t>(g.rank());
  const auto out_ix = pl.indices(Out.view());
  const std::vector<boxn> part = needs(pl, Out.view());  // each rank's partial output box
  std::vector<V> partial(static_cast<std::size_t>(part[me].size()), V{});
  using view = tensor_view<V, dense_tensor<Out.view().size()>, I>;
  const auto view_over = [](const boxn& b, std::span<V> data) {
    return [&]<std::size_t... d>(std::index_sequence<d...>) {
      return view({static_cast<I>(b.hi[d] - b.lo[d])...},
                  typename view::level_tuple(dense_level<I>(static_cast<I>(b.hi[d] - b.lo[d]))...), data);
    }(std::make_index_sequence<Out.view().size()>{});
  };
  std::vector<V> step_out;
  local_failure fail(g);  // one rank's exception, thrown on every rank before the partials move
  stepped_products<In...>(
      g, pl, s, me,
      [&](const auto& product, const statement_plan::ranges& rg, const auto& spans) { fail.run([&] {
        const boxn sb = statement_plan::project(out_ix, rg);
        // The leaf: a matrix product of the boxes (BLAS when linked and
        // not turned off) when the statement has that shape (GEMM, TTM,
        // TTV), else the generated kernel of the statement.
        const auto leaf_into = [&](std::span<V> dst) {
          if constexpr (np >= 0) {
            long long ext[3] = {1, 1, 1};  // rows, inner, columns
            constexpr std::string_view o = Out.view();
            constexpr std::string_view a = std::get<0>(std::tuple{In.view()...});
            for (std::size_t q = 0; q < o.size(); ++q) {
              const auto& r = rg.at(pl.vars.find(o[q]));
              ext[q < static_cast<std::size_t>(np) ? 0 : 2] *= r[1] - r[0];
            }
            for (std::size_t q = static_cast<std::size_t>(np); q < a.size(); ++q) {
              const auto& r = rg.at(pl.vars.find(a[q]));
              ext[1] *= r[1] - r[0];
            }
            constexpr long long imax = std::numeric_limits<I>::max();
            if (ext[0] <= imax && ext[1] <= imax && ext[2] <= imax) {
              gemm_add<V, I>(static_cast<I>(ext[0]), static_cast<I>(ext[1]), static_cast<I>(ext[2]), spans[0],
                             spans[1], dst, ex, leaf, s.uses_blas());
              return;
            }
          }
          compute_add(ex, access_of<Out>(view_over(sb, dst)), product);
        };
        long long offset = 0;
        if (contiguous_in(sb, part[me], offset)) {  // in place (the whole partial, or rows of it)
          leaf_into(std::span<V>(partial).subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(sb.size())));
          return;
        }
        step_out.assign(static_cast<std::size_t>(sb.size()), V{});
        leaf_into(std::span<V>(step_out));
        for_each_run(sb, part[me], sb, [&](long long of, long long ot, long long len) {
          for (long long q = 0; q < len; ++q)
            partial[static_cast<std::size_t>(ot + q)] += step_out[static_cast<std::size_t>(of + q)];
        });
      }); },
      in...);
  fail.agree(g);
  const auto [otile, oowner] = tiles_of(out, pl.coords);
  (void)oowner;
  auto ov = out.local().values();
  const int p = g.size();
  // A reduction along the machine dimension of the one distributed summed
  // variable onto a face that holds the output block for block (Johnson,
  // 2.5D).
  int mk = -1;
  int summed_dims = 0;
  for (std::size_t m = 0; m < s.distributed().size(); ++m)
    if (Out.view().find(s.distributed()[m]) == std::string_view::npos) {
      mk = static_cast<int>(m);
      ++summed_dims;
    }
  if (summed_dims == 1) {
    const machine_dim& md = DO::statement().machine[static_cast<std::size_t>(mk)];
    bool face = DO::levels == 1 && md.kind == machine_dim_kind::fixed;
    // Every rank's partial is the one of the face rank it reduces onto
    // (equal counts for MPI_Reduce: a rank whose block of the summed
    // variable is empty has an empty partial, and then messages go).
    for (int r = 0; r < p && face; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      const bool on_face = pl.coords[ur][static_cast<std::size_t>(mk)] == md.fixed;
      std::vector<long long> fc = pl.coords[ur];
      fc[static_cast<std::size_t>(mk)] = md.fixed;
      face = (on_face ? otile[ur] == part[ur] : otile[ur].empty()) &&
             part[ur] == part[static_cast<std::size_t>(g.rank_of(fc))];
    }
    if (face) {
      g.reduce_sum(partial.data(), partial.size(), static_cast<int>(md.fixed), g.axis(static_cast<std::size_t>(mk)));
      if (out.holds()) std::copy(partial.begin(), partial.end(), ov.begin());
      return;
    }
  }
  // Otherwise partials go to every rank holding output entries they cover,
  // summed there (in place where a rank computes its own block).
  // (The holders of each partial come from an index of the output's
  // tiles: O(messages), not a test of every pair of ranks.)
  const std::vector<box_message> msgs = partial_messages(part, otile);
  std::fill(ov.begin(), ov.end(), V{});
  const boxn my_out = otile[me];
  // Summed in the order of the sending ranks on every holder, so the
  // copies of a replicated output agree bit for bit.
  exchange_boxes<V>(g, msgs, std::span<const V>(partial), part[me], comm_kind::reduce, 702,
                    [&](const V* src, const boxn& from, const boxn& b) {
                      for_each_run(from, my_out, b, [&](long long of, long long ot, long long run) {
                        for (long long q = 0; q < run; ++q) ov[static_cast<std::size_t>(ot + q)] += src[of + q];
                      });
                    });
}

// For each machine dimension m, the split points of the variable the
// schedule distributes over it, taken from the first of the tensors (the
// output first) whose distribution partitions that variable's dimension
// over m: the ranks' blocks of the iteration space are then the pieces
// that tensor already holds (owner computes), so nothing of it moves and
// tensors split by stored entries (split_policy::nonzeros) keep their
// balance. Empty (even blocks) where no tensor does.
template <fixed_string... S, class... T>
std::vector<std::vector<long long>> var_splits_of(const statement_schedule& s, const T&... t) {
  const std::string& dist = s.distributed();
  std::vector<std::vector<long long>> out(dist.size());
  const auto take = [&](std::string_view names, const auto& x) {
    using D = typename std::remove_cvref_t<decltype(x)>::distribution_type;
    const dist_statement& st = D::statement();
    for (std::size_t m = 0; m < dist.size() && m < st.machine_order; ++m) {
      const machine_dim& md = st.machine[m];
      if (out[m].empty() && md.kind == machine_dim_kind::partition && md.tensor_dim < names.size() &&
          names[md.tensor_dim] == dist[m])
        out[m] = x.map().splits(md.tensor_dim);
    }
  };
  (take(S.view(), t), ...);
  return out;
}

// The engine: out(Out) = the product of in...(In) as schedule s says,
// errors named after `fn` (compute, matmul, summa, cannon).
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void run_statement(const char* fn, const executor& ex, dist_tensor<V, FO, DO, I>& out, const statement_schedule& s,
                   const dist_tensor<V, FI, DI, I>&... in) {
  check_statement<Out, In...>(type_tag<FO>{}, type_tag<FI>{}...);
  // A matrix product of dense boxes into a dense output goes to gemm_add
  // (sparse inputs or outputs run the generated kernel).
  constexpr int np = row_major_dense_v<FO> && (row_major_dense_v<FI> && ...) ? gemm_rows_vars<Out, In...>() : -1;
  const machine_grid& g = out.grid();
  std::string why = same_grid(fn, g, in...);
  statement_plan pl;
  std::string leaf;
  if (why.empty()) {
    pl = plan_statement(fn, g, s, {Out.view(), In.view()...}, {&out.dims(), &in.dims()...}, true,
                        step_splits<In...>(s, Out.view(), in...), var_splits_of<Out, In...>(s, out, in...));
    why = pl.why;
  }
  // The leaf order matters where gemm_add generates the leaf (no BLAS,
  // blas(false), or a value type the BLAS lacks).
#if defined(TENSORLEV_DIST_BLAS)
  constexpr bool blas_type = std::is_same_v<V, double> || std::is_same_v<V, float> ||
                             std::is_same_v<V, std::complex<double>> || std::is_same_v<V, std::complex<float>>;
#else
  constexpr bool blas_type = false;
#endif
  if (why.empty() && s.reordered() && !(blas_type && s.uses_blas())) {
    if constexpr (np >= 0) {
      leaf = gemm_leaf_order(s.leaf_order(), s.tile_variables(), Out.view(), std::get<0>(std::tuple{In.view()...}),
                             np, why);
      if (!why.empty()) why = std::string("tensorlev::dist::") + fn + ": " + why;
    }
  }
  agree(g, why.empty(), why);
  agree_on_value(g, s.hash(), std::string("tensorlev::dist::") + fn + ": the ranks passed different schedules");
  if constexpr (row_major_dense_v<FO>)
    run_dense_output<np, Out, In...>(ex, out, s, pl, leaf, in...);
  else
    run_sparse_output<Out, In...>(ex, out, s, pl, in...);
}

}  // namespace detail

/// out(Out) = the product of in...(In), summed over the variables not in
/// Out, as schedule s distributes it (see the file comment). Collective;
/// out's previous values are replaced (out may also be an input).
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void compute(const executor& ex, dist_tensor<V, FO, DO, I>& out, const statement_schedule& s,
             const dist_tensor<V, FI, DI, I>&... in) {
  detail::run_statement<Out, In...>("compute", ex, out, s, in...);
}

namespace detail {
template <char... C>
inline constexpr char chars_of[sizeof...(C) + 1] = {C..., '\0'};
template <char... C>
inline constexpr fixed_string<sizeof...(C) + 1> string_of{chars_of<C...>};
template <class A>
struct access_string;
template <class T, char... C>
struct access_string<dist_access<T, C...>> {
  static constexpr auto value = string_of<C...>;
};
}  // namespace detail

/// Runs a statement in index notation, `C(i,j) = A(i,k) * B(k,j)` over
/// dist_tensors, as schedule s says: the engine's statement, the same as
/// `compute<"ij", "ik", "kj">(ex, C, s, A, B)`. The index variables'
/// names are the schedule's variable names (`distribute("ij")`). Also
/// built from einsum strings: `einsum_statement<"ik,kj->ij">(C, A, B)`.
template <class T, char... OC, class R>
void compute(const executor& ex, const dist_assignment<dist_access<T, OC...>, R>& st, const statement_schedule& s) {
  const auto ops = detail::dist_factors(st.rhs);
  using ops_t = std::remove_const_t<decltype(ops)>;
  [&]<std::size_t... q>(std::index_sequence<q...>) {
    detail::run_statement<detail::string_of<OC...>, detail::access_string<std::tuple_element_t<q, ops_t>>::value...>(
        "compute", ex, *st.out.tensor, s, *std::get<q>(ops).tensor...);
  }(std::make_index_sequence<std::tuple_size_v<ops_t>>{});
}

/// The statement on the serial executor inside each rank.
template <class T, char... OC, class R>
void compute(const dist_assignment<dist_access<T, OC...>, R>& st, const statement_schedule& s) {
  compute(serial, st, s);
}

/// compute on the serial executor inside each rank.
template <fixed_string Out, fixed_string... In, class V, format_type FO, class DO, index_type I, format_type... FI,
          class... DI>
void compute(dist_tensor<V, FO, DO, I>& out, const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  compute<Out, In...>(serial, out, s, in...);
}

/// The sum over every variable of the product of in...(In) (an inner
/// product when the strings are equal), on every rank: each rank sums its
/// block, then one all-reduce. Collective.
template <fixed_string... In, class V, index_type I, format_type... FI, class... DI>
[[nodiscard]] V reduce(const executor& ex, const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  static_assert(sizeof...(In) >= 1 && sizeof...(In) == sizeof...(FI),
                "tensorlev::dist::reduce: give one variable string per input tensor, e.g. "
                "reduce<\"ijk\", \"ijk\">(schedule, B, C)");
  static_assert(((In.view().size() == FI::order) && ...),
                "tensorlev::dist::reduce: an input's variable string must name one variable per dimension");
  const machine_grid& g = std::get<0>(std::forward_as_tuple(in...)).grid();
  std::string why = detail::same_grid("reduce", g, in...);
  detail::statement_plan pl;
  if (why.empty()) {
    pl = detail::plan_statement("reduce", g, s, {In.view()...}, {&in.dims()...}, false,
                                detail::step_splits<In...>(s, std::string_view{}, in...),
                                detail::var_splits_of<In...>(s, in...));
    why = pl.why;
  }
  agree(g, why.empty(), why);
  detail::agree_on_value(g, s.hash(), "tensorlev::dist::reduce: the ranks passed different schedules");
  V v{};
  detail::stepped_products<In...>(
      g, pl, s, static_cast<std::size_t>(g.rank()),
      [&](const auto& product, const detail::statement_plan::ranges&, const auto&) {
        scalar<V> sc;
        tensorlev::compute(ex, sc(), product);
        v += sc.value();
      },
      in...);
  g.allreduce_sum(&v, 1, g.comm());
  return v;
}

/// reduce on the serial executor inside each rank.
template <fixed_string... In, class V, index_type I, format_type... FI, class... DI>
[[nodiscard]] V reduce(const statement_schedule& s, const dist_tensor<V, FI, DI, I>&... in) {
  return reduce<In...>(serial, s, in...);
}

}  // namespace tensorlev::dist
