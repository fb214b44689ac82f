#!/usr/bin/env python3
"""graph-tool's binary graph file (.gt or .gt.gz) -> Matrix Market.

Usage: gt_to_mtx.py GRAPH.gt.gz NAME SOURCE > NAME.mtx

Reads the header and the adjacency lists of the gt format (graph-tool's
documentation, "The gt file format": magic, version 1, endianness, comment,
directed flag, vertex count N, then per vertex an 8-byte out-degree and its
neighbours in 1, 2, 4 or 8 bytes as N needs); property maps after the
adjacency are not read. An undirected graph becomes a real symmetric matrix
(lower triangle), a directed one a real general matrix (row = source). Self
loops and repeated edges are dropped. Entry (i, j), 1-based, gets the value
1 + ((i*7 + j*13) mod 10)/10, as scripts/fetch-bench-matrices.sh gives METIS
graphs. Any malformed input stops with a message naming the file and offset.
"""
import gzip
import struct
import sys


def fail(path, msg):
    sys.exit(f"{path}: {msg}")


def main(path, name, source):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    pos = 0

    def take(n, what):
        nonlocal pos
        if pos + n > len(data):
            fail(path, f"truncated at byte {pos} reading {what}")
        b = data[pos:pos + n]
        pos += n
        return b

    if take(6, "the magic string") != "\u26fe gt".encode():
        fail(path, "not a graph-tool gt file (bad magic string)")
    version, big = take(2, "version and endianness")
    if version != 1:
        fail(path, f"gt version {version}, expected 1")
    order = ">" if big else "<"

    def u64(what):
        return struct.unpack(order + "Q", take(8, what))[0]

    comment_len = u64("the comment length")
    take(comment_len, "the comment")
    directed = take(1, "the directed flag")[0] != 0
    n = u64("the vertex count")
    if n >= 2**31:
        fail(path, f"{n} vertices: over the 32-bit index range")
    width, code = (1, "B") if n <= 2**8 else (2, "H") if n <= 2**16 else (4, "I") if n <= 2**32 else (8, "Q")
    edges = set()
    for v in range(n):
        k = u64(f"vertex {v}'s degree")
        if k > (len(data) - pos) // width:
            fail(path, f"vertex {v}: degree {k} runs past the end of the file (byte {pos})")
        nbrs = struct.unpack(order + code * k, take(width * k, f"vertex {v}'s neighbours"))
        for w in nbrs:
            if w >= n:
                fail(path, f"vertex {v}: neighbour {w} out of range (N = {n})")
            if w == v:
                continue
            edges.add((v, w) if directed else (max(v, w), min(v, w)))
    kind = "general" if directed else "symmetric"
    out = [f"%%MatrixMarket matrix coordinate real {kind}",
           f"% tensorlev bench matrix {name}: graph-tool collection graph {source} "
           f"({n} vertices, {'directed' if directed else 'undirected'}; self loops and repeated edges dropped)",
           "% values: 1 + ((i*7 + j*13) mod 10)/10 for entry (i, j), 1-based",
           f"{n} {n} {len(edges)}"]
    for i, j in sorted(edges):
        out.append(f"{i + 1} {j + 1} {1 + ((i + 1) * 7 + (j + 1) * 13) % 10 / 10:.1f}")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: gt_to_mtx.py GRAPH.gt[.gz] NAME SOURCE")
    main(*sys.argv[1:])
