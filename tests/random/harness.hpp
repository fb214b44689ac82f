#pragma once
// Run-time side of the generative differential tester (tests/random/gen.py
// writes the statements). For each generated statement and each trial it
// draws extents, builds every operand from a random coordinate list (with
// duplicates, explicit zeros, empty rows) packed into the statement's
// format, runs the statement, and compares the result with an independent
// dense interpreter of the same expression (exact: small integer values).
// No gtest: a case prints its text and the failing trial, and main ends
// with the plain line "N passed, N failed".

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tensorlev/tensorlev.hpp"
#include "../support/format_lists.hpp"

namespace tlrand {
using namespace tensorlev;
using tltest::dense_dense_hashed;
using tltest::dense_sparse_sparse;
using tltest::hash_rows;
using tltest::hashed_csr;

// ---- formats beyond the named ones and the test lists ----------------------
struct dcsc : format<levels<compressed<>, compressed<>>, modes<1, 0>> {
  static constexpr std::string_view name = "DCSC";
};
/// Columns in hash maps: (dense j, hashed i).
struct hash_cols : format<levels<dense<>, hashed<>>, modes<1, 0>> {
  static constexpr std::string_view name = "hash columns";
};
/// CSF with permuted mode orders.
struct csf_201 : format<levels<compressed<>, compressed<>, compressed<>>, modes<2, 0, 1>> {
  static constexpr std::string_view name = "CSF (k, i, j)";
};
struct csf_120 : format<levels<compressed<>, compressed<>, compressed<>>, modes<1, 2, 0>> {
  static constexpr std::string_view name = "CSF (j, k, i)";
};
/// ELL-like order-3 tensor: a padded singleton under two dense levels.
struct padded3 : format<levels<dense<>, dense<>, singleton<>>> {
  static constexpr std::string_view name = "dense-dense-singleton";
};
/// COO of order 3 stored with its modes reversed.
struct coo_210 : format<levels<compressed_nonunique, singleton_nonunique, singleton<>>, modes<2, 1, 0>> {
  static constexpr std::string_view name = "COO (k, j, i)";
};

/// Formats holding at most one entry per fibre of the last dimension (a
/// singleton below dense levels, padded): the operands drawn for them keep
/// one entry per fibre, and an output of them may refuse a result that
/// does not fit ("the data does not fit this format").
template <class F>
constexpr bool single_entry_fibres = std::is_same_v<F, padded3>;

// ---- the dense interpreter -----------------------------------------------
struct dense_operand {
  std::vector<int> dims;
  std::vector<double> data;  // row-major
  double at(const std::vector<int>& x) const {
    std::size_t idx = 0;
    for (std::size_t d = 0; d < dims.size(); ++d) idx = idx * static_cast<std::size_t>(dims[d]) + static_cast<std::size_t>(x[d]);
    return data[idx];
  }
};

// Expression tree, parsed from the generator's prefix text: tokens
// "+", "-", "*", "n" (negation), "c<value>", "a<operand>:<vars>".
struct node {
  char kind = 0;  // + - * n c a
  double value = 0;
  int operand = -1;
  std::string vars;
  int a = -1, b = -1;
};

class interpreter {
 public:
  interpreter(std::string_view prefix, std::string out_vars) : out_vars_(std::move(out_vars)) {
    std::vector<std::string> tokens;
    std::string cur;
    for (char c : prefix) {
      if (c == ' ') {
        if (!cur.empty()) tokens.push_back(cur), cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) tokens.push_back(cur);
    std::size_t at = 0;
    root_ = parse(tokens, at);
    if (at != tokens.size()) std::abort();
  }

  /// The result as a dense row-major array over the output's extents.
  std::vector<double> run(const std::map<int, dense_operand>& ops, const std::map<char, int>& ext) const {
    std::vector<std::pair<int, int>> terms;  // (sign, node)
    split(root_, 1, terms);
    std::size_t total = 1;
    for (char v : out_vars_) total *= static_cast<std::size_t>(ext.at(v));
    std::vector<double> out(total, 0.0);
    for (const auto& [sign, t] : terms) {
      std::string red;
      collect_vars(t, red);
      std::string reduce;
      for (char v : red)
        if (out_vars_.find(v) == std::string::npos && reduce.find(v) == std::string::npos) reduce += v;
      const std::string all = out_vars_ + reduce;
      std::map<char, int> val;
      // Odometer over every output and reduction variable.
      std::vector<int> x(all.size(), 0);
      bool empty = false;
      for (char v : all) empty = empty || ext.at(v) == 0;
      if (empty) continue;
      for (bool done = false; !done;) {
        for (std::size_t q = 0; q < all.size(); ++q) val[all[q]] = x[q];
        std::size_t idx = 0;
        for (std::size_t q = 0; q < out_vars_.size(); ++q)
          idx = idx * static_cast<std::size_t>(ext.at(out_vars_[q])) + static_cast<std::size_t>(x[q]);
        out[idx] += sign * eval(t, ops, val);
        for (std::size_t q = all.size();;) {
          if (q == 0) {
            done = true;
            break;
          }
          --q;
          if (++x[q] < ext.at(all[q])) break;
          x[q] = 0;
        }
      }
    }
    return out;
  }

 private:
  int parse(const std::vector<std::string>& t, std::size_t& at) {
    if (at >= t.size()) std::abort();
    const std::string tok = t[at++];
    node n;
    n.kind = tok[0];
    if (tok == "+" || tok == "-" || tok == "*") {
      n.a = parse(t, at);
      n.b = parse(t, at);
    } else if (tok == "n") {
      n.a = parse(t, at);
    } else if (n.kind == 'c') {
      n.value = std::stod(tok.substr(1));
    } else if (n.kind == 'a') {
      const auto colon = tok.find(':');
      n.operand = std::stoi(tok.substr(1, colon - 1));
      n.vars = tok.substr(colon + 1);
    } else {
      std::abort();
    }
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }
  // Einstein summation: a variable not in the output is summed over the
  // top-level terms that use it; negation and subtraction distribute.
  void split(int n, int sign, std::vector<std::pair<int, int>>& out) const {
    const node& x = nodes_[static_cast<std::size_t>(n)];
    if (x.kind == '+') {
      split(x.a, sign, out), split(x.b, sign, out);
    } else if (x.kind == '-') {
      split(x.a, sign, out), split(x.b, -sign, out);
    } else if (x.kind == 'n') {
      split(x.a, -sign, out);
    } else {
      out.emplace_back(sign, n);
    }
  }
  void collect_vars(int n, std::string& vars) const {
    const node& x = nodes_[static_cast<std::size_t>(n)];
    vars += x.vars;
    if (x.a >= 0) collect_vars(x.a, vars);
    if (x.b >= 0) collect_vars(x.b, vars);
  }
  double eval(int n, const std::map<int, dense_operand>& ops, const std::map<char, int>& val) const {
    const node& x = nodes_[static_cast<std::size_t>(n)];
    switch (x.kind) {
      case '+': return eval(x.a, ops, val) + eval(x.b, ops, val);
      case '-': return eval(x.a, ops, val) - eval(x.b, ops, val);
      case '*': return eval(x.a, ops, val) * eval(x.b, ops, val);
      case 'n': return -eval(x.a, ops, val);
      case 'c': return x.value;
      default: {
        std::vector<int> c;
        for (char v : x.vars) c.push_back(val.at(v));
        return ops.at(x.operand).at(c);
      }
    }
  }

  std::string out_vars_;
  std::vector<node> nodes_;
  int root_ = -1;
};

// ---- the runner ---------------------------------------------------------
class runner {
 public:
  runner(int argc, char** argv) {
    for (int a = 1; a < argc; ++a) {
      const std::string arg = argv[a];
      if (arg.rfind("--trials=", 0) == 0) trials_ = std::stoi(arg.substr(9));
      if (arg.rfind("--seed=", 0) == 0) seed_ = std::stoull(arg.substr(7));
      if (arg.rfind("--case=", 0) == 0) only_ = std::stoi(arg.substr(7));
    }
  }
  [[nodiscard]] int trials() const { return trials_; }
  [[nodiscard]] bool selected(int id) const { return only_ < 0 || only_ == id; }

  /// Starts a statement: its text, output variables, the variables' extent
  /// classes (variables that index one tensor's dimension share one), the
  /// expression in prefix form.
  void begin(int id, std::string text, std::string out_vars, std::string vars, std::vector<int> classes,
             std::string prefix) {
    id_ = id;
    text_ = std::move(text);
    out_vars_ = std::move(out_vars);
    vars_ = std::move(vars);
    classes_ = std::move(classes);
    prefix_ = std::move(prefix);
    ++statements_;
    failed_case_ = false;
  }
  /// Draws the extents and the data sizes of trial t (0..4 per variable;
  /// the first trials force all-zero, all-one and one zero extent).
  void trial(int t) {
    trial_ = t;
    rng_.seed(seed_ * 1000003u + static_cast<unsigned>(id_) * 7919u + static_cast<unsigned>(t));
    ops_.clear();
    std::map<int, int> class_ext;
    std::uniform_int_distribution<int> e04(0, 4), e15(1, 5);
    for (std::size_t v = 0; v < vars_.size(); ++v) {
      const int c = classes_[v];
      if (!class_ext.count(c)) {
        int e;
        if (t == 0)
          e = 1;
        else if (t == 1)
          e = 0;
        else if (t == 2)
          e = (c == classes_[0]) ? 0 : 2;
        else if (t % 3 == 0)
          e = e15(rng_);
        else
          e = e04(rng_) == 0 ? 0 : e15(rng_);
        class_ext[c] = e;
      }
      ext_[vars_[v]] = class_ext[c];
    }
    density_ = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
    ++trials_run_;
  }
  [[nodiscard]] int ext(char v) const { return ext_.at(v); }

  /// A tensor of format F for operand `id` accessed with `vars`, from a
  /// random coordinate list (the dense copy is kept for the interpreter).
  template <class F>
  tensor<double, F> operand(int id, std::string_view vars) {
    auto list = random_list(vars, ops_[id], single_entry_fibres<F>);
    return pack<F>(list);
  }
  scalar<double> scalar_operand(int id) {
    dense_operand& d = ops_[id];
    d.data = {static_cast<double>(value())};
    return scalar<double>(d.data[0]);
  }
  /// The output, holding random data first (checks that `=` overwrites
  /// and `+=` adds); its dense copy is the initial value for `+=`.
  template <class F>
  tensor<double, F> output(std::string_view vars) {
    out_single_ = single_entry_fibres<F>;
    auto list = random_list(vars, initial_, single_entry_fibres<F>);
    return pack<F>(list);
  }
  scalar<double> scalar_output() {
    initial_.dims.clear();
    initial_.data = {static_cast<double>(value())};
    return scalar<double>(initial_.data[0]);
  }

  template <class T>
  void check(const T& out, bool accumulate) {
    const interpreter in(prefix_, out_vars_);
    std::vector<double> expected = in.run(ops_, ext_);
    if (accumulate)
      for (std::size_t q = 0; q < expected.size(); ++q) expected[q] += initial_.data[q];
    std::vector<double> got(expected.size(), 0.0);
    std::string bad;
    if constexpr (requires { out.value(); }) {
      got[0] = out.value();
    } else {
      constexpr std::size_t N = T::order;
      for (std::size_t d = 0; d < N; ++d)
        if (out.dims()[d] != ext_.at(out_vars_[d])) bad = "output dimension " + std::to_string(d) + " changed";
      for_each_component(out, [&](const auto& x, double v) {
        std::size_t idx = 0;
        for (std::size_t d = 0; d < N; ++d) {
          if (x[d] < 0 || x[d] >= out.dims()[d]) {
            bad = "stored coordinate " + std::to_string(x[d]) + " outside dimension " + std::to_string(d);
            return;
          }
          idx = idx * static_cast<std::size_t>(out.dims()[d]) + static_cast<std::size_t>(x[d]);
        }
        got[idx] += v;
      });
    }
    if (bad.empty())
      for (std::size_t q = 0; q < expected.size() && bad.empty(); ++q)
        if (got[q] != expected[q])
          bad = "component " + std::to_string(q) + " (row-major) is " + std::to_string(got[q]) + ", expected " +
                std::to_string(expected[q]);
    if (bad.empty()) {
      ++checked_;
      return;
    }
    fail(bad);
  }

  /// A run-time error from the library during a trial: documented refusals
  /// (a format that cannot hold the drawn shape) are counted; any other
  /// error is a failure.
  void error(const std::exception& e) {
    const std::string what = e.what();
    if (what.find("cannot hold a tensor with that empty dimension") != std::string::npos ||
        (out_single_ && what.find("the data does not fit this format") != std::string::npos)) {
      ++unrepresentable_;
      return;
    }
    fail(std::string("unexpected exception: ") + what);
  }

  /// A statement that the library rejected at compile time (the driver
  /// removed it and checked the message).
  void rejected(int id) {
    (void)id;
    ++rejected_;
  }

  int finish() const {
    std::printf("statements: %d run, %d rejected at compile time; trials: %d, checked %d, unrepresentable %d\n",
                statements_, rejected_, trials_run_, checked_, unrepresentable_);
    std::printf("%d passed, %d failed\n", statements_ - failed_statements_, failed_statements_);
    return failed_statements_ == 0 ? 0 : 1;
  }

 private:
  void fail(const std::string& why) {
    std::string shape;
    for (char v : vars_) shape += std::string(1, v) + "=" + std::to_string(ext_.at(v)) + " ";
    std::printf("FAIL case %d trial %d: %s\n  statement: %s\n  extents: %s\n", id_, trial_, why.c_str(),
                text_.c_str(), shape.c_str());
    if (!failed_case_) ++failed_statements_;
    failed_case_ = true;
  }
  int value() {
    // Small integers, zero now and then (explicit zeros must not matter).
    std::uniform_int_distribution<int> d(-3, 3);
    return d(rng_);
  }
  coordinate_list<double> random_list(std::string_view vars, dense_operand& dense, bool single) {
    std::vector<int> dims;
    for (char v : vars) dims.push_back(ext_.at(v));
    dense.dims = dims;
    std::size_t total = 1;
    for (int d : dims) total *= static_cast<std::size_t>(d);
    dense.data.assign(total, 0.0);
    coordinate_list<double> list(std::vector<int>(dims.begin(), dims.end()));
    if (total == 0) return list;
    // Entries: a density drawn per trial (some empty, some full), plus
    // duplicates that pack sums.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<int> x(dims.size(), 0);
    std::vector<bool> touched(total, false);
    for (std::size_t q = 0; q < total; ++q) {
      std::size_t r = q;
      for (std::size_t d = dims.size(); d-- > 0;) {
        x[d] = static_cast<int>(r % static_cast<std::size_t>(dims[d]));
        r /= static_cast<std::size_t>(dims[d]);
      }
      if (u(rng_) >= density_) continue;
      if (single && x.back() != 0 && q > 0) {
        // One entry per fibre: skip unless the fibre is still empty.
        bool taken = false;
        for (std::size_t w = q - static_cast<std::size_t>(x.back()); w < q && !taken; ++w) taken = dense.data[w] != 0 || touched[w];
        if (taken) continue;
      }
      touched[q] = true;
      const int copies = u(rng_) < 0.15 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        const int v = value();
        list.push_back(std::span<const int>(x), static_cast<double>(v));
        dense.data[q] += v;
      }
    }
    // Shuffle the entries (pack must not rely on input order).
    std::vector<std::size_t> perm(list.size());
    for (std::size_t q = 0; q < perm.size(); ++q) perm[q] = q;
    std::shuffle(perm.begin(), perm.end(), rng_);
    coordinate_list<double> out(std::vector<int>(dims.begin(), dims.end()));
    for (std::size_t q : perm) out.push_back(list.coords(q), list.value(q));
    return out;
  }

  int trials_ = 12;
  unsigned long long seed_ = 1;
  int only_ = -1;
  std::mt19937_64 rng_;
  int id_ = -1, trial_ = -1;
  std::string text_, out_vars_, vars_, prefix_;
  std::vector<int> classes_;
  std::map<char, int> ext_;
  std::map<int, dense_operand> ops_;
  dense_operand initial_;
  double density_ = 0.5;
  int statements_ = 0, rejected_ = 0, trials_run_ = 0, checked_ = 0, unrepresentable_ = 0, failed_statements_ = 0;
  bool failed_case_ = false;
  bool out_single_ = false;
};

}  // namespace tlrand
