#!/usr/bin/env bash
# egpu memcheck without a GPU: its usage errors and --help, the environment
# it gives the command (the agent's contract, docs/memcheck.md), and its
# exit status and report from what the agent wrote, played by a stand-in
# (fake_agent.c) that copies the report the test wrote at the command's exit.
#
# usage: memcheck_cli.sh EGPU FAKE_AGENT.so
set -uo pipefail
egpu=$1
export EGPU_ATTACH_LIB=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# Runs egpu memcheck "$@": its status in $rc, stdout in $out, stderr in $err.
mc() {
	"$egpu" memcheck "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(<"$tmp/out") err=$(<"$tmp/err")
}

for h in --help -h; do
	mc $h
	[[ $rc == 0 && $out == "usage: egpu memcheck"* && $out == *--contain* ]] ||
		fail "memcheck $h (rc $rc): $out"
done
# The command's own arguments, --help included, are not egpu's.
mc sh -c 'echo "$0"' --help
[[ $out == --help ]] || fail "the command's --help: $out $err"

# Usage errors: exit 2, the message naming what is wrong, nothing run.
usage() {
	local needle=$1
	shift
	mc "$@"
	[[ $rc == 2 && $err == *"$needle"* && ! -e $tmp/ran ]] ||
		fail "memcheck $* (rc $rc): $err"
}
usage "no command to run"
usage "no command to run" --json --
usage "unknown option '--bogus'" --bogus touch "$tmp/ran"
usage "--max-reports needs a count >= 1" --max-reports 0 touch "$tmp/ran"
usage "--max-reports needs a count >= 1" --max-reports 3x touch "$tmp/ran"
usage "--max-reports needs a count >= 1" --max-reports 99999999999 touch "$tmp/ran"
usage "--max-reports needs a count >= 1" --max-reports
usage "-o needs a file" -o

# The environment: the stand-in preloaded, memcheck on, the report file
# named; a probe or memcheck options from the caller's environment dropped.
show='echo "$LD_PRELOAD|$EGPU_MEMCHECK|${EGPU_MEMCHECK_CONTAIN-}|${EGPU_MEMCHECK_MAX-}|${EGPU_ATTACH_JSON-}|${EGPU_ATTACH-}"; test -f "$EGPU_ATTACH_OUT"'
EGPU_ATTACH=probe.o EGPU_MEMCHECK_CONTAIN=1 EGPU_ATTACH_JSON=1 mc sh -c "$show"
[[ $out == "$EGPU_ATTACH_LIB|1||||" ]] || fail "plain environment: $out"
LD_PRELOAD= mc --contain --max-reports 5 --json sh -c "$show"
[[ $out == "$EGPU_ATTACH_LIB|1|1|5|1|" ]] || fail "--contain --max-reports 5 --json: $out"

# Exit status and report (bash, which exits through exit(), so that
# the stand-in's destructor runs; dash's exit does not). Each line of a report file below is one
# argument of printf.
report() { printf '%s\n' "$@" >"$tmp/report"; }
export EGPU_FAKE_REPORT=$tmp/report
report "egpu memcheck: no errors"
mc bash -c 'exit 0'
[[ $rc == 0 && $err == "egpu memcheck: no errors" ]] || fail "clean (rc $rc): $err"
mc bash -c 'exit 3'
[[ $rc == 3 ]] || fail "clean, the command failing: rc $rc"
report "egpu memcheck: invalid 4-byte global store in k(float*) at a.cu:12" \
	"    block (0,0,0) thread (0,0,0), address 0x7f0000400000: just past the end of a 4,096-byte cudaMalloc allocation" \
	"    and 1,023 more at this site" "egpu memcheck: 1,024 errors at 1 site"
mc bash -c 'exit 0'
[[ $rc == 1 && $err == *"at a.cu:12"* && $err == *"1,024 errors at 1 site" ]] ||
	fail "errors (rc $rc): $err"
mc bash -c 'exit 3'
[[ $rc == 3 && $err == *"1,024 errors"* ]] || fail "errors, the command failing: rc $rc"
# -o FILE takes the report; stderr keeps only the command's own output.
mc -o "$tmp/rep.txt" bash -c 'echo own >&2'
[[ $rc == 1 && $err == own ]] && cmp -s "$tmp/report" "$tmp/rep.txt" ||
	fail "-o FILE (rc $rc): $err"
report '{"reports":[{"kernel":"k","file":"a.cu","line":12,"kind":"store","where":"\"errors\":0"}],"errors":2,"sites":1,"sites_not_shown":0,"errors_not_shown":0}'
mc --json bash -c 'exit 0'
[[ $rc == 1 && $err == *'"errors":2'* ]] || fail "--json with errors (rc $rc): $err"
# a note of the agent's before the report is no summary
report "egpu memcheck: 3 more sites went wrong; the log kept the first 4096" \
	'{"reports":[],"errors":5,"sites":3}'
mc --json bash -c 'exit 0'
[[ $rc == 1 ]] || fail "--json after a note (rc $rc): $err"
report "egpu memcheck: 3 more sites went wrong; the log kept the first 4096" \
	"egpu memcheck: no errors"
mc bash -c 'exit 0'
[[ $rc == 0 ]] || fail "text after a note (rc $rc): $err"
report '{"reports":[], "errors": 99999999999999999999999}'
mc --json bash -c 'exit 0'
[[ $rc == 1 ]] || fail "--json, a count past 64 bits (rc $rc): $err"
report '{"reports":[],"errors":0,"sites":0,"sites_not_shown":0,"errors_not_shown":0}'
mc --json -o "$tmp/rep.json" bash -c 'exit 0'
[[ $rc == 0 && -z $err ]] && cmp -s "$tmp/report" "$tmp/rep.json" || fail "--json clean (rc $rc): $err"

# No report: say why, exit 125 (or the command's status when it failed).
report "egpu attach: 1 module loaded"
mc bash -c 'exit 0'
[[ $rc == 125 && $err == *"report from bash has no summary"* ]] || fail "no summary (rc $rc): $err"
unset EGPU_FAKE_REPORT
mc bash -c 'exit 0'
[[ $rc == 125 && $err == *"no report: the agent in bash wrote none"* ]] || fail "no report (rc $rc): $err"
mc bash -c 'kill -KILL $$'
[[ $rc == 137 && $err == *"bash was killed by signal 9"* ]] || fail "killed (rc $rc): $err"
mc -o "$tmp/no/such/dir" touch "$tmp/ran"
[[ $rc == 125 && $err == *"$tmp/no/such/dir"* && ! -e $tmp/ran ]] || fail "-o unwritable (rc $rc): $err"
EGPU_ATTACH_LIB=$tmp/none.so mc touch "$tmp/ran"
[[ $rc == 125 && $err == *"EGPU_ATTACH_LIB=$tmp/none.so"* && ! -e $tmp/ran ]] ||
	fail "no agent (rc $rc): $err"

# The report file is egpu's own, removed after.
mkdir "$tmp/t"
TMPDIR=$tmp/t mc bash -c 'case $EGPU_ATTACH_OUT in "$TMPDIR"/egpu-memcheck-*) ;; *) exit 9 ;; esac'
[[ $rc == 125 && -z $(ls -A "$tmp/t") ]] || fail "report file in TMPDIR, removed (rc $rc): $(ls -A "$tmp/t")"

((fails == 0)) && echo "memcheck_cli: all checks passed"
exit $((fails > 0))
