#!/usr/bin/env python3
"""Generative differential tester for tensorlev statements.

Generates random index-notation statements (expression trees of sums,
differences, products, negation and constants over operands and outputs
drawn from every format, with transposed and broadcast accesses, repeated
operands, terms with different reductions, `=` and `+=`), writes them as
C++ translation units over tests/random/harness.hpp (a quarter of the
tensor operands through borrowed views), compiles and runs
them. Every statement is either rejected at compile time with one of the
library's own static_assert messages (checked against include/) or must
equal the harness's dense interpreter on every trial (random extents 0..5,
random data with duplicates and explicit zeros).

  statements.py run --seeds 1-4 [--per-tu 16] [--jobs 2] [--sanitize] [--trials 12] [--cxx clang++]
  statements.py regressions            # the kept minimal failures
  statements.py show --seed 7          # print the statements of a seed

A failing statement is shrunk (subtrees replaced by children, formats by
dense ones, += by =) to a minimal one, printed, and with --keep appended to
tests/random/regressions.json, which CI runs on every commit.
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
INCLUDE = os.environ.get("TL_INCLUDE", os.path.join(ROOT, "include"))

FORMATS = {
    1: ["dense_vector", "sparse_vector", "hash_vector"],
    2: ["dense_row_major", "dense_col_major", "coo", "coo_aos", "csr", "csc", "dcsr", "dcsc", "ell", "dia",
        "bcsr<2>", "bcsr<3>", "csb<2>", "sell<3>", "grouped_rows<3>", "hash_rows", "hashed_csr", "hash_cols", "csr_unsorted"],
    3: ["dense_tensor<3>", "dense_tensor_col_major<3>", "coo_tensor<3>", "coo_aos_tensor<3>", "coo_210", "csf",
        "csf_201", "csf_120", "mode_generic", "dense_sparse_sparse", "dense_dense_hashed", "padded3"],
    4: ["dense_tensor<4>", "coo_tensor<4>", "csf_tensor<4>", "coo_aos_tensor<4>"],
}
DENSE = {1: "dense_vector", 2: "dense_row_major", 3: "dense_tensor<3>", 4: "dense_tensor<4>"}
OUT_VARS = "ijkl"
RED_VARS = "mn"


# ---- statements as plain data ------------------------------------------------
# tree: ["a", operand id, vars] | ["c", value] | ["n", t] | [op, t, t] (op in + - *)
# spec: {"out_fmt", "out_vars", "acc", "ops": {id: {"fmt", "order"}}, "tree"}

def gen_statement(rng):
    r = rng.choices([0, 1, 2, 3, 4], weights=[1.2, 3, 5, 2.2, 0.6])[0]
    out_vars = OUT_VARS[:r]
    spec = {"out_vars": out_vars, "out_fmt": rng.choice(FORMATS[r]) if r else "scalar",
            "acc": rng.random() < 0.3, "ops": {}}
    red_pool = RED_VARS[: rng.choice([0, 1, 1, 2])]
    state = {"accesses": 0}

    def access():
        state["accesses"] += 1
        ops = spec["ops"]
        if ops and rng.random() < 0.2:  # a repeated operand, maybe transposed
            oid = rng.choice(sorted(ops))
            order = ops[oid]["order"]
        else:
            oid = len(ops) + 1
            order = None
        pool = list(out_vars + red_pool)
        if order is None:
            hi = min(4, len(pool))
            if hi == 0:
                order = 0
            else:
                weights = [0.3, 3, 4, 2, 0.6][: hi + 1]
                order = rng.choices(range(hi + 1), weights=weights)[0]
            if order > 0:
                ops[oid] = {"fmt": rng.choice(FORMATS[order]), "order": order}
            else:
                ops[oid] = {"fmt": "scalar", "order": 0}
        if order > len(pool):
            return ["c", float(rng.randint(-3, 3))]
        # Prefer output variables (fewer statements that reduce everything).
        outs = [v for v in out_vars]
        rng.shuffle(outs)
        reds = list(red_pool)
        rng.shuffle(reds)
        chosen = []
        for v in outs + reds:
            if len(chosen) < order and (v in out_vars and rng.random() < 0.85 or v not in out_vars):
                chosen.append(v)
        for v in outs + reds:
            if len(chosen) < order and v not in chosen:
                chosen.append(v)
        rng.shuffle(chosen) if rng.random() < 0.35 else None
        return ["a", oid, "".join(chosen)]

    def tree(depth):
        if depth == 0 or state["accesses"] >= 5 or rng.random() < 0.3:
            if rng.random() < 0.08:
                return ["c", float(rng.choice([-2, -1, 2, 3]))]
            return access()
        op = rng.choices(["+", "-", "*", "n"], weights=[3, 2, 4, 1.2])[0]
        if op == "n":
            return ["n", tree(depth - 1)]
        return [op, tree(depth - 1), tree(depth - 1)]

    # Run on the chunked executor (the parallel code paths, chunks out of
    # order on one thread) or serially.
    spec["exec"] = "chunked" if rng.random() < 0.4 else "serial"
    spec["tree"] = tree(rng.choice([1, 2, 2, 3]))
    if not has_access(spec["tree"]):
        spec["tree"] = ["*", spec["tree"], access()]
    prune_ops(spec)
    # About a quarter of the tensor operands are used through a borrowed
    # view of the packed tensor (storage.hpp). Drawn from the statement
    # itself, so each seed's statements stay what they were.
    vr = random.Random(json.dumps(spec, sort_keys=True))
    for o in spec["ops"].values():
        if o["order"] > 0 and vr.random() < 0.25:
            o["view"] = True
    return spec


def has_access(t):
    if t[0] == "a":
        return True
    if t[0] == "c":
        return False
    return any(has_access(c) for c in t[1:])


def prune_ops(spec):
    used = set()

    def walk(t):
        if t[0] == "a":
            used.add(t[1])
        elif t[0] != "c":
            for c in t[1:]:
                walk(c)
    walk(spec["tree"])
    spec["ops"] = {k: v for k, v in spec["ops"].items() if k in used}


# ---- rendering -------------------------------------------------------------------

def cxx_expr(t):
    k = t[0]
    if k == "a":
        if len(t[2]) == 0:
            return f"S{t[1]}()"
        return f"T{t[1]}({', '.join(t[2])})"
    if k == "c":
        return repr(float(t[1]))
    if k == "n":
        if not has_access(t[1]):
            return "(" + cxx_expr(["c", -const_value(t[1])]) + ")"
        return f"-({cxx_expr(t[1])})"
    a, b = t[1], t[2]
    if not has_access(a) and not has_access(b):
        return repr(float(const_value(t)))
    return f"({cxx_expr(a)} {k} {cxx_expr(b)})"


def const_value(t):
    k = t[0]
    if k == "c":
        return t[1]
    if k == "n":
        return -const_value(t[1])
    a, b = const_value(t[1]), const_value(t[2])
    return a + b if k == "+" else a - b if k == "-" else a * b


def prefix(t):
    k = t[0]
    if k == "a":
        return f"a{t[1]}:{t[2]}"
    if k == "c":
        return f"c{float(t[1])!r}"
    if k == "n":
        return "n " + prefix(t[1])
    return f"{k} {prefix(t[1])} {prefix(t[2])}"


def accesses(t, out):
    if t[0] == "a":
        out.append(t)
    elif t[0] != "c":
        for c in t[1:]:
            accesses(c, out)
    return out


def var_classes(spec):
    """Variables in order of appearance and their extent classes: the
    variables indexing one dimension of one operand share an extent."""
    parent = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    def union(a, b):
        parent[find(a)] = find(b)
    vars_ = list(spec["out_vars"])
    for a in accesses(spec["tree"], []):
        for d, v in enumerate(a[2]):
            if v not in vars_:
                vars_.append(v)
            union(("v", v), ("d", a[1], d))
    roots = {}
    classes = []
    for v in vars_:
        r = find(("v", v))
        classes.append(roots.setdefault(r, len(roots)))
    return "".join(vars_), classes


def text(spec):
    lhs = "O(" + ", ".join(spec["out_vars"]) + ")"
    fmts = [f"O: {spec['out_fmt']}"] + [f"{'S' if o['order'] == 0 else 'T'}{k}: {o['fmt']}{' view' if o.get('view') else ''}"
                                         for k, o in sorted(spec["ops"].items())]
    on = " on the chunked executor" if spec.get("exec") == "chunked" else ""
    return f"{lhs} {'+=' if spec['acc'] else '='} {cxx_expr(spec['tree'])}   [{'; '.join(fmts)}]{on}"


def cxx_case(cid, spec):
    vars_, classes = var_classes(spec)
    lines = [f"static void case_{cid}(runner& R) {{",
             f"  R.begin({cid}, {json.dumps(text(spec))}, \"{spec['out_vars']}\", \"{vars_}\", "
             f"{{{', '.join(map(str, classes))}}}, \"{prefix(spec['tree'])}\");",
             "  for (int t = 0; t < R.trials(); ++t) {",
             "    R.trial(t);",
             "    try {"]
    first_vars = {}
    for a in accesses(spec["tree"], []):
        first_vars.setdefault(a[1], a[2])
    for oid, o in sorted(spec["ops"].items()):
        if o["order"] == 0:
            lines.append(f"      auto S{oid} = R.scalar_operand({oid});")
        else:
            if o.get("view"):
                lines.append(f"      auto T{oid}_own = R.operand<{o['fmt']}>({oid}, \"{first_vars[oid]}\");")
                lines.append(f"      const auto T{oid} = tensorlev::view(T{oid}_own);")
            else:
                lines.append(f"      auto T{oid} = R.operand<{o['fmt']}>({oid}, \"{first_vars[oid]}\");")
    if spec["out_vars"]:
        lines.append(f"      auto O = R.output<{spec['out_fmt']}>(\"{spec['out_vars']}\");")
        lhs = "O(" + ", ".join(spec["out_vars"]) + ")"
    else:
        lines.append("      auto O = R.scalar_output();")
        lhs = "O()"
    if spec.get("exec") == "chunked":
        fn = "compute_add" if spec["acc"] else "compute"
        lines.append(f"      tensorlev::{fn}(tensorlev::chunked_serial_executor{{}}, {lhs}, {cxx_expr(spec['tree'])});")
    else:
        lines.append(f"      {lhs} {'+=' if spec['acc'] else '='} {cxx_expr(spec['tree'])};")
    lines.append(f"      R.check(O, {'true' if spec['acc'] else 'false'});")
    lines += ["    } catch (const std::exception& e) {", "      R.error(e);", "    }", "  }", "}"]
    return lines


def cxx_tu(cases, rejected):
    """cases: [(cid, spec)]; rejected: set of cids compiled as stubs.
    Returns (source, {cid: (first line, last line)})."""
    lines = ["// Generated by tests/random/statements.py: do not edit.",
             "#include \"harness.hpp\"",
             "using namespace tlrand;",
             "using namespace tensorlev::indices;"]
    span = {}
    for cid, spec in cases:
        start = len(lines) + 1
        if cid in rejected:
            lines.append(f"static void case_{cid}(runner& R) {{ R.rejected({cid}); }}")
        else:
            lines += cxx_case(cid, spec)
        span[cid] = (start, len(lines))
    lines.append("int main(int argc, char** argv) {")
    lines.append("  runner R(argc, argv);")
    for cid, _ in cases:
        lines.append(f"  if (R.selected({cid})) case_{cid}(R);")
    lines.append("  return R.finish();")
    lines.append("}")
    return "\n".join(lines) + "\n", span


# ---- compiling, with compile-time rejections taken out -----------------------

_MESSAGES = None


def documented(message):
    """Whether a compile error message is one of the library's own
    static_assert messages (its start appears in a header under include/)."""
    global _MESSAGES
    if _MESSAGES is None:
        chunks = []
        for d, _, files in os.walk(INCLUDE):
            for f in files:
                if f.endswith(".hpp"):
                    with open(os.path.join(d, f), encoding="utf-8") as fh:
                        chunks.append(fh.read())
        _MESSAGES = "\n".join(chunks)
    m = re.match(r"\s*(tensorlev[^\"]*)", message)
    if not m:
        return False
    head = m.group(1)
    for n in (48, 32, 20):
        if len(head) >= n and head[:n] in _MESSAGES:
            return True
    return len(head) < 20 and head in _MESSAGES


def is_clang(cxx):
    return "clang" in os.path.basename(cxx)


def compiler_flags(sanitize, cxx="g++"):
    flags = ["-std=c++20", "-O0", "-g0", "-w", f"-I{INCLUDE}", f"-I{HERE}"]
    if is_clang(cxx):
        flags += ["-ferror-limit=0"]
    if sanitize:
        flags += ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-sanitize=alignment"]
    return flags


def compile_tu(cases, workdir, name, cxx, sanitize):
    """Compiles the cases, taking out those the compiler rejects. Returns
    (binary or None, {cid: message}, [bad compile errors])."""
    rejected = {}
    bad = []
    src = os.path.join(workdir, name + ".cpp")
    exe = os.path.join(workdir, name)
    for _ in range(len(cases) + 1):
        code, span = cxx_tu(cases, set(rejected))
        with open(src, "w") as fh:
            fh.write(code)
        p = subprocess.run([cxx] + compiler_flags(sanitize, cxx) + [src, "-o", exe], capture_output=True, text=True)
        if p.returncode == 0:
            return exe, rejected, bad
        by_case = clang_errors_by_case if is_clang(cxx) else errors_by_case
        found = by_case(p.stderr, os.path.basename(src), span)
        if not found:
            bad.append(("?", "compiler failed without a case: " + p.stderr[-3000:]))
            return None, rejected, bad
        for cid, msg in found.items():
            rejected[cid] = msg
            if not documented(msg):
                bad.append((cid, msg))
    return None, rejected, bad


def case_at(span, line_no):
    """The case whose generated lines hold line_no, or None."""
    for cid, (a, b) in span.items():
        if a <= line_no <= b:
            return cid
    return None


def errors_by_case(stderr, srcname, span):
    """{case id: first error message} from g++'s output: an error belongs
    to the case whose lines hold the last reference to the generated file
    before it (the 'required from here' of its instantiation)."""
    found = {}
    last = None
    ref = re.compile(re.escape(srcname) + r":(\d+):")
    for line in stderr.splitlines():
        m = ref.search(line)
        if m:
            c = case_at(span, int(m.group(1)))
            if c is not None:
                last = c
        e = re.search(r"error: (.*)", line)
        if e and last is not None and last not in found:
            msg = e.group(1)
            s = re.search(r"static assertion failed: (.*)", msg)
            found[last] = s.group(1) if s else msg
    return found


def clang_errors_by_case(stderr, srcname, span):
    """{case id: first error message} from clang's output, where the error
    comes first and the notes after it lead back to the generated file:
    an error belongs to the case of the first reference after it (or on
    its own line)."""
    found = {}
    pending = None
    ref = re.compile(re.escape(srcname) + r":(\d+):")
    for line in stderr.splitlines():
        e = re.search(r"error: (.*)", line)
        if e:
            msg = e.group(1)
            s = re.search(r'static_assert(?:ion)? failed.*?"(tensorlev: .*)"\s*$', msg) or \
                re.search(r"static_assert(?:ion)? failed.*?: (tensorlev: .*)$", msg)
            pending = s.group(1) if s else msg
        m = ref.search(line)
        if m and pending is not None and not line.startswith("In file included"):
            c = case_at(span, int(m.group(1)))
            if c is not None:
                found.setdefault(c, pending)
                pending = None
    return found


def run_binary(exe, trials, seed, case=None, timeout=600):
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    cmd = [exe, f"--trials={trials}", f"--seed={seed}"] + ([f"--case={case}"] if case is not None else [])
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out"
    return p.returncode == 0, p.stdout + p.stderr


def brief(output):
    """The lines of a run worth printing: failures and sanitizer summaries."""
    keep = [l for l in output.splitlines()
            if l.startswith(("FAIL", "  statement", "  extents", "SUMMARY", "timed out")) or "runtime error" in l]
    return "\n".join(keep[:40])


def run_cases(exe, cids, trials, seed):
    """Runs every case; after a crash, each case alone. Returns (counts,
    {case: brief failure text})."""
    counts = {"trials": 0, "checked": 0, "unrepresentable": 0}
    failed = {}

    def parse(out):
        m = re.search(r"trials: (\d+), checked (\d+), unrepresentable (\d+)", out)
        if m:
            for k, v in zip(("trials", "checked", "unrepresentable"), map(int, m.groups())):
                counts[k] += v
        for c in re.findall(r"FAIL case (\d+)", out):
            failed.setdefault(int(c), brief(out))
    ok, out = run_binary(exe, trials, seed)
    if ok or re.search(r"^\d+ passed, \d+ failed$", out, re.M):
        parse(out)
        return counts, failed
    for c in cids:
        ok, out = run_binary(exe, trials, seed, case=c)
        parse(out)
        if not ok and c not in failed:
            failed[c] = brief(out) or out[-2000:]
    return counts, failed


# ---- one batch -----------------------------------------------------------------

def batch(seed, per_tu, workdir, cxx, sanitize, trials):
    rng = random.Random(seed)
    cases = [(c, gen_statement(rng)) for c in range(per_tu)]
    return compile_and_run(cases, workdir, f"stmts_{seed}", cxx, sanitize, trials, seed)


def compile_and_run(cases, workdir, name, cxx, sanitize, trials, seed):
    t0 = time.time()
    exe, rejected, bad = compile_tu(cases, workdir, name, cxx, sanitize)
    t1 = time.time()
    result = {"seed": seed, "generated": len(cases), "rejected": rejected, "bad_errors": bad,
              "compile_s": t1 - t0, "failed": {}, "specs": dict(cases)}
    if exe is None:
        result["failed"] = {c: "did not compile" for c, _ in cases if c not in rejected}
    else:
        counts, result["failed"] = run_cases(exe, [c for c, _ in cases if c not in rejected], trials, seed)
        result.update(counts)
    result["run_s"] = time.time() - t1
    result["ok"] = not result["failed"] and not bad
    return result


# ---- shrinking -------------------------------------------------------------------

def candidates(spec):
    """Smaller or simpler variants of a statement, most reducing first."""
    out = []
    paths = []

    def walk(t, path):
        paths.append((path, t))
        if t[0] not in ("a", "c"):
            for n, c in enumerate(t[1:]):
                walk(c, path + [n + 1])
    walk(spec["tree"], [])

    def replaced(path, new):
        s = json.loads(json.dumps(spec))
        if not path:
            s["tree"] = new
        else:
            t = s["tree"]
            for p in path[:-1]:
                t = t[p]
            t[path[-1]] = new
        s["ops"] = {int(k): v for k, v in s["ops"].items()}
        prune_ops(s)
        return s
    for path, t in paths:
        if t[0] not in ("a", "c"):
            for c in t[1:]:
                if has_access(c):
                    out.append(replaced(path, c))
    if spec.get("exec") == "chunked":
        s = json.loads(json.dumps(spec))
        s["exec"] = "serial"
        s["ops"] = {int(k): v for k, v in s["ops"].items()}
        out.append(s)
    if spec["acc"]:
        s = json.loads(json.dumps(spec))
        s["acc"] = False
        s["ops"] = {int(k): v for k, v in s["ops"].items()}
        out.append(s)
    for oid, o in sorted(spec["ops"].items()):
        if o.get("view"):
            s = json.loads(json.dumps(spec))
            s["ops"] = {int(k): v for k, v in s["ops"].items()}
            del s["ops"][oid]["view"]
            out.append(s)
    for oid, o in sorted(spec["ops"].items()):
        if o["order"] > 0 and o["fmt"] != DENSE[o["order"]]:
            s = json.loads(json.dumps(spec))
            s["ops"] = {int(k): v for k, v in s["ops"].items()}
            s["ops"][oid]["fmt"] = DENSE[o["order"]]
            out.append(s)
    r = len(spec["out_vars"])
    if r and spec["out_fmt"] != DENSE[r]:
        s = json.loads(json.dumps(spec))
        s["ops"] = {int(k): v for k, v in s["ops"].items()}
        s["out_fmt"] = DENSE[r]
        out.append(s)
    return out


def still_fails(spec, workdir, cxx, sanitize, trials, seed):
    exe, rejected, bad = compile_tu([(0, spec)], workdir, "shrink", cxx, sanitize)
    if exe is None:
        return bool(bad)  # a bad compile error is the failure being shrunk
    ok, _ = run_binary(exe, trials, seed)
    return not ok


def shrink(spec, workdir, cxx, sanitize, trials, seed, budget_s=600):
    start = time.time()
    progress = True
    while progress and time.time() - start < budget_s:
        progress = False
        for c in candidates(spec):
            if still_fails(c, workdir, cxx, sanitize, trials, seed):
                spec = c
                progress = True
                break
    return spec


# ---- commands -----------------------------------------------------------------------

def parse_seeds(s):
    out = []
    for part in s.split(","):
        if "-" in part:
            a, b = part.split("-")
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def report(results, elapsed):
    gen = sum(r["generated"] for r in results)
    rej = sum(len(r["rejected"]) for r in results)
    failed = sum(len(r["failed"]) for r in results)
    bad = sum(len(r["bad_errors"]) for r in results)
    trials = sum(r.get("trials", 0) for r in results)
    checked = sum(r.get("checked", 0) for r in results)
    unrep = sum(r.get("unrepresentable", 0) for r in results)
    msgs = {}
    for r in results:
        for m in r["rejected"].values():
            key = m[:90]
            msgs[key] = msgs.get(key, 0) + 1
    print(f"statements: {gen} generated, {gen - rej} compiled and run, {rej} rejected at compile time "
          f"({bad} not with a documented message); trials {trials}, checked equal {checked}, "
          f"unrepresentable shapes {unrep}; failing statements {failed}; {elapsed:.0f} s")
    for m, n in sorted(msgs.items(), key=lambda x: -x[1]):
        print(f"  rejected {n:5d}x: {m}")
    return failed + bad


def cmd_run(args):
    seeds = parse_seeds(args.seeds)
    workdir = args.workdir or tempfile.mkdtemp(prefix="tl-statements-")
    os.makedirs(workdir, exist_ok=True)
    t0 = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futs = [pool.submit(batch, s, args.per_tu, workdir, args.cxx, args.sanitize, args.trials) for s in seeds]
        for f in concurrent.futures.as_completed(futs):
            r = f.result()
            results.append(r)
            status = "ok" if r["ok"] else "FAILED"
            print(f"seed {r['seed']}: {r['generated']} statements, {len(r['rejected'])} rejected, "
                  f"{r.get('checked', 0)} of {r.get('trials', 0)} trials checked, "
                  f"compile {r['compile_s']:.0f} s, run {r.get('run_s', 0):.1f} s: {status}", flush=True)
            for cid, msg in r["bad_errors"]:
                print(f"  case {cid}: compile error without a documented message: {msg}")
            for cid, why in sorted(r["failed"].items()):
                print(f"  case {cid}: {text(r['specs'][cid])}\n" + "\n".join("    " + l for l in why.splitlines()))
    for r in results:
        for cid in r["failed"]:
            spec = r["specs"][cid]
            print(f"shrinking seed {r['seed']} case {cid}: {text(spec)}", flush=True)
            small = shrink(spec, os.path.join(workdir, f"shrink_{r['seed']}_{cid}"), args.cxx, args.sanitize,
                           args.trials, r["seed"]) if args.shrink else spec
            print(f"  minimal: {text(small)}")
            print(f"  spec: {json.dumps(small)}")
            if args.keep:
                keep(small, f"seed {r['seed']} case {cid}")
    return 1 if report(results, time.time() - t0) else 0


def keep(spec, origin):
    path = os.path.join(HERE, "regressions.json")
    data = json.load(open(path)) if os.path.exists(path) else []
    data.append({"origin": origin, "spec": spec})
    with open(path, "w") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")


def load_spec(s):
    s = dict(s)
    s["ops"] = {int(k): v for k, v in s["ops"].items()}
    return s


def cmd_regressions(args):
    path = os.path.join(HERE, "regressions.json")
    specs = [load_spec(e["spec"]) for e in json.load(open(path))]
    workdir = args.workdir or tempfile.mkdtemp(prefix="tl-regressions-")
    os.makedirs(workdir, exist_ok=True)
    # Compiled in one TU per job so that every core works.
    chunks = [list(enumerate(specs))[i::args.jobs] for i in range(args.jobs)]
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda a: compile_and_run(a[1], workdir, f"regressions_{a[0]}", args.cxx,
                                                          args.sanitize, args.trials, 1), enumerate(chunks)))
    for r in results:
        for cid, why in sorted(r["failed"].items()):
            print(f"regression {cid}: {text(r['specs'][cid])}\n" + "\n".join("    " + l for l in why.splitlines()))
        for cid, msg in r["bad_errors"]:
            print(f"regression {cid}: compile error without a documented message: {msg}")
    return 1 if report(results, time.time() - t0) else 0


def cmd_show(args):
    rng = random.Random(args.seed)
    for c in range(args.per_tu):
        print(c, text(gen_statement(rng)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("run", "regressions", "show"):
        p = sub.add_parser(name)
        p.add_argument("--seeds", default="1")
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--per-tu", type=int, default=16)
        p.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1))
        p.add_argument("--trials", type=int, default=12)
        p.add_argument("--sanitize", action="store_true", help="ASan + UBSan (as CI)")
        p.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
        p.add_argument("--workdir")
        p.add_argument("--no-shrink", dest="shrink", action="store_false")
        p.add_argument("--keep", action="store_true", help="append shrunk failures to regressions.json")
    args = ap.parse_args()
    sys.exit({"run": cmd_run, "regressions": cmd_regressions, "show": cmd_show}[args.cmd](args) or 0)


if __name__ == "__main__":
    main()
