#pragma once
/// @file dist/grid.hpp
/// A machine grid over MPI ranks (link `tensorlev::dist`), and the counted
/// communication every distributed kernel goes through.
///
///     MPI_Init(&argc, &argv);
///     {
///       tensorlev::dist::machine_grid grid(MPI_COMM_WORLD, {0, 0});  // 2D, MPI_Dims_create picks the shape
///       ... grid.coords(), grid.axis(0) (ranks that differ only in dimension 0) ...
///       grid.stats()  // bytes and messages this rank sent and received, per collective kind
///     }
///     MPI_Finalize();
///
/// The grid holds a Cartesian communicator (row-major rank order, no
/// reordering) and one sub-communicator per dimension. Communication is
/// counted as logical point-to-point payload: a broadcast from the root to
/// k other ranks counts k messages sent at the root and one received at
/// each other rank, whatever tree the MPI library uses.

#include <mpi.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../error.hpp"

namespace tensorlev::dist {

/// An MPI call failed.
class mpi_error : public error {
 public:
  using error::error;
};

inline void check_mpi(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw mpi_error(std::string("tensorlev::dist: ") + what + " failed: " + std::string(msg, static_cast<std::size_t>(len)));
  }
}

/// n as an MPI count. @throws overflow_error naming `what` above 2^31 - 1
/// (MPI counts are int). Callers size n from data every rank has, so all
/// ranks throw together.
inline int mpi_count(long long n, const char* what) {
  if (n < 0 || n > 2147483647LL)
    throw overflow_error(std::string("tensorlev::dist: ") + what + ": " + std::to_string(n) +
                         " values in one MPI call (at most 2^31 - 1)");
  return static_cast<int>(n);
}

/// The MPI datatype of T (arithmetic types and std::complex of them).
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, std::int32_t>) return MPI_INT32_T;
  else if constexpr (std::is_same_v<T, std::int64_t>) return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, long long>) return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return MPI_CXX_DOUBLE_COMPLEX;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return MPI_CXX_FLOAT_COMPLEX;
  else static_assert(sizeof(T) == 0, "tensorlev::dist: no MPI datatype for this value or index type");
}

namespace detail {
/// The most values one call of a chunked collective carries (the grid's
/// broadcast, reduce_sum and allreduce_sum, einsum_distributed's partial
/// sums): 2^30, under MPI's int counts, so that a block of 2^31 values or
/// more is combined in several calls instead of refused (a refusal would
/// reach only the ranks whose blocks are that large). Tests lower it to run
/// the chunked path on small data.
inline long long mpi_chunk = 1LL << 30;

/// Calls f(first, count) for consecutive pieces [first, first + count) of
/// [0, n), each at most mpi_chunk values (count an int), none when n is 0:
/// ranks that pass the same n make the same calls.
template <class F>
void for_mpi_chunks(long long n, F&& f, std::size_t bytes_per_value = 1) {
  // At most mpi_chunk values and at most 2^31 - 1 bytes a piece (some MPI
  // transports mishandle larger messages).
  const long long cap = 2147483647LL / static_cast<long long>(bytes_per_value > 0 ? bytes_per_value : 1);
  const long long step = std::max(1LL, mpi_chunk > 0 && mpi_chunk <= cap ? mpi_chunk : cap);
  for (long long at = 0; at < n; at += step) f(at, static_cast<int>(std::min(step, n - at)));
}

/// Nonblocking send of n values at data to rank `peer` of c in pieces of at
/// most mpi_chunk values, all with tag `tag`; the requests are appended to
/// reqs. MPI matches the messages of one sender, tag and communicator in
/// the order they were sent, so a receiver that posts irecv_chunked with
/// the same n gets the pieces in order. n = 0 sends nothing.
template <class T>
void isend_chunked(const T* data, long long n, int peer, int tag, MPI_Comm c, std::vector<MPI_Request>& reqs) {
  for_mpi_chunks(n, [&](long long at, int count) {
    reqs.emplace_back();
    check_mpi(MPI_Isend(data + at, count, mpi_type<T>(), peer, tag, c, &reqs.back()), "MPI_Isend");
  }, sizeof(T));
}
/// The receiving side of isend_chunked.
template <class T>
void irecv_chunked(T* data, long long n, int peer, int tag, MPI_Comm c, std::vector<MPI_Request>& reqs) {
  for_mpi_chunks(n, [&](long long at, int count) {
    reqs.emplace_back();
    check_mpi(MPI_Irecv(data + at, count, mpi_type<T>(), peer, tag, c, &reqs.back()), "MPI_Irecv");
  }, sizeof(T));
}
inline void wait_all(std::vector<MPI_Request>& reqs) {
  check_mpi(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  reqs.clear();
}

/// In-place sum over communicator c of n values at data, in chunks (every
/// rank of c passes the same n).
template <class T>
void allreduce_sum_chunked(T* data, long long n, MPI_Comm c) {
  for_mpi_chunks(n, [&](long long at, int count) {
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + at, count, mpi_type<T>(), MPI_SUM, c), "MPI_Allreduce");
  }, sizeof(T));
}
}  // namespace detail

/// Kinds of communication, counted separately.
enum class comm_kind : unsigned char { broadcast, allgather, shift, reduce, alltoall, count };
inline constexpr std::size_t comm_kinds = static_cast<std::size_t>(comm_kind::count);

/// What one rank sent and received, per kind (logical point-to-point payload).
struct comm_stats {
  struct counts {
    long long messages_sent = 0;
    long long bytes_sent = 0;
    long long messages_received = 0;
    long long bytes_received = 0;
    friend bool operator==(const counts&, const counts&) = default;
  };
  std::array<counts, comm_kinds> by_kind{};
  /// Shifts sent to a rank that is not a neighbour on its ring.
  long long far_shifts = 0;

  [[nodiscard]] const counts& operator[](comm_kind k) const { return by_kind[static_cast<std::size_t>(k)]; }
  [[nodiscard]] counts& operator[](comm_kind k) { return by_kind[static_cast<std::size_t>(k)]; }
  [[nodiscard]] counts total() const {
    counts t;
    for (const auto& c : by_kind) {
      t.messages_sent += c.messages_sent;
      t.bytes_sent += c.bytes_sent;
      t.messages_received += c.messages_received;
      t.bytes_received += c.bytes_received;
    }
    return t;
  }
  void reset() {
    by_kind = {};
    far_shifts = 0;
  }
  void sent(comm_kind k, long long bytes) {
    ++(*this)[k].messages_sent;
    (*this)[k].bytes_sent += bytes;
  }
  void received(comm_kind k, long long bytes) {
    ++(*this)[k].messages_received;
    (*this)[k].bytes_received += bytes;
  }
};

/// A Cartesian grid of MPI ranks with one sub-communicator per dimension.
class machine_grid {
 public:
  /// Over `comm` with the given extents; a 0 extent is chosen by
  /// MPI_Dims_create. @throws shape_error if the extents' product is not
  /// the communicator's size.
  machine_grid(MPI_Comm comm, std::vector<int> dims) : dims_(std::move(dims)) {
    int size = 0;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (dims_.empty()) throw shape_error("tensorlev::dist::machine_grid: a grid needs at least one dimension");
    long long fixed = 1;
    bool free_dims = false;
    for (int d : dims_) {
      if (d < 0) throw shape_error("tensorlev::dist::machine_grid: negative grid extent " + std::to_string(d));
      if (d == 0) free_dims = true;
      else if ((fixed *= d) > size)  // stops before the product can overflow
        throw shape_error("tensorlev::dist::machine_grid: the grid extents need more than the communicator's " +
                          std::to_string(size) + " ranks");
    }
    if (free_dims) {
      if (size % fixed != 0)
        throw shape_error("tensorlev::dist::machine_grid: the fixed extents (product " + std::to_string(fixed) +
                          ") do not divide the " + std::to_string(size) + " ranks");
      check_mpi(MPI_Dims_create(size, static_cast<int>(dims_.size()), dims_.data()), "MPI_Dims_create");
    }
    long long product = 1;
    for (int d : dims_) product *= d;
    if (product != size)
      throw shape_error("tensorlev::dist::machine_grid: a grid of " + shape_string() + " needs " +
                        std::to_string(product) + " ranks, the communicator has " + std::to_string(size));
    const std::vector<int> periods(dims_.size(), 1);
    check_mpi(MPI_Cart_create(comm, static_cast<int>(dims_.size()), dims_.data(), periods.data(), 0, &cart_),
              "MPI_Cart_create");
    check_mpi(MPI_Comm_rank(cart_, &rank_), "MPI_Comm_rank");
    coords_.resize(dims_.size());
    check_mpi(MPI_Cart_coords(cart_, rank_, static_cast<int>(dims_.size()), coords_.data()), "MPI_Cart_coords");
    axes_.resize(dims_.size(), MPI_COMM_NULL);
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      std::vector<int> keep(dims_.size(), 0);
      keep[d] = 1;
      check_mpi(MPI_Cart_sub(cart_, keep.data(), &axes_[d]), "MPI_Cart_sub");
    }
  }
  machine_grid(const machine_grid&) = delete;
  machine_grid& operator=(const machine_grid&) = delete;
  ~machine_grid() {
    for (MPI_Comm& c : axes_)
      if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
  }

  [[nodiscard]] std::size_t order() const noexcept { return dims_.size(); }
  [[nodiscard]] const std::vector<int>& dims() const noexcept { return dims_; }
  [[nodiscard]] std::vector<long long> extents() const { return {dims_.begin(), dims_.end()}; }
  [[nodiscard]] int size() const noexcept {
    int s = 1;
    for (int d : dims_) s *= d;
    return s;
  }
  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] const std::vector<int>& coords() const noexcept { return coords_; }
  [[nodiscard]] std::vector<long long> coord_vector() const { return {coords_.begin(), coords_.end()}; }
  /// The rank at machine coordinate p (row-major).
  [[nodiscard]] int rank_of(const std::vector<long long>& p) const {
    int r = 0;
    for (std::size_t d = 0; d < dims_.size(); ++d) r = r * dims_[d] + static_cast<int>(p[d]);
    return r;
  }
  [[nodiscard]] std::vector<long long> coords_of(int r) const {
    std::vector<long long> p(dims_.size());
    for (std::size_t d = dims_.size(); d-- > 0;) {
      p[d] = r % dims_[d];
      r /= dims_[d];
    }
    return p;
  }
  /// The Cartesian communicator (ranks in row-major coordinate order).
  [[nodiscard]] MPI_Comm comm() const noexcept { return cart_; }
  /// Whether `o` is this grid or an equal one: the same extents over the
  /// same processes in the same order (MPI_Comm_compare: identical or
  /// congruent communicators), so that a rank and its coordinates mean the
  /// same process in both. Local; every rank gets the same answer.
  [[nodiscard]] bool same_as(const machine_grid& o) const {
    if (this == &o) return true;
    if (dims_ != o.dims_) return false;
    int cmp = MPI_UNEQUAL;
    check_mpi(MPI_Comm_compare(cart_, o.cart_, &cmp), "MPI_Comm_compare");
    return cmp == MPI_IDENT || cmp == MPI_CONGRUENT;
  }
  /// Ranks that share every coordinate but d; a rank's rank in it is its
  /// coordinate d.
  [[nodiscard]] MPI_Comm axis(std::size_t d) const { return axes_.at(d); }
  [[nodiscard]] comm_stats& stats() const noexcept { return stats_; }
  [[nodiscard]] std::string shape_string() const {
    std::string s;
    for (std::size_t d = 0; d < dims_.size(); ++d) s += (d ? "x" : "") + std::to_string(dims_[d]);
    return s;
  }

  // Counted collectives (counts are logical point-to-point payload).

  /// Broadcast of n values from `root` over communicator c (of `members` ranks).
  template <class T>
  void broadcast(T* data, std::size_t n, int root, MPI_Comm c) const {
    const auto [me, members] = rank_and_size(c);
    if (members > 1 && n > 0) {  // n is the same on every rank: all skip together
      detail::for_mpi_chunks(static_cast<long long>(n), [&](long long at, int count) {
        check_mpi(MPI_Bcast(data + at, count, mpi_type<T>(), root, c), "MPI_Bcast");
      }, sizeof(T));
      const long long bytes = static_cast<long long>(n * sizeof(T));
      if (me == root)
        for (int k = 1; k < members; ++k) stats_.sent(comm_kind::broadcast, bytes);
      else
        stats_.received(comm_kind::broadcast, bytes);
    }
  }
  template <class T>
  void broadcast_along(T* data, std::size_t n, int root, std::size_t d) const {
    broadcast(data, n, root, axis(d));
  }

  /// Shift: send n_send values to rank `to` and receive n_recv from rank
  /// `from` of communicator c (a neighbour exchange; no-op onto itself).
  /// n_recv is what `from` sends (above detail::mpi_chunk values the
  /// message goes in pieces, matched one by one).
  template <class T>
  void shift(const T* send, std::size_t n_send, int to, T* recv, std::size_t n_recv, int from, MPI_Comm c) const {
    const auto [me, members] = rank_and_size(c);
    if (to == me && from == me) {
      for (std::size_t k = 0; k < n_send && k < n_recv; ++k) recv[k] = send[k];
      return;
    }
    const auto limit = static_cast<std::size_t>(std::min<long long>(
        detail::mpi_chunk > 0 ? detail::mpi_chunk : INT32_MAX, INT32_MAX / static_cast<long long>(sizeof(T))));
    if (n_send <= limit && n_recv <= limit) {
      check_mpi(MPI_Sendrecv(send, static_cast<int>(n_send), mpi_type<T>(), to, 71, recv, static_cast<int>(n_recv),
                             mpi_type<T>(), from, 71, c, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
    } else {  // in pieces: n_recv must then be what `from` sends
      std::vector<MPI_Request> reqs;
      detail::irecv_chunked(recv, static_cast<long long>(n_recv), from, 71, c, reqs);
      detail::isend_chunked(send, static_cast<long long>(n_send), to, 71, c, reqs);
      detail::wait_all(reqs);
    }
    stats_.sent(comm_kind::shift, static_cast<long long>(n_send * sizeof(T)));
    if (to != (me + 1) % members && to != (me + members - 1) % members) ++stats_.far_shifts;
    stats_.received(comm_kind::shift, static_cast<long long>(n_recv * sizeof(T)));
  }

  /// All-gather of variable-sized blocks over communicator c: block k
  /// (counts[k] values) lands at offset displs[k] of `out`.
  template <class T>
  void allgatherv(const T* mine, std::size_t n, T* out, const std::vector<int>& counts, const std::vector<int>& displs,
                  MPI_Comm c) const {
    const auto [me, members] = rank_and_size(c);
    check_mpi(MPI_Allgatherv(mine, mpi_count(static_cast<long long>(n), "allgatherv"), mpi_type<T>(), out, counts.data(), displs.data(),
                             mpi_type<T>(), c),
              "MPI_Allgatherv");
    for (int k = 0; k < members; ++k) {
      if (k == me) continue;
      if (n > 0) stats_.sent(comm_kind::allgather, static_cast<long long>(n * sizeof(T)));
      if (counts[static_cast<std::size_t>(k)] > 0)
        stats_.received(comm_kind::allgather, static_cast<long long>(counts[static_cast<std::size_t>(k)]) *
                                                  static_cast<long long>(sizeof(T)));
    }
  }

  /// Sum-reduction of n values onto `root` of communicator c (in place at
  /// the root; `data` is unchanged elsewhere).
  template <class T>
  void reduce_sum(T* data, std::size_t n, int root, MPI_Comm c) const {
    const auto [me, members] = rank_and_size(c);
    if (members == 1) return;
    const long long bytes = static_cast<long long>(n * sizeof(T));
    const bool at_root = me == root;  // (clang 14 captures no structured binding)
    detail::for_mpi_chunks(static_cast<long long>(n), [&](long long at, int count) {
      if (at_root)
        check_mpi(MPI_Reduce(MPI_IN_PLACE, data + at, count, mpi_type<T>(), MPI_SUM, root, c), "MPI_Reduce");
      else
        check_mpi(MPI_Reduce(data + at, nullptr, count, mpi_type<T>(), MPI_SUM, root, c), "MPI_Reduce");
    }, sizeof(T));
    if (me == root) {
      for (int k = 1; k < members; ++k) stats_.received(comm_kind::reduce, bytes);
    } else {
      stats_.sent(comm_kind::reduce, bytes);
    }
  }

  /// Sum over all ranks of c, result everywhere (counted as a reduce to one
  /// rank plus a broadcast back).
  template <class T>
  void allreduce_sum(T* data, std::size_t n, MPI_Comm c) const {
    const auto [me, members] = rank_and_size(c);
    if (members == 1) return;
    detail::allreduce_sum_chunked(data, static_cast<long long>(n), c);
    const long long bytes = static_cast<long long>(n * sizeof(T));
    if (me == 0) {
      for (int k = 1; k < members; ++k) {
        stats_.received(comm_kind::reduce, bytes);
        stats_.sent(comm_kind::broadcast, bytes);
      }
    } else {
      stats_.sent(comm_kind::reduce, bytes);
      stats_.received(comm_kind::broadcast, bytes);
    }
  }

  /// Personalized all-to-all over the grid: send[k] goes to rank k; returns
  /// what each rank sent here, concatenated in rank order, with counts.
  /// One MPI_Alltoallv where every rank sends and receives at most
  /// detail::mpi_chunk values (2^30), else point to point in pieces of that
  /// size, so no total is refused; recv_counts (ints) must fit an int.
  template <class T>
  std::vector<T> alltoallv(const std::vector<std::vector<T>>& send, std::vector<int>* recv_counts = nullptr) const {
    const int p = size();
    const auto up = static_cast<std::size_t>(p);
    if (send.size() != up)
      throw shape_error("tensorlev::dist::machine_grid::alltoallv: one send buffer per rank is needed");
    std::vector<long long> scount(up), rcount(up);
    for (std::size_t k = 0; k < up; ++k) scount[k] = static_cast<long long>(send[k].size());
    check_mpi(MPI_Alltoall(scount.data(), 1, MPI_LONG_LONG, rcount.data(), 1, MPI_LONG_LONG, cart_), "MPI_Alltoall");
    long long stotal = 0, rtotal = 0, rmax = 0;
    for (std::size_t k = 0; k < up; ++k) {
      stotal += scount[k];
      rtotal += rcount[k];
      rmax = std::max(rmax, rcount[k]);
    }
    // Agreed on every rank: whether one MPI_Alltoallv carries it all, and
    // whether the receive counts asked for fit ints.
    const long long limit = std::min<long long>(detail::mpi_chunk > 0 ? detail::mpi_chunk : INT32_MAX,
                                                INT32_MAX / static_cast<long long>(sizeof(T)));
    // (int counts imply int offsets: the totals must fit too.)
    int flags[2] = {stotal > limit || rtotal > limit ? 1 : 0,
                    recv_counts != nullptr && (rmax > INT32_MAX || rtotal > INT32_MAX || stotal > INT32_MAX) ? 1 : 0};
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, cart_), "MPI_Allreduce");
    if (flags[1])
      throw overflow_error("tensorlev::dist: more than 2^31 - 1 values sent or received by one rank in an "
                           "exchange whose counts are kept as ints");
    std::vector<T> rbuf(static_cast<std::size_t>(rtotal));
    if (!flags[0]) {
      std::vector<int> sc(up), rc(up), sd(up), rd(up);
      int so = 0, ro = 0;
      for (std::size_t k = 0; k < up; ++k) {
        sc[k] = static_cast<int>(scount[k]);
        rc[k] = static_cast<int>(rcount[k]);
        sd[k] = so;
        rd[k] = ro;
        so += sc[k];
        ro += rc[k];
      }
      std::vector<T> sbuf;
      sbuf.reserve(static_cast<std::size_t>(stotal));
      for (const auto& s : send) sbuf.insert(sbuf.end(), s.begin(), s.end());
      check_mpi(MPI_Alltoallv(sbuf.data(), sc.data(), sd.data(), mpi_type<T>(), rbuf.data(), rc.data(), rd.data(),
                              mpi_type<T>(), cart_),
                "MPI_Alltoallv");
    } else {
      std::vector<MPI_Request> reqs;
      long long at = 0;
      for (std::size_t k = 0; k < up; ++k) {
        const int r = static_cast<int>(k);
        if (r == rank_) std::copy(send[k].begin(), send[k].end(), rbuf.begin() + static_cast<std::ptrdiff_t>(at));
        else detail::irecv_chunked(rbuf.data() + at, rcount[k], r, 73, cart_, reqs);
        at += rcount[k];
      }
      for (std::size_t k = 0; k < up; ++k)
        if (static_cast<int>(k) != rank_) detail::isend_chunked(send[k].data(), scount[k], static_cast<int>(k), 73, cart_, reqs);
      detail::wait_all(reqs);
    }
    for (std::size_t k = 0; k < up; ++k) {
      if (static_cast<int>(k) == rank_) continue;
      if (scount[k] > 0) stats_.sent(comm_kind::alltoall, scount[k] * static_cast<long long>(sizeof(T)));
      if (rcount[k] > 0) stats_.received(comm_kind::alltoall, rcount[k] * static_cast<long long>(sizeof(T)));
    }
    if (recv_counts != nullptr) recv_counts->assign(rcount.begin(), rcount.end());
    return rbuf;
  }

 private:
  static std::pair<int, int> rank_and_size(MPI_Comm c) {
    int me = 0;
    int members = 0;
    check_mpi(MPI_Comm_rank(c, &me), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(c, &members), "MPI_Comm_size");
    return {me, members};
  }

  std::vector<int> dims_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  std::vector<MPI_Comm> axes_;
  int rank_ = 0;
  std::vector<int> coords_;
  mutable comm_stats stats_;
};

namespace detail {
// Ring distance between grid coordinates a and b on the torus of the grid.
inline long long grid_distance(const machine_grid& g, const std::vector<long long>& a,
                               const std::vector<long long>& b) {
  long long d = 0;
  for (std::size_t m = 0; m < a.size(); ++m) {
    const long long diff = std::llabs(a[m] - b[m]);
    d += std::min(diff, static_cast<long long>(g.dims()[m]) - diff);
  }
  return d;
}
}  // namespace detail

}  // namespace tensorlev::dist
