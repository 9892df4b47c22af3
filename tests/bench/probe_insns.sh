#!/usr/bin/env bash
# PTX (and, where cuobjdump is installed, SASS) instructions that each
# probe adds to workloads.ptx's vecadd kernel, for sm_90: what the JIT's
# lowering costs per thread, measured without a GPU.
#
#   tests/bench/probe_insns.sh [BUILD_DIR] [PROBE.bpf.o...]
set -euo pipefail
build=${1:-build}
shift || true
bench="$build/tests/bench"
egpu="$build/tools/egpu"
probes=("$@")
[ ${#probes[@]} -gt 0 ] || probes=("$bench"/{timing,timing_tl,timing_tlonly,threadhist,naive_timing,tuned_timing,sm_counter,mem_count,mem_count_sm}.bpf.o)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions of the body of .entry vecadd in PTX file $1.
ptx_count() {
	awk '/\.entry vecadd\(/ { on = 1 } on && /^}/ { exit }
	     on && /;[ \t]*$/ && !/^[ \t]*(\.|\/\/|\{|\}|[A-Za-z_$0-9]+:)/ { n++ }
	     END { print n + 0 }' "$1"
}

# SASS instructions of vecadd in cubin $1 ("-" without cuobjdump).
sass_count() {
	command -v cuobjdump >/dev/null || { echo -; return; }
	cuobjdump -sass -fun vecadd "$1" | grep -cE '^\s+/\*[0-9a-f]{4}\*/'
}

count() { # name ptx
	ptxas -arch=sm_90 -c -o "$tmp/k.cubin" "$2"
	printf '| %s | %s | %s |\n' "$1" "$(ptx_count "$2")" "$(sass_count "$tmp/k.cubin")"
}

echo "| probe | PTX | SASS |"
echo "|---|---|---|"
count "(none)" "$bench/workloads.ptx"
for p in "${probes[@]}"; do
	"$egpu" instrument -q --sm sm_90 "$p" "$bench/workloads.ptx" \
		-o "$tmp/p.ptx" 2>/dev/null
	count "$(basename "$p" .bpf.o)" "$tmp/p.ptx"
done
