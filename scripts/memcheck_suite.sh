#!/usr/bin/env bash
# egpu memcheck's suite (tests/memcheck/suite/suite.cu) under
# compute-sanitizer's memcheck, default options and --padding 256, and
# under `egpu memcheck`: for each case, the line it is expected to name
# (its BUG:TAG line) and what each run reported, as one Markdown table
# with its wall time. A bug is "found" when the report names its line; a
# correct case must report nothing.
#
#   scripts/memcheck_suite.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
suite="$build/tests/memcheck/memcheck_suite"
egpu="$build/tools/egpu"
src="$here/tests/memcheck/suite/suite.cu"
[ -x "$suite" ] || { echo "no $suite: build target memcheck_suite_app first" >&2; exit 1; }
[ -x "$egpu" ] || { echo "no $egpu: build target egpu_cli first" >&2; exit 1; }
. "$(dirname "$0")/sanitizer.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# What a run's report $1 says of a case expecting line $2 (none: a correct
# case), $3 the checker's words for no errors: "found", "missed", "clean",
# "other line N", "errors, no line", "no report".
verdict() {
	local out=$1 want=$2 lines
	if [ ! -s "$out" ]; then
		echo "no report"
		return
	fi
	if grep -q "$3" "$out"; then
		[ -n "$want" ] && echo missed || echo clean
		return
	fi
	lines=$(grep -o "suite\.cu:[0-9]*" "$out" | cut -d: -f2 | sort -un | tr '\n' ' ')
	if [ -n "$want" ] && grep -qw "$want" <<<"$lines"; then
		echo found
	elif [ -n "$lines" ]; then
		echo "other line ${lines% }"
	else
		echo "errors, no line"
	fi
}

# Wall time of a run of "$@" in seconds, its output in $out.
timed() {
	local out=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >"$out" 2>&1 </dev/null || true
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }'
}

sanitizer_clean="ERROR SUMMARY: 0 errors"
egpu_clean="^egpu memcheck: no errors"
echo "| case | expected | plain exit | memcheck | s | memcheck --padding 256 | s | egpu memcheck | s |"
echo "|---|---|---|---|---|---|---|---|---|"
"$suite" | while read -r name tag; do
	want=""
	[ "$tag" = - ] || want=$(grep -n "BUG:$tag " "$src" | cut -d: -f1)
	"$suite" "$name" >"$tmp/plain" 2>&1 </dev/null && plain=0 || plain=$?
	t1=$(timed "$tmp/m1" "$sanitizer" --tool memcheck "$suite" "$name")
	t2=$(timed "$tmp/m2" "$sanitizer" --tool memcheck --padding 256 "$suite" "$name")
	rm -f "$tmp/e"
	t3=$(timed "$tmp/elog" "$egpu" memcheck -o "$tmp/e" -- "$suite" "$name")
	expect=clean
	[ -z "$want" ] || expect="line $want"
	echo "| $name | $expect | $plain | $(verdict "$tmp/m1" "$want" "$sanitizer_clean") | $t1 |" \
		"$(verdict "$tmp/m2" "$want" "$sanitizer_clean") | $t2 |" \
		"$(verdict "$tmp/e" "$want" "$egpu_clean") | $t3 |"
done
