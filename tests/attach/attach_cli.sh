#!/bin/bash
# egpu attach's checks before it runs anything (no GPU needed): a metrics
# spec without --metrics, a spec the probe's maps cannot take, a bad listen
# address; and a command that loads no module runs with its exit status.
set -u
egpu=$1 probe=$2
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
echo "attach_cli: ok"
