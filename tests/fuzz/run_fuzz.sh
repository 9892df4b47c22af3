#!/usr/bin/env bash
# Run each libFuzzer target of a fuzz build for SECONDS (default 25), from
# a scratch copy of the checked-in corpus (new inputs stay out of the
# tree). A crash leaves its input in ARTIFACTS (default build-fuzz/crashes)
# and fails; add it under tests/fuzz/regress/NAME to keep it as a test.
# Usage: run_fuzz.sh BUILD_DIR [SECONDS] [ARTIFACTS]
set -euo pipefail
build=$1 secs=${2:-25}
src=$(cd "$(dirname "$0")" && pwd)
artifacts=${3:-$build/crashes}
mkdir -p "$artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Allocations are limited by what they cost (RSS), not by their size: a
# 4000 MB zero .bss is mapped lazily and must stay cheap. A loop the
# verifier cannot bound costs it its 1M-instruction budget, about 1 s in a
# plain build and over 10 s under ASan and coverage: hence -timeout=60.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
for exe in "$build"/tests/fuzz/fuzz_*; do
	[[ -x $exe && $exe != *_replay ]] || continue
	name=${exe##*/fuzz_}
	mkdir -p "$work/$name"
	cp -r "$src/corpus/$name/." "$work/$name/"
	[[ -d $src/regress/$name ]] && cp -r "$src/regress/$name/." "$work/$name/"
	echo "fuzz: $name for ${secs}s" >&2
	"$exe" -max_total_time="$secs" -timeout=60 -rss_limit_mb=2048 \
		-malloc_limit_mb=1048576 -print_final_stats=1 \
		-artifact_prefix="$artifacts/$name-" "$work/$name" 2>"$work/$name.log" || {
		tail -60 "$work/$name.log" >&2
		exit 1
	}
	grep -E '^stat::number_of_executed_runs|^stat::new_units_added' "$work/$name.log" |
		sed "s/^/fuzz: $name: /" >&2
done
