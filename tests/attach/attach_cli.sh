#!/bin/bash
# egpu attach's checks before it runs anything (no GPU needed): a metrics
# spec without --metrics, a spec the probe's maps cannot take, a bad listen
# address; --set, --set-file and --event-type entries the events probe's
# maps or types cannot take; and a command that loads no module runs with
# its exit status.
set -u
egpu=$1 probe=$2 events=$3 uprobe=${4:-}
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
# refused: the exit status, and the message naming what is wrong
refused() {
	local want_rc=$1 needle=$2; shift 2
	out=$("$egpu" attach "$@" -- true 2>&1); rc=$?
	echo "$out"
	[ $rc = "$want_rc" ] || fail "$*: exit $rc, want $want_rc"
	grep -qF -- "$needle" <<<"$out" || fail "$*: no '$needle' in the message"
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
refused 1 "no map 'nomap' (maps: events, exits, config, scale, totals" --set 'nomap[0]=1' "$events"
refused 1 "map 'scale' value: out of range: -1" --set 'scale[0]=-1' "$events"
refused 1 "field 'level': out of range: 8" --set 'config[0]={level: 8}' "$events"
refused 2 "--set needs MAP[KEY]=VALUE" --set "$events"
refused 1 "$tmp/none.json" --set-file "$tmp/none.json" "$events"
echo '{"scale": {"0": 1,}}' > "$tmp/bad.json"
refused 1 "JSON at offset 18" --set-file "$tmp/bad.json" "$events"
refused 1 "no type 'nosuch'" --event-type events=nosuch "$events"
refused 2 "--event-type needs MAP=TYPE" --event-type events "$events"
echo '{"config": {"0": {"every": 2, "tag": "file"}}}' > "$tmp/good.json"
out=$("$egpu" attach --set 'scale[0]=3' --set-file "$tmp/good.json" \
	--event-type events=block_event "$events" -- sh -c 'exit 3' 2>&1); rc=$?
echo "$out"
[ $rc = 3 ] || fail "seeds and event types that fit: exit $rc, want 3"
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
