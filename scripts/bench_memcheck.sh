#!/usr/bin/env bash
# compute-sanitizer's memcheck next to libegpu's memory probes, on the same
# kernels and the same GPU: runs `bench_mem --plain` (the original kernels,
# median device time with CUDA events, L2 flushed) once as it is and once
# under `compute-sanitizer --tool memcheck`, then `bench_mem` for libegpu's
# counting and tracing ratios, and prints one Markdown table.
#
#   scripts/bench_memcheck.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-20}
bench="$build/tests/bench/bench_mem"
[ -x "$bench" ] || { echo "no $bench: build target bench_mem first" >&2; exit 1; }
. "$(dirname "$0")/sanitizer.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Wall time of a command in seconds, its output in $tmp/$1.
timed() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >"$tmp/$name" 2>&1
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

wall_plain=$(timed plain "$bench" --plain "$runs")
wall_memcheck=$(timed memcheck "$sanitizer" --tool memcheck "$bench" --plain "$runs")
"$bench" "$runs" >"$tmp/egpu"
grep -q "ERROR SUMMARY: 0 errors" "$tmp/memcheck" ||
	echo "note: memcheck reported errors, see its output below" >&2

# Ratio of libegpu's mode $2 on kernel row name $1 from bench_mem's table.
egpu_ratio() {
	awk -F'|' -v w="$1" -v m="$2" '
		{ gsub(/ +$/, "", $2); gsub(/^ +/, "", $2); gsub(/ /, "", $3) }
		$2 == w && $3 == m { gsub(/[ x]/, "", $6); print $6 }' "$tmp/egpu"
}

echo "| workload | original ms | memcheck ms | memcheck ratio | count ratio | trace ratio | warp-record trace ratio | memcheck / count | memcheck / trace | memcheck / warp-record trace |"
echo "|---|---|---|---|---|---|---|---|---|---|"
while IFS=$'\t' read -r tag kernel ms; do
	[ "$tag" = plain ] || continue
	checked=$(awk -F'\t' -v k="$kernel" '$1 == "plain" && $2 == k { print $3 }' "$tmp/memcheck")
	case $kernel in
	vecadd) row="vecadd 16M" ;;
	*) row="sgemm 2048^3" ;;
	esac
	count=$(egpu_ratio "$row" count)
	trace=$(egpu_ratio "$row" trace)
	# bench_mem's "trace (warp records, per-SM shards)" (spaces removed)
	warp=$(egpu_ratio "$row" "trace(warprecords,per-SMshards)")
	awk -v r="$row" -v p="$ms" -v c="$checked" -v n="$count" -v t="$trace" \
	    -v w="${warp:-0}" 'BEGIN {
		m = c / p
		printf "| %s | %.3f | %.3f | %.1fx | %.2fx | %.2fx | %.2fx | %.1fx | %.1fx | %.1fx |\n",
		       r, p, c, m, n, t, w, m / n, m / t, w ? m / w : 0 }'
done <"$tmp/plain"
echo
echo "whole process, wall clock: ${wall_plain} s plain, ${wall_memcheck} s under memcheck ($runs runs each)"
echo
echo "== bench_mem"
cat "$tmp/egpu"
echo
echo "== memcheck's own output"
grep -v "^plain" "$tmp/memcheck" | tail -5
