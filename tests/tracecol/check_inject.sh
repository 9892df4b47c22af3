#!/bin/sh
# SPDX-License-Identifier: MIT
# `egpu trace -o DIR -- trace_app --plain` on an unmodified program: the
# command's status comes back, the four files are written, every kernel is
# matched to its launch, and the outputs name kernels and launching code.
# Usage: check_inject.sh EGPU TRACE_APP DIR
egpu=$1 app=$2 dir=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$dir"
"$egpu" trace -o "$dir" -- "$app" --plain 2>"$dir.err"
rc=$?
cat "$dir.err" >&2
[ "$rc" -eq 0 ] || exit "$rc"
for f in trace.folded trace.json trace.svg summary.txt; do
	[ -s "$dir/$f" ] || fail "$dir/$f missing or empty"
done
set -- $(grep -o '[0-9]* kernels ([0-9]* matched' "$dir.err" | tr -d '(')
[ "$#" -eq 4 ] || fail "no kernel count on stderr"
[ "$1" -gt 0 ] || fail "no kernels traced"
[ "$1" = "$3" ] || fail "$3 of $1 kernels matched to a launch"
grep -q timed_kernel "$dir/summary.txt" || fail "summary lacks timed_kernel"
grep -Eq 'launch_driver(\(\))?;cuLaunchKernel;' "$dir/trace.folded" ||
	fail "folded stacks lack launch_driver;cuLaunchKernel"
grep -Eq 'launch_graph(\(\))?;cudaGraphLaunch;' "$dir/trace.folded" ||
	fail "folded stacks lack launch_graph;cudaGraphLaunch"
echo "PASSED: $1 kernels, all matched"
