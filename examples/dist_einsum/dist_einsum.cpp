// An einsum over MPI ranks, as Deinsum plans it: run with mpirun.
//
//   mpirun -n P dist_einsum "EINSUM" --sizes i=N,j=N,... [--complex] [--json] [--no-fuse] [--output FILE.tns]
//
// Every operand is built in place on the ranks that hold its blocks, entry
// ((t + 1) + sum over d of (d + 1) * i_d) mod 7 - 3 (t: the operand's
// 0-based position in the string, i_d its 0-based coordinates). The einsum
// runs along its FLOP-optimal order of binary contractions, grouped as
// Deinsum groups them (MTTKRP's KRP and TDOT together; --no-fuse: a group
// per step), each group on its own grid of the ranks (SOAP), results
// redistributed between groups; rank 0 prints the order, each group's
// grid, the bytes all ranks sent next to the traffic model's and the I/O
// lower bound, checks the result against the same order run on one node,
// and writes it as FROSTT (1-based) with --output.
//
//   mpirun -n 8 dist_einsum "ijk,ja,ka,al->il" --sizes i=10,j=10,k=10,a=10,l=10
#include <mpi.h>

#include <complex>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "tensorlev/coordinate_list.hpp"
#include "tensorlev/dist.hpp"
#include "tensorlev/io/frostt.hpp"

namespace td = tensorlev::dist;

namespace {

struct options {
  std::string einsum;
  std::map<char, long long> sizes;
  bool complex = false, json = false, fuse = true;
  std::string output;
};

options parse(int argc, char** argv) {
  options o;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--complex") {
      o.complex = true;
    } else if (s == "--json") {
      o.json = true;
    } else if (s == "--no-fuse") {
      o.fuse = false;
    } else if (s == "--output" || s == "--sizes") {
      if (a + 1 >= argc) throw tensorlev::error("dist_einsum: " + s + " needs a value");
      const std::string v = argv[++a];
      if (s == "--output") {
        o.output = v;
        continue;
      }
      std::size_t at = 0;
      while (at < v.size()) {  // i=N,j=N,...
        const std::size_t end = v.find(',', at) == std::string::npos ? v.size() : v.find(',', at);
        const std::string item = v.substr(at, end - at);
        if (item.size() < 3 || item[1] != '=')
          throw tensorlev::error("dist_einsum: --sizes takes letter=extent pairs, not \"" + item + "\"");
        std::size_t used = 0;
        const long long n = std::stoll(item.substr(2), &used);
        if (used != item.size() - 2 || n < 1)
          throw tensorlev::error("dist_einsum: the extent of " + item.substr(0, 1) + " must be a positive integer");
        o.sizes[item[0]] = n;
        at = end + 1;
      }
    } else if (o.einsum.empty() && s.rfind("--", 0) != 0) {
      o.einsum = s;
    } else {
      throw tensorlev::error("dist_einsum: unknown argument \"" + s + "\"");
    }
  }
  if (o.einsum.empty())
    throw tensorlev::error("usage: dist_einsum \"EINSUM\" --sizes i=N,j=N,... [--complex] [--json] [--no-fuse] [--output FILE.tns]");
  return o;
}

template <class V>
int run(const options& o, const td::einsum_spec& e, const std::vector<long long>& ext, int rank, int ranks) {
  auto fill = [&](std::size_t t, const long long* x) {
    long long v = static_cast<long long>(t) + 1;
    for (std::size_t d = 0; d < e.input_order[t]; ++d) v += static_cast<long long>(d + 1) * x[d];
    return static_cast<V>(static_cast<double>(v % 7 - 3));
  };
  const auto r = td::einsum_distributed<V>(MPI_COMM_WORLD, e, ext, fill, {.fuse = o.fuse});
  if (rank != 0) return 0;
  // The same order on one node.
  const auto ops = td::dense_inputs<V>(e, ext, fill);
  const bool same = td::run_path<V>(e, r.path, ext, ops).data == r.output.data;
  const std::vector<long long> model = td::einsum_traffic_model(r.plan, ext, sizeof(V));
  std::vector<std::string> lines;  // plan.to_string, a line per group
  {
    const std::string text = r.plan.to_string(e);
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t nl = text.find('\n', at);
      lines.push_back(text.substr(at, nl - at));
      at = nl + 1;
    }
  }
  if (o.json) {
    std::printf("{\"einsum\": \"%s\", \"ranks\": %d, \"flops\": %.17g, \"groups\": [", o.einsum.c_str(), ranks,
                r.path.flops);
    for (std::size_t g = 0; g < r.groups.size(); ++g) {
      const std::string& line = lines[g];
      std::printf("%s{\"group\": \"%s\", \"steps\": %zu, \"bytes\": %lld, \"model_bytes\": %lld, \"bound_words\": %.17g, "
                  "\"words_per_rank\": %lld}",
                  g ? ", " : "", line.substr(0, line.find(" (")).c_str(), r.groups[g].steps, r.groups[g].bytes_sent,
                  model[g], r.groups[g].bound_words, r.groups[g].words_per_rank);
    }
    std::printf("], \"matches_one_node\": %s}\n", same ? "true" : "false");
  } else {
    std::printf("einsum %s on %d ranks, %.4g FLOPs in this order:\n%s", o.einsum.c_str(), ranks, r.path.flops,
                r.path.to_string(e).c_str());
    for (std::size_t g = 0; g < r.groups.size(); ++g)
      std::printf("group %zu: %s: %lld bytes sent (model %lld), I/O lower bound %.4g words (S = %lld words per rank)\n",
                  g, lines[g].c_str(), r.groups[g].bytes_sent, model[g], r.groups[g].bound_words,
                  r.groups[g].words_per_rank);
    bool modelled = true;
    for (std::size_t g = 0; g < r.groups.size(); ++g) modelled = modelled && r.groups[g].bytes_sent == model[g];
    std::printf("distributed einsum %s the single-node result and %s the modelled bytes\n",
                same ? "matches" : "DIFFERS from", modelled ? "moves" : "does NOT move");
  }
  if (!o.output.empty()) {
    if (e.output_order == 0) throw tensorlev::error("dist_einsum: --output needs an output of order 1 or more");
    std::vector<long long> dims(r.output.ext.begin(), r.output.ext.end());
    tensorlev::coordinate_list<V, long long> list(dims);
    std::vector<long long> x(dims.size());
    for (long long c = 0; c < r.output.size(); ++c) {
      long long q = c;
      for (std::size_t d = x.size(); d-- > 0;) x[d] = q % dims[d], q /= dims[d];
      list.push_back(x, r.output.data[static_cast<std::size_t>(c)]);
    }
    tensorlev::io::write_frostt(o.output, list);
  }
  return same ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1, rc = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  try {
    const options o = parse(argc, argv);
    const td::einsum_spec e = td::parse_einsum_checked(o.einsum);
    std::vector<long long> ext(e.nindices);
    for (std::size_t v = 0; v < e.nindices; ++v) {
      const auto it = o.sizes.find(e.letter[v]);
      if (it == o.sizes.end())
        throw tensorlev::error(std::string("dist_einsum: --sizes gives no extent for index ") + e.letter[v]);
      ext[v] = it->second;
    }
    rc = o.complex ? run<std::complex<double>>(o, e, ext, rank, ranks) : run<double>(o, e, ext, rank, ranks);
  } catch (const std::exception& ex) {
    if (rank == 0) std::fprintf(stderr, "%s\n", ex.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
