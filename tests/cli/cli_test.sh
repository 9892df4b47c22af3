#!/usr/bin/env bash
# egpu's subcommands, as a user meets them. Usage: cli_test.sh EGPU API_DIR
# RUN_OBJ (API_DIR: the build's tests/api, with api.bpf.o, memprobe.bpf.o
# and PTX; RUN_OBJ: run.bpf.o).
set -uo pipefail
egpu=$1 api=$2 run_obj=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# --help (and -h) on every subcommand: usage on stdout, exit 0, no file opened.
for cmd in run jit verify inspect trace instrument; do
	for h in --help -h; do
		out=$("$egpu" "$cmd" "$h" 2>&1) || fail "$cmd $h exits $?"
		[[ $out == "usage: egpu $cmd"* ]] || fail "$cmd $h printed: $out"
	done
done
"$egpu" inspect "$api/api.bpf.o" --help | grep -q '^usage: egpu inspect' ||
	fail "inspect FILE --help"
# The traced command's own arguments are not egpu's.
for sep in -- ""; do
	out=$("$egpu" trace -o "$tmp/t" $sep sh -c 'echo "$0"' --help 2>&1)
	[[ $out != "usage: egpu"* ]] || fail "trace $sep sh ... --help printed: $out"
done

# jit: several programs need --prog or --all; one is never picked silently.
out=$("$egpu" jit "$api/api.bpf.o" 2>&1 >/dev/null)
rc=$?
[[ $rc == 2 && $out == *"choose one with --prog"* && $out == *on_entry* ]] ||
	fail "jit without --prog (rc $rc): $out"
"$egpu" jit --prog on_entry "$api/api.bpf.o" | grep -q '\.visible \.func' ||
	fail "jit --prog on_entry"
# bump (a direct-run program) needs --ctx-len: --all goes on past it and fails.
"$egpu" jit --all "$api/api.bpf.o" >"$tmp/all.ptx" 2>"$tmp/all.err"
rc=$?
[[ $rc == 1 && $(grep -c '^// egpu: prog ' "$tmp/all.ptx") == 3 &&
	$(grep -c '\.visible \.func' "$tmp/all.ptx") == 2 ]] ||
	fail "jit --all (rc $rc): $(cat "$tmp/all.err")"
"$egpu" jit --all --prog on_entry "$api/api.bpf.o" 2>/dev/null && fail "jit --all --prog"

# instrument: -q one line, default per kernel, -v per memory site.
mem=("$api/memprobe.bpf.o" "$api/memkernels.ptx")
for level in -q "" -v; do
	"$egpu" instrument $level "${mem[@]}" -o "$tmp/mem$level.ptx" 2>"$tmp/rep$level" ||
		fail "instrument $level"
	cmp -s "$tmp/mem$level.ptx" "$tmp/mem-q.ptx" || fail "instrument $level output differs"
done
[[ $(wc -l <"$tmp/rep-q") == 1 ]] || fail "instrument -q: $(cat "$tmp/rep-q")"
grep -q '^  kernel ' "$tmp/rep" && ! grep -q '^  site ' "$tmp/rep" ||
	fail "instrument (default): $(cat "$tmp/rep")"
grep -q '^  site ' "$tmp/rep-v" || fail "instrument -v has no sites"

# The output is written before the report: a report nobody reads (its
# pipe closed, as by `| head`) cannot cost the output file.
"$egpu" instrument -v "${mem[@]}" -o "$tmp/closed.ptx" 2> >(exec true)
cmp -s "$tmp/closed.ptx" "$tmp/mem-q.ptx" || fail "instrument with its report's pipe closed"

# --no-inline calls the probes; the default copies them in.
kern=("$api/api.bpf.o" "$api/kernels.ptx")
"$egpu" instrument -q "${kern[@]}" -o "$tmp/inline.ptx" 2>/dev/null || fail "instrument"
"$egpu" instrument -q --no-inline "${kern[@]}" -o "$tmp/call.ptx" 2>/dev/null ||
	fail "instrument --no-inline"
! grep -q 'call.*__egpu_probe' "$tmp/inline.ptx" && grep -q 'call.*__egpu_probe' "$tmp/call.ptx" ||
	fail "--no-inline: probes not called"

# --prog attaches only the programs named.
"$egpu" instrument --prog on_exit "${kern[@]}" -o "$tmp/exit.ptx" 2>"$tmp/rep-exit" ||
	fail "instrument --prog on_exit"
grep -q ' 0 entry and 2 exit points, 0 memory sites, 1 programs' "$tmp/rep-exit" ||
	fail "instrument --prog on_exit: $(cat "$tmp/rep-exit")"
out=$("$egpu" instrument --prog nope "${kern[@]}" -o "$tmp/x.ptx" 2>&1) && fail "--prog nope"
[[ $out == *"no program 'nope'"* ]] || fail "--prog nope: $out"
out=$("$egpu" instrument --prog bump "${kern[@]}" -o "$tmp/x.ptx" 2>&1) && fail "--prog bump"
[[ $out == *"names no attach point"* ]] || fail "--prog bump: $out"

# A pattern that matches no kernel: written anyway, the warning shown even
# with -q (it names the program and the kernels there are); nothing
# instrumented exits 1 unless --allow-none.
none=("$api/memprobe.bpf.o" "$api/kernels.ptx" -o "$tmp/none.ptx")
out=$("$egpu" instrument -q "${none[@]}" 2>&1) && fail "instrument with an unmatched pattern exits 0"
[[ $out == *"warn: instrumenting: prog 'mem_probe': no kernel matches 'vadd_mem'; kernels: saxpy, fill<int>"* ]] ||
	fail "unmatched pattern's warning: $out"
[[ $out == *"nothing instrumented: none of the module's 2 kernels got a probe"* && -s $tmp/none.ptx ]] ||
	fail "unmatched pattern's verdict: $out"
"$egpu" instrument -q --allow-none "${none[@]}" 2>/dev/null || fail "instrument --allow-none"
# Every program refused: nothing to attach, exit 1.
out=$("$egpu" instrument -q --prog bad_exit "$api/mixed.bpf.o" "$api/kernels.ptx" -o "$tmp/x.ptx" 2>&1) &&
	fail "instrument of a refused program exits 0"
[[ $out == *"bad_exit"* ]] || fail "refused --prog: $out"
out=$("$egpu" instrument -q "$api/unbounded.bpf.o" "$api/kernels.ptx" -o "$tmp/x.ptx" 2>&1) &&
	fail "instrument with every program refused exits 0"
[[ $out == *"not attaching refused prog 'spin'"* && $out == *"nothing instrumented"* ]] ||
	fail "every program refused: $out"

# A refused program is skipped, saying why; the accepted one goes in.
out=$("$egpu" instrument -q "$api/mixed.bpf.o" "$api/kernels.ptx" -o "$tmp/mixed.ptx" 2>&1) ||
	fail "instrument with a refused program: $out"
[[ $out == *"not attaching refused prog 'bad_exit'"* && $out == *" 1 entry and 0 exit points"* ]] ||
	fail "refused program's warning: $out"

# Targets: one check for every command; GPUs newer than the JIT's LLVM
# get their own .target and .version, never sm_90's silently.
for sm in sm_1000 sm_99999999999 sm_31; do
	out=$("$egpu" instrument --sm $sm "${kern[@]}" -o "$tmp/x.ptx" 2>&1) && fail "instrument --sm $sm exits 0"
	[[ $out == *"'$sm' is not a GPU target"* ]] || fail "instrument --sm $sm: $out"
	out=$("$egpu" jit --sm $sm --prog on_entry "$api/api.bpf.o" 2>&1) && fail "jit --sm $sm exits 0"
	[[ $out == *"'$sm' is not a GPU target"* ]] || fail "jit --sm $sm: $out"
done
for sm in sm_100 sm_120 sm_100a; do
	"$egpu" jit --sm $sm --prog on_entry "$api/api.bpf.o" | grep -qx "\.target $sm" ||
		fail "jit --sm $sm: not its .target"
done

# verify: the verdict line ends the failing path and names the program once.
out=$("$egpu" verify --prog bad_exit "$api/mixed.bpf.o" 2>&1) && fail "verify of a refused program exits 0"
[[ $(grep -o "prog 'bad_exit'" <<<"$out" | wc -l) == 1 &&
	$(tail -n 1 <<<"$out") == "prog 'bad_exit': refused: insn 0 (r0 = *(u64 *)(r1 + 40))"* ]] ||
	fail "verify's refusal: $out"

# run FILE.o: probes with their kernel's parameters, direct runs with GPU
# helpers; the program must be named when there are several.
params=000000400000000000000000000000000000000000000000e8030000 # n = 1000
for prog in n_by_helper n_direct; do
	out=$("$egpu" run --prog $prog --params $params "$run_obj" 2>&1)
	[[ $out == 0x00000000000003e8 ]] || fail "run --prog $prog --params: $out"
done
out=$("$egpu" run --prog n_direct --params ${params:0:48} "$run_obj" 2>&1) && fail "run with too few parameter bytes"
[[ $out == *"reads ctx->params up to byte 28; 24 parameter bytes given"* ]] || fail "too few parameter bytes: $out"
out=$("$egpu" run --prog sum_bytes "$run_obj" 0102030a 2>&1)
[[ $out == 0x0000000000000010 ]] || fail "run --prog sum_bytes: $out"
out=$("$egpu" run "$run_obj" 2>&1) && fail "run FILE.o with several programs"
[[ $out == *"holds several programs; choose one with --prog NAME"* && $out == *n_direct* ]] ||
	fail "run FILE.o without --prog: $out"
out=$("$egpu" run nosuch.o </dev/null 2>&1) && fail "run nosuch.o"
[[ $out == *"neither an existing file nor hex memory"* ]] || fail "run nosuch.o: $out"
# The conformance plugin protocol is unchanged: hex on stdin.
out=$(echo "b7 00 00 00 07 00 00 00 95 00 00 00 00 00 00 00" | "$egpu" run 2>&1)
[[ $out == 0x0000000000000007 ]] || fail "run with hex on stdin: $out"

((fails == 0)) && echo "cli: all checks passed"
exit $((fails > 0))
