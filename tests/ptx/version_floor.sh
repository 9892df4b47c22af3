#!/bin/bash
# Instrumented PTX loads where the application's PTX loads: each example's
# probe (and tests/api's) spliced into its kernels, the kernels declared at
# PTX ISA 7.8 (CUDA 11.8), must come out declaring 7.8 and compile with
# ptxas -arch=sm_90 at that version (ptxas checks every instruction
# against the declared version); the same kernels as nvcc 13 wrote them
# (9.0) come out at 9.0, and re-declared 8.0 (CUDA 12.0) still compile.
#   version_floor.sh EGPU PTXAS OUT_DIR OBJ:PTX...
set -u
egpu=$1 ptxas=$2 out=$3
shift 3
mkdir -p "$out"
fail=0 n=0
declared() { sed -n 's/^\.version \([0-9.]*\)$/\1/p' "$1" | head -1; }
redeclare() { sed "s/^\.version [0-9.]*$/.version $2/" "$1" > "$3"; }
check() { # PROBE APP TAG: instrument, then ptxas at the declared version
	local probe=$1 app=$2 tag=$3 want=$4 got
	if ! "$egpu" instrument -q "$probe" "$app" -o "$out/$tag.ptx" >"$out/$tag.log" 2>&1; then
		echo "FAIL $tag: egpu instrument: $(tail -1 "$out/$tag.log")"; fail=1; return 1
	fi
	if grep -q "^0 of" "$out/$tag.log"; then
		echo "FAIL $tag: no kernel got a probe"; fail=1; return 1
	fi
	got=$(declared "$out/$tag.ptx")
	if [ "$got" != "$want" ]; then
		echo "FAIL $tag: declares .version $got, want $want"; fail=1; return 1
	fi
	if ! "$ptxas" -arch=sm_90 -c "$out/$tag.ptx" -o /dev/null 2>"$out/$tag.err"; then
		echo "FAIL $tag: ptxas at .version $got: $(head -3 "$out/$tag.err")"; fail=1; return 1
	fi
}
for pair in "$@"; do
	probe=${pair%%:*} app=${pair#*:}
	tag=$(basename "$(dirname "$probe")")_$(basename "$probe" .bpf.o)
	redeclare "$app" 7.8 "$out/$tag.app78.ptx"
	if ! "$ptxas" -arch=sm_90 -c "$out/$tag.app78.ptx" -o /dev/null 2>/dev/null; then
		echo "FAIL $tag: the kernels themselves need more than 7.8"; fail=1; continue
	fi
	check "$probe" "$out/$tag.app78.ptx" "$tag.78" 7.8 || continue
	check "$probe" "$app" "$tag.90" "$(declared "$app")" || continue
	redeclare "$out/$tag.90.ptx" 8.0 "$out/$tag.80.ptx"
	if ! "$ptxas" -arch=sm_90 -c "$out/$tag.80.ptx" -o /dev/null 2>"$out/$tag.err"; then
		echo "FAIL $tag: re-declared 8.0: $(head -3 "$out/$tag.err")"; fail=1; continue
	fi
	echo "ok $tag: 7.8 in, 7.8 out; 9.0 out re-declared 8.0 compiles"
	n=$((n + 1))
done
[ $fail = 0 ] && [ $n -gt 0 ] || { echo "version_floor: FAILED"; exit 1; }
echo "version_floor: $n probes ok"
