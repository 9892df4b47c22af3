#!/usr/bin/env bash
# What egpu attach adds to a program loading 100 modules, on its first run
# (the driver's JIT cache empty: every instrumented module compiled) and
# on later runs (the cache warm), for docs/benchmarks.md: bench_loads
# (tests/attach) without and with the cuda-counter probe, RUNS times each
# after emptying the cache, in a private cache directory (CUDA_CACHE_PATH)
# so the user's cache is neither used nor changed. Prints bench_loads'
# own lines and the process time added by attaching on each run.
#
#   scripts/bench_first_run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
runs=${2:-3}
bench="$build/tests/attach/bench_loads"
probe="$build/tests/attach/counter.bpf.o"
egpu="$build/tools/egpu"
for f in "$bench" "$probe" "$egpu"; do
	[ -e "$f" ] || { echo "bench_first_run: $f missing: build first" >&2; exit 1; }
done
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
export CUDA_CACHE_PATH=$cache CUDA_CACHE_MAXSIZE=1073741824

process_ms() { sed -n 's/.*process \([0-9.]*\) ms.*/\1/p'; }

echo "# egpu attach, first and later runs, $(date -u '+%Y-%m-%d %H:%M UTC')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader |
	sed 's/^/GPU, driver: /'
for run in $(seq 1 "$runs"); do
	what=$([ "$run" = 1 ] && echo "first run (JIT cache empty)" || echo "run $run (JIT cache warm)")
	plain=$("$bench" 100)
	attached=$("$egpu" attach "$probe" -- "$bench" 100 2>/dev/null)
	echo "## $what"
	echo "plain:    $plain"
	echo "attached: $attached"
	p=$(process_ms <<<"$plain") a=$(process_ms <<<"$attached")
	awk -v p="$p" -v a="$a" 'BEGIN { printf "added by attaching: %+.3f s\n", (a - p) / 1000 }'
done
