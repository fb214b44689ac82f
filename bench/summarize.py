#!/usr/bin/env python3
"""Summary tables (Markdown) of the suite's Google Benchmark JSON files.

Usage: bench/summarize.py results/*.json

Names are <kernel>/<impl>/<format>/<matrix>[/real_time]. Each figure is the
fastest repetition (minimum wall time). Ratios are times divided by
tensorlev's serial time (above 1: tensorlev is faster), except `2-thread
speedup` (serial time / 2-thread time) and `BW` (the fraction of the STREAM
triad bandwidth, measured in the same run with the same thread count, that
the kernel's least memory traffic reaches). `best peer` is the fastest of
the library peers measured (Eigen, Kokkos Kernels, MKL, CXSparse; SPLATT for
MTTKRP), not the hand-written loop. CXSparse stores CSC only: its figures
(format `csc`) sit on the CSR rows.
"""
import json
import sys
from collections import defaultdict

SCALE = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load(paths):
    best = {}  # name -> (ms, bytes_per_second, counters)
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") == "aggregate" or b.get("error_occurred"):
                continue
            name = b.get("run_name", b["name"])
            if name.endswith("/real_time"):
                name = name[: -len("/real_time")]
            ms = b["real_time"] * SCALE[b.get("time_unit", "ns")]
            if name not in best or ms < best[name][0]:
                best[name] = (ms, b.get("bytes_per_second", 0.0), b)
    return best


def fmt_ms(v):
    if v is None:
        return "–"
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "–"


def main(paths):
    best = load(paths)
    rows = defaultdict(dict)  # (kernel, format, matrix) -> impl -> (ms, bps, bench)
    triad = {}
    for name, v in best.items():
        parts = name.split("/")
        if parts[0] == "stream":
            triad[parts[2]] = v[1]
            continue
        if len(parts) < 4:
            continue
        kernel, impl, fmt, matrix = parts[0], parts[1], parts[2], "/".join(parts[3:])
        if impl == "cxsparse" and fmt == "csc":
            fmt = "csr"
        rows[(kernel, fmt, matrix)][impl] = v

    def t(r, impl):
        return r[impl][0] if impl in r else None

    def nnz(r):
        for v in r.values():
            n = v[2].get("nnz")
            if n:
                return f"{n:.3g}"
        return "?"

    out = []
    if triad:
        out.append("STREAM triad: " + ", ".join(
            f"{k} {v / 1e9:.1f} GB/s" for k, v in sorted(triad.items())) + "\n")

    peer_names = {"eigen": "Eigen", "kokkos_kernels": "KK", "mkl": "MKL", "cxsparse": "CXSparse",
                  "mkl_sorted": "MKL sorted", "splatt": "SPLATT"}

    def best(r, impls):
        got = [(r[i][0], peer_names[i]) for i in impls if i in r]
        return min(got) if got else (None, "–")

    out.append("### SpMV (ms; ratios are peer / tensorlev)\n")
    out.append("| matrix | nnz | format | hand | Eigen | KK | MKL | CXSparse | tensorlev | 2 threads | best peer "
               "| vs best peer | vs hand | 2-thread speedup | BW serial | BW 2 threads |")
    out.append("|" + "---|" * 16)
    for (kernel, fmt, matrix), r in sorted(rows.items(), key=lambda x: (x[0][2], x[0][1])):
        if kernel != "spmv":
            continue
        tl, tl2 = t(r, "tensorlev"), t(r, "tensorlev_kokkos")
        if fmt == "csr_long_rows":  # CSR's arrays with a code-generation hint: CSR's hand loop and peers
            r = {**rows.get((kernel, "csr", matrix), {}), **r}
        elif fmt in ("dcsr", "sell8", "sell8s", "rows4", "rows8", "diab16"):  # another format: against the CSR peers, own hand loop
            r = {**{k: v for k, v in rows.get((kernel, "csr", matrix), {}).items() if k in peer_names}, **r}
        bt, bn = best(r, ("eigen", "kokkos_kernels", "mkl", "cxsparse"))
        bw1 = ratio(r["tensorlev"][1], triad.get("serial")) if "tensorlev" in r else "–"
        bw2 = ratio(r["tensorlev_kokkos"][1], triad.get("kokkos")) if "tensorlev_kokkos" in r else "–"
        out.append(f"| {matrix} | {nnz(r)} | {fmt} | {fmt_ms(t(r, 'hand'))} | {fmt_ms(t(r, 'eigen'))} | "
                   f"{fmt_ms(t(r, 'kokkos_kernels'))} | {fmt_ms(t(r, 'mkl'))} | {fmt_ms(t(r, 'cxsparse'))} | "
                   f"{fmt_ms(tl)} | {fmt_ms(tl2)} | {bn} | {ratio(bt, tl)} | {ratio(t(r, 'hand'), tl)} | "
                   f"{ratio(tl, tl2)} | {bw1} | {bw2} |")

    out.append("\n### One COO product: direct vs convert to CSR then multiply (seed 003, Figure 14)\n")
    out.append("| matrix | nnz | direct (ms) | convert + multiply (ms) | ratio |")
    out.append("|---|---|---|---|---|")
    for (kernel, fmt, matrix), r in sorted(rows.items(), key=lambda x: x[0][2]):
        if kernel == "spmv_once":
            d, c = t(r, "tensorlev_direct"), t(r, "tensorlev_convert")
            out.append(f"| {matrix} | {nnz(r)} | {fmt_ms(d)} | {fmt_ms(c)} | {ratio(c, d)} |")

    out.append("\n### Sparse add C = A + A^T (CSR) (ms; ratios are peer / tensorlev)\n")
    out.append("| matrix | nnz | hand | Eigen | KK | MKL | CXSparse | tensorlev | 2 threads | best peer | vs best peer | "
               "vs hand | 2-thread speedup |")
    out.append("|" + "---|" * 13)
    for (k, fmt, matrix), r in sorted(rows.items(), key=lambda x: x[0][2]):
        if k != "add" or fmt != "csr":
            continue
        tl, tl2 = t(r, "tensorlev"), t(r, "tensorlev_kokkos")
        bt, bn = best(r, ("eigen", "kokkos_kernels", "mkl", "cxsparse"))
        out.append(f"| {matrix} | {nnz(r)} | {fmt_ms(t(r, 'hand'))} | {fmt_ms(t(r, 'eigen'))} | "
                   f"{fmt_ms(t(r, 'kokkos_kernels'))} | {fmt_ms(t(r, 'mkl'))} | {fmt_ms(t(r, 'cxsparse'))} | "
                   f"{fmt_ms(tl)} | {fmt_ms(tl2)} | {bn} | {ratio(bt, tl)} | {ratio(t(r, 'hand'), tl)} | "
                   f"{ratio(tl, tl2)} |")

    # tensorlev's CSR output is sorted: `vs best sorted` compares it with the
    # peers whose rows (columns) come out sorted (Eigen, Kokkos Kernels'
    # serial algorithm, MKL + mkl_sparse_order); MKL's unsorted product and
    # CXSparse's (unsorted columns) are the targets of an unsorted path.
    out.append("\n### SpGEMM C = A * A (CSR) (ms; ratios are peer / tensorlev)\n")
    out.append("| matrix | nnz | hand | Eigen | KK | CXSparse (unsorted) | MKL (unsorted) | MKL sorted | tensorlev "
               "(sorted) | 2 threads | tensorlev unsorted | 2 threads | numeric only | 2 threads | numeric_plan | "
               "2 threads | new C each time | "
               "2 threads | best sorted peer | vs best sorted | new C vs best sorted | unsorted vs MKL unsorted | "
               "full (sorted) / numeric | full (sorted) / numeric_plan | vs hand | 2-thread speedup |")
    out.append("|" + "---|" * 26)
    for (k, fmt, matrix), r in sorted(rows.items(), key=lambda x: x[0][2]):
        if k != "spgemm" or fmt != "csr":
            continue
        tl, tl2 = t(r, "tensorlev"), t(r, "tensorlev_kokkos")
        u = rows.get((k, "csr_unsorted", matrix), {})
        tu, tu2 = t(u, "tensorlev"), t(u, "tensorlev_kokkos")
        nu = rows.get((k, "csr_numeric", matrix), {})
        tn, tn2 = t(nu, "tensorlev"), t(nu, "tensorlev_kokkos")
        npl = rows.get((k, "csr_numeric_plan", matrix), {})
        tp, tp2 = t(npl, "tensorlev"), t(npl, "tensorlev_kokkos")
        fr = rows.get((k, "csr_fresh", matrix), {})
        tf, tf2 = t(fr, "tensorlev"), t(fr, "tensorlev_kokkos")
        bt, bn = best(r, ("eigen", "kokkos_kernels", "mkl_sorted"))
        out.append(f"| {matrix} | {nnz(r)} | {fmt_ms(t(r, 'hand'))} | {fmt_ms(t(r, 'eigen'))} | "
                   f"{fmt_ms(t(r, 'kokkos_kernels'))} | {fmt_ms(t(r, 'cxsparse'))} | {fmt_ms(t(r, 'mkl'))} | "
                   f"{fmt_ms(t(r, 'mkl_sorted'))} | {fmt_ms(tl)} | {fmt_ms(tl2)} | {fmt_ms(tu)} | {fmt_ms(tu2)} | "
                   f"{fmt_ms(tn)} | {fmt_ms(tn2)} | {fmt_ms(tp)} | {fmt_ms(tp2)} | {fmt_ms(tf)} | {fmt_ms(tf2)} | {bn} | "
                   f"{ratio(bt, tl)} | "
                   f"{ratio(bt, tf)} | {ratio(t(r, 'mkl'), tu)} | "
                   f"{ratio(tl, tn)} | {ratio(tl, tp)} | {ratio(t(r, 'hand'), tl)} | "
                   f"{ratio(tl, tl2)} |")

    out.append("\n### Sparse add C = A + A^T into DCSR (assembled) and hashed rows (inserted) (ms)\n")
    out.append("| matrix | nnz | output | tensorlev | 2 threads | 2-thread speedup |")
    out.append("|" + "---|" * 6)
    for (k, fmt, matrix), r in sorted(rows.items(), key=lambda x: (x[0][2], x[0][1])):
        if k != "add" or fmt == "csr":
            continue
        tl, tl2 = t(r, "tensorlev"), t(r, "tensorlev_kokkos")
        out.append(f"| {matrix} | {nnz(r)} | {fmt} | {fmt_ms(tl)} | {fmt_ms(tl2)} | {ratio(tl, tl2)} |")

    out.append("\n### MTTKRP A(i,r) = B(i,k,l) C(k,r) D(l,r), R = 16 (ms; SPLATT: its default CSF)\n")
    out.append("| tensor | nnz | format | hand | SPLATT | tensorlev | 2 threads | vs SPLATT | vs hand | "
               "2-thread speedup |")
    out.append("|" + "---|" * 10)
    splatt = {m: r["splatt"][0] for (k, f, m), r in rows.items() if k == "mttkrp" and "splatt" in r}
    for (kernel, fmt, matrix), r in sorted(rows.items(), key=lambda x: (x[0][2], x[0][1])):
        if kernel != "mttkrp" or "tensorlev" not in r:
            continue
        tl, tl2 = t(r, "tensorlev"), t(r, "tensorlev_kokkos")
        sp = splatt.get(matrix)
        out.append(f"| {matrix} | {nnz(r)} | {fmt} | {fmt_ms(t(r, 'hand'))} | {fmt_ms(sp)} | {fmt_ms(tl)} | "
                   f"{fmt_ms(tl2)} | {ratio(sp, tl)} | {ratio(t(r, 'hand'), tl)} | {ratio(tl, tl2)} |")

    # Fusion (issue 20): fused against unfused statements, and CG against
    # Eigen and PETSc (per CG iteration: the benchmarks run 20).
    out.append("\n### Fusion: chain c = a + b; d = 2c - a; s = c.d (chain_temp: c and d temporaries), and CG "
               "(ms; CG per iteration; ratios are other / fused tensorlev)\n")
    out.append("| kernel | input | hand | Eigen | PETSc | unfused | fused | unfused 2 threads | fused 2 threads | "
               "unfused / fused | Eigen / fused | PETSc / fused | hand / fused | unfused / fused, 2 threads |")
    out.append("|" + "---|" * 14)
    cg_formats = {"rows8": "grouped rows of 8", "sell8": "SELL-8", "sell8s": "SELL-8-sigma"}
    for (k, fmt, matrix), r in sorted(rows.items(), key=lambda x: (x[0][0], x[0][2], x[0][1])):
        if k not in ("chain", "chain_temp", "cg"):
            continue
        per = 1.0 / 20 if k == "cg" else 1.0
        # CG with A in another format (cg/tensorlev_<f>..., format f: rows8, sell8, sell8s): its own
        # row; the peers (hand, Eigen, PETSc: CSR) from the csr row of the same system.
        other = fmt if k == "cg" and fmt in cg_formats else None
        peers = rows.get((k, "csr", matrix), {}) if other else r

        def tt(impl, src=None):
            if other and src is None:
                impl = impl.replace("tensorlev_kokkos", f"tensorlev_kokkos_{other}") if "kokkos" in impl else \
                    impl.replace("tensorlev", f"tensorlev_{other}")
            v = t(src if src is not None else r, impl)
            return v * per if v is not None else None
        f1, u1, f2, u2 = tt("tensorlev"), tt("tensorlev_unfused"), tt("tensorlev_kokkos"), tt("tensorlev_kokkos_unfused")
        hand, eigen, petsc = tt("hand", peers), tt("eigen", peers), tt("petsc", peers)
        label = f"{matrix} (A as {cg_formats[other]})" if other else matrix
        out.append(f"| {k} | {label} | {fmt_ms(hand)} | {fmt_ms(eigen)} | {fmt_ms(petsc)} | "
                   f"{fmt_ms(u1)} | {fmt_ms(f1)} | {fmt_ms(u2)} | {fmt_ms(f2)} | {ratio(u1, f1)} | "
                   f"{ratio(eigen, f1)} | {ratio(petsc, f1)} | {ratio(hand, f1)} | {ratio(u2, f2)} |")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: summarize.py results/*.json")
    main(sys.argv[1:])
