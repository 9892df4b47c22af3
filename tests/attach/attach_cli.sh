#!/bin/bash
# egpu attach's checks before it runs anything (no GPU needed): a metrics
# spec without --metrics, a spec the probe's maps cannot take, a bad listen
# address; and a command that loads no module runs with its exit status.
set -u
egpu=$1 probe=$2 uprobe=${3:-}
fail() { echo "FAIL: $*"; exit 1; }
out=$("$egpu" attach --metrics-spec per_thread=gauge "$probe" -- true 2>&1); rc=$?
echo "$out"
[ $rc = 2 ] || fail "spec without --metrics: exit $rc, want 2"
grep -q -- "--metrics-spec needs --metrics" <<<"$out" || fail "no usage message"
out=$("$egpu" attach --metrics 127.0.0.1:0 --metrics-spec per_thread=bogus "$probe" -- true 2>&1); rc=$?
echo "$out"
[ $rc = 1 ] || fail "bad spec: exit $rc, want 1"
grep -q "bogus" <<<"$out" || fail "the bad item is not named"
out=$("$egpu" attach --metrics 127.0.0.1:0 --metrics-spec per_thread=gauge "$probe" -- sh -c 'exit 3' 2>&1); rc=$?
echo "$out"
[ $rc = 3 ] || fail "command's exit status: $rc, want 3"
# host probes: --uprobe names a uprobe program; the agent (in the command)
# says which functions it hooks and what it cannot
if [ -n "$uprobe" ]; then
	out=$("$egpu" attach --uprobe nosuch=cudaMalloc "$uprobe" -- true 2>&1); rc=$?
	echo "$out"
	[ $rc = 1 ] && grep -q "no such program" <<<"$out" || fail "--uprobe of no program: exit $rc"
	out=$("$egpu" attach --uprobe on_entry=cudaMalloc "$uprobe" -- true 2>&1); rc=$?
	echo "$out"
	[ $rc = 1 ] && grep -q "not in a uprobe" <<<"$out" || fail "--uprobe of a GPU probe: exit $rc"
	out=$("$egpu" attach --uprobe plain "$uprobe" -- true 2>&1); rc=$?
	[ $rc = 2 ] || fail "--uprobe without =FUNCTION: exit $rc, want 2"
	out=$("$egpu" attach --uprobe plain=cudaBogus "$uprobe" -- true 2>&1); rc=$?
	echo "$out"
	[ $rc = 0 ] || fail "a run with host probes: exit $rc"
	grep -q "'cudaBogus' is not a CUDA API function" <<<"$out" || fail "unknown function not reported"
	grep -q "cudaLaunchKernel cudaMemcpy" <<<"$out" || fail "hookable functions not listed"
	grep -q "host probe 'gpu_only' refused" <<<"$out" || fail "refused host probe not reported"
fi
echo "attach_cli: ok"
