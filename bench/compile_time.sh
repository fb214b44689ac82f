#!/usr/bin/env bash
# Compile time of one SpMV: tensorlev (focused headers and the umbrella
# header) against Eigen's sparse matrix-vector product, same compiler and
# flags, interleaved runs, medians. Usage: bench/compile_time.sh [runs] [flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-5}
shift || true
flags=("$@")
[ ${#flags[@]} -eq 0 ] && flags=(-std=c++20 -O2)
cxx=${CXX:-g++}
inc=(-I"$here/../include" -I/usr/include/eigen3)
declare -A times
for ((r = 0; r < runs; r++)); do
  for f in tl_spmv tl_spmv_umbrella eigen_spmv; do
    s=$(date +%s.%N)
    "$cxx" "${flags[@]}" "${inc[@]}" -c "$here/compile/$f.cpp" -o /dev/null
    e=$(date +%s.%N)
    times[$f]+="$(awk -v a="$s" -v b="$e" 'BEGIN {printf "%.3f", b - a}') "
  done
done
median() { tr ' ' '\n' <<<"$1" | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
tl=$(median "${times[tl_spmv]}")
tu=$(median "${times[tl_spmv_umbrella]}")
eg=$(median "${times[eigen_spmv]}")
echo "compile one SpMV ($cxx ${flags[*]}, median of $runs):"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf "  tensorlev codegen.hpp + formats.hpp: %.2f s (%sx Eigen)\n" "$tl" "$(ratio "$tl" "$eg")"
printf "  tensorlev tensorlev.hpp (umbrella):  %.2f s (%sx Eigen)\n" "$tu" "$(ratio "$tu" "$eg")"
printf "  Eigen SparseCore:                    %.2f s\n" "$eg"
