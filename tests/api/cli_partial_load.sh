#!/bin/bash
# egpu inspect and egpu verify on an object with a refused probe: the object
# loads, inspect shows each verdict, verify reports every program and fails.
set -u
egpu=$1 obj=$2
out=$("$egpu" inspect "$obj") || { echo "inspect failed: $out"; exit 1; }
echo "$out"
grep -Eq 'good_entry .* accepted$' <<<"$out" || { echo "no accepted good_entry"; exit 1; }
grep -Eq 'bad_exit .* refused$' <<<"$out" || { echo "no refused bad_exit"; exit 1; }
grep -q "prog 'bad_exit': insn .*out-of-bounds" <<<"$out" || { echo "no reason"; exit 1; }
out=$("$egpu" verify "$obj"); rc=$?
echo "$out"
[ "$rc" = 1 ] || { echo "verify exit $rc, want 1"; exit 1; }
grep -q "prog 'good_entry': accepted" <<<"$out" || { echo "good_entry not reported"; exit 1; }
grep -q "prog 'bad_exit': refused" <<<"$out" || { echo "bad_exit not reported"; exit 1; }
