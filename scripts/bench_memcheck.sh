#!/usr/bin/env bash
# compute-sanitizer's memcheck next to `egpu memcheck` and libegpu's memory
# probes, on the same kernels and the same GPU: runs `bench_mem --plain`
# (the original kernels, median device time with CUDA events, L2 flushed)
# as it is, under `compute-sanitizer --tool memcheck`, and under `egpu
# memcheck` (whose agent instruments the kernels bench_mem loads, so its
# medians are the checked kernels'; its report must be clean), then
# `bench_mem` for libegpu's counting and tracing ratios, and prints one
# Markdown table.
#
#   scripts/bench_memcheck.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-20}
bench="$build/tests/bench/bench_mem"
egpu="$build/tools/egpu"
[ -x "$bench" ] || { echo "no $bench: build target bench_mem first" >&2; exit 1; }
[ -x "$egpu" ] || { echo "no $egpu: build target egpu_cli first" >&2; exit 1; }
. "$(dirname "$0")/sanitizer.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Wall time of a command in seconds, its output in $tmp/$1 (its exit
# status, when not 0, in $tmp/$1.rc).
timed() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >"$tmp/$name" 2>&1 || echo $? >"$tmp/$name.rc"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

wall_plain=$(timed plain "$bench" --plain "$runs")
[ ! -e "$tmp/plain.rc" ] || { cat "$tmp/plain"; echo "bench_mem --plain failed" >&2; exit 1; }
wall_memcheck=$(timed memcheck "$sanitizer" --tool memcheck "$bench" --plain "$runs")
wall_egpu_mc=$(timed egpu_mc "$egpu" memcheck -o "$tmp/egpu_mc.report" -- "$bench" --plain "$runs")
"$bench" "$runs" >"$tmp/egpu"
grep -q "ERROR SUMMARY: 0 errors" "$tmp/memcheck" ||
	echo "note: memcheck reported errors, see its output below" >&2
[ ! -e "$tmp/egpu_mc.rc" ] ||
	echo "note: egpu memcheck exited $(<"$tmp/egpu_mc.rc"), see its report below" >&2

# Ratio of libegpu's mode $2 on kernel row name $1 from bench_mem's table.
egpu_ratio() {
	awk -F'|' -v w="$1" -v m="$2" '
		{ gsub(/ +$/, "", $2); gsub(/^ +/, "", $2); gsub(/ /, "", $3) }
		$2 == w && $3 == m { gsub(/[ x]/, "", $6); print $6 }' "$tmp/egpu"
}

# bench_mem --plain's median for kernel $1 in run output $2 ("": none).
plain_ms() {
	awk -F'\t' -v k="$1" '$1 == "plain" && $2 == k { print $3 }' "$2"
}

echo "| workload | original ms | memcheck ms | memcheck ratio | egpu memcheck ms | egpu memcheck ratio | count ratio | trace ratio | warp-record trace ratio | memcheck / count | memcheck / trace | memcheck / warp-record trace |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
while IFS=$'\t' read -r tag kernel ms; do
	[ "$tag" = plain ] || continue
	checked=$(plain_ms "$kernel" "$tmp/memcheck")
	ours=$(plain_ms "$kernel" "$tmp/egpu_mc")
	case $kernel in
	vecadd) row="vecadd 16M" ;;
	*) row="sgemm 2048^3" ;;
	esac
	count=$(egpu_ratio "$row" count)
	trace=$(egpu_ratio "$row" trace)
	# bench_mem's "trace (warp records, per-SM shards)" (spaces removed)
	warp=$(egpu_ratio "$row" "trace(warprecords,per-SMshards)")
	awk -v r="$row" -v p="$ms" -v c="$checked" -v n="$count" -v t="$trace" \
	    -v w="${warp:-0}" -v o="$ours" 'BEGIN {
		m = c / p
		e = o == "" ? "| n/a | n/a" : sprintf("| %.3f | **%.2fx**", o, o / p)
		printf "| %s | %.3f | %.3f | %.1fx %s | %.2fx | %.2fx | %.2fx | %.1fx | %.1fx | %.1fx |\n",
		       r, p, c, m, e, n, t, w, m / n, m / t, w ? m / w : 0 }'
done <"$tmp/plain"
echo
echo "whole process, wall clock: ${wall_plain} s plain, ${wall_memcheck} s under memcheck, ${wall_egpu_mc} s under egpu memcheck ($runs runs each)"
echo
echo "== bench_mem"
cat "$tmp/egpu"
echo
echo "== memcheck's own output"
grep -v "^plain" "$tmp/memcheck" | tail -5
echo
echo "== egpu memcheck's report and messages"
cat "$tmp/egpu_mc.report" 2>/dev/null
grep -v "^plain" "$tmp/egpu_mc" | tail -5
