#!/usr/bin/env bash
# Puts real sparse matrices for the benchmarks into a cache folder, as Matrix
# Market coordinate files (<name>.mtx) that tensorlev::io::read_matrix_market
# reads, plus index.txt with one line per matrix: "name rows cols nnz source"
# (nnz: entries after symmetric expansion, i.e. what the reader returns).
# Reuses the folder when it already holds every file. Prints the folder on its
# last line; progress goes to stderr.
#
# The matrices come from Debian packages (no network but apt): the
# suitesparse source package (SuiteSparse Collection matrices from its
# */Matrix/ folders, the METIS example graphs in metis-5.1.0/graphs converted
# to symmetric matrices with deterministic values), the trilinos source
# package (two Matrix Market files of its tests), and the python3-graph-tool
# binary package (two graphs of graph_tool.collection, converted by
# scripts/lib/gt_to_mtx.py; the package is downloaded, not installed). Only
# these files are extracted.
#
#   name           n x n            nnz  structure
#   bcspwr10        5300 x 5300    21842  HB/bcspwr10: US power network (pattern symmetric)
#   4elt           15606 x 15606   91756  METIS 4elt: 2D finite element mesh graph
#   cage10         11397 x 11397  150645  vanHeukelum/cage10: DNA electrophoresis (Markov chain)
#   bcsstk16        4884 x 4884   290378  HB/bcsstk16: 3D structural FEM stiffness (real symmetric)
#   cond-mat-2005  40421 x 40421  351386  Newman's condensed-matter collaboration network (2005)
#   email-Enron    36692 x 36692  367662  SNAP email-Enron: email communication network
#   nsjac          15444 x 15444  397476  Trilinos Teko's Navier-Stokes Jacobian (nsjac.mm)
#   copter2        55476 x 55476  704476  METIS copter2: 3D finite element mesh graph (helicopter)
#   NotreDame_www 325729 x 325729 929849  Barabasi/NotreDame_www: directed web graph (pattern general)
#   mdual         258569 x 258569 1026264 METIS mdual: dual graph of a 3D finite element mesh
#
# Usage: scripts/fetch-bench-matrices.sh [folder]
#   default folder: ${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/bench-matrices
set -euo pipefail
lib=$(cd "$(dirname "$0")/lib" && pwd)
dest=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorlev/bench-matrices}

# name|converter|package|path inside its archive (after the top folder)|rows|cols|nnz
matrices=(
  "bcspwr10|mtx|suitesparse|Mongoose/Matrix/bcspwr10.mtx|5300|5300|21842"
  "4elt|metis|suitesparse|metis-5.1.0/graphs/4elt.graph|15606|15606|91756"
  "cage10|mtx|trilinos|packages/zoltan/test/hg_cage10/cage10.mtx|11397|11397|150645"
  "bcsstk16|csparse-lower|suitesparse|CSparse/Matrix/bcsstk16|4884|4884|290378"
  "cond-mat-2005|gt|graph-tool|usr/lib/python3/dist-packages/graph_tool/collection/cond-mat-2005.gt.gz|40421|40421|351386"
  "email-Enron|gt|graph-tool|usr/lib/python3/dist-packages/graph_tool/collection/email-Enron.gt.gz|36692|36692|367662"
  "nsjac|mtx|trilinos|packages/teko/tests/data/nsjac.mm|15444|15444|397476"
  "copter2|metis|suitesparse|metis-5.1.0/graphs/copter2.graph|55476|55476|704476"
  "NotreDame_www|mtx|suitesparse|Mongoose/Matrix/NotreDame_www.mtx|325729|325729|929849"
  "mdual|metis|suitesparse|metis-5.1.0/graphs/mdual.graph|258569|258569|1026264"
)

complete() {
  [ -s "$dest/index.txt" ] || return 1
  local m name
  for m in "${matrices[@]}"; do
    name=${m%%|*}
    [ -s "$dest/$name.mtx" ] || return 1
    grep -q "^$name " "$dest/index.txt" || return 1
  done
}
if complete; then
  echo "bench matrices: reusing $dest" >&2
  echo "$dest"
  exit 0
fi

# shellcheck source=scripts/lib/apt.sh
. "$lib/apt.sh"
command -v xz >/dev/null 2>&1 || apt_install xz-utils
command -v python3 >/dev/null 2>&1 || apt_install python3
apt_ensure_source suitesparse
apt_ensure_source trilinos

mkdir -p "$dest"
work=$(mktemp -d)
stage=$(mktemp -d "$dest/.staging.XXXXXX")
trap 'rm -rf "$work" "$stage"' EXIT
cd "$work"
# The members of one package's archive that the table names.
members_of() {
  local m pkg path
  for m in "${matrices[@]}"; do
    IFS='|' read -r _ _ pkg path _ <<<"$m"
    [ "$pkg" = "$1" ] && echo "*/$path"
  done
}
declare -A release
for pkg in suitesparse trilinos; do
  echo "bench matrices: downloading the $pkg source package" >&2
  apt-get source --download-only "$pkg" >/dev/null 2>&1 || $SUDO apt-get source --download-only "$pkg" >&2
  tarballs=("$pkg"_*.orig.tar.*)
  tarball=${tarballs[0]}
  release[$pkg]=${tarball%.orig.tar.*}  # e.g. suitesparse_5.12.0+dfsg
  mapfile -t members < <(members_of "$pkg")
  echo "bench matrices: extracting ${#members[@]} files from $tarball" >&2
  tar -xf "$tarball" --wildcards "${members[@]}"
done
# graph-tool's collection ships in its binary package: downloaded (not
# installed) and unpacked into a folder of its own, as the other archives'
# members sit below a top folder.
echo "bench matrices: downloading python3-graph-tool (not installed)" >&2
apt-get download python3-graph-tool >/dev/null 2>&1 || $SUDO apt-get download python3-graph-tool >&2
debs=(python3-graph-tool_*.deb)
release[graph-tool]=${debs[0]%.deb}
mkdir graph-tool
mapfile -t members < <(members_of graph-tool)
dpkg-deb --fsys-tarfile "${debs[0]}" | tar -x -C graph-tool --wildcards "${members[@]}"

# METIS graph (header "n m [fmt]", then line v lists v's neighbours, 1-based;
# an empty line is a vertex without neighbours) -> real symmetric Matrix
# Market, lower triangle, value 1 + ((i*7 + j*13) mod 10)/10 for entry (i, j).
metis_to_mm() {
  awk -v name="$2" -v source="$3" '
    function fail(msg) { print name ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    /^%/ { next }
    !hdr {
      n = $1 + 0; m = $2 + 0
      if (NF > 2 && $3 + 0 != 0) fail("METIS fmt " $3 " (weights) is not supported")
      print "%%MatrixMarket matrix coordinate real symmetric"
      print "% tensorlev bench matrix " name ": METIS graph " source " (" n " vertices, " m " edges)"
      print "% values: 1 + ((i*7 + j*13) mod 10)/10 for entry (i, j), i > j, 1-based"
      print n, n, m
      hdr = 1; next
    }
    {
      v++
      for (k = 1; k <= NF; k++) {
        j = $k + 0
        if (j < 1 || j > n || j == v) fail("line for vertex " v ": bad neighbour " $k)
        if (j < v) { printf "%d %d %.1f\n", v, j, 1 + ((v * 7 + j * 13) % 10) / 10; e++ }
      }
    }
    END {
      if (failed) exit 1
      if (v != n) fail(v " vertex lines, header says " n)
      if (e != m) fail(e " edges below the diagonal, header says " m " (graph not symmetric?)")
    }' "$1"
}

# CSparse triplet file ("i j x" per line, 0-based, lower triangle of a
# symmetric matrix) -> real symmetric Matrix Market.
csparse_lower_to_mm() {
  awk -v name="$2" -v source="$3" '
    function fail(msg) { print name ": " msg > "/dev/stderr"; failed = 1; exit 1 }
    NR == FNR {
      if (NF != 3) fail("line " FNR ": expected i j x")
      if ($1 + 0 < $2 + 0) fail("line " FNR ": entry above the diagonal")
      if ($1 + 0 > n) n = $1 + 0
      if ($2 + 0 > n) n = $2 + 0
      cnt++; next
    }
    FNR == 1 {
      print "%%MatrixMarket matrix coordinate real symmetric"
      print "% tensorlev bench matrix " name ": SuiteSparse " source " (CSparse triplets, lower triangle)"
      print n + 1, n + 1, cnt
    }
    { print $1 + 1, $2 + 1, $3 }
    END { if (failed) exit 1 }' "$1" "$1"
}

# Prints "rows cols nnz" of a Matrix Market coordinate file, nnz after
# symmetric expansion; checks the entry count against the size line.
mm_stats() {
  awk '
    NR == 1 { sym = tolower($5) != "general"; next }
    /^%/ || NF == 0 { next }
    !size { r = $1; c = $2; declared = $3; size = 1; next }
    { e++; if (sym && $1 != $2) off++ }
    END {
      if (e != declared) { print FILENAME ": " e " entries, size line says " declared > "/dev/stderr"; exit 1 }
      print r, c, e + off
    }' "$1"
}

: >"$stage/index.txt"
for m in "${matrices[@]}"; do
  IFS='|' read -r name conv pkg path rows cols nnz <<<"$m"
  src=$(echo "$work"/*/"$path")
  [ -f "$src" ] || { echo "bench matrices: $path missing from ${release[$pkg]}" >&2; exit 1; }
  out="$stage/$name.mtx"
  origin="${release[$pkg]}:${src#"$work"/*/}"
  echo "bench matrices: $name <- $origin ($conv)" >&2
  case $conv in
    mtx) cp "$src" "$out" ;;
    metis) metis_to_mm "$src" "$name" "$origin" >"$out" ;;
    csparse-lower) csparse_lower_to_mm "$src" "$name" "$origin" >"$out" ;;
    gt) python3 "$lib/gt_to_mtx.py" "$src" "$name" "$origin" >"$out" ;;
  esac
  stats=$(mm_stats "$out")
  if [ "$stats" != "$rows $cols $nnz" ]; then
    echo "bench matrices: $name is $stats (rows cols nnz), expected $rows $cols $nnz" >&2
    exit 1
  fi
  echo "$name $stats $origin" >>"$stage/index.txt"
done

# index.txt goes last, so that an interrupted run never looks complete.
rm -f "$dest/index.txt"
for m in "${matrices[@]}"; do
  name=${m%%|*}
  mv -f "$stage/$name.mtx" "$dest/$name.mtx"
done
mv -f "$stage/index.txt" "$dest/index.txt"
echo "bench matrices: wrote ${#matrices[@]} matrices to $dest" >&2
echo "$dest"
