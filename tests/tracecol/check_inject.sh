#!/bin/sh
# SPDX-License-Identifier: MIT
# `egpu trace -o DIR -- trace_app --plain` on an unmodified program: the
# command's status comes back, the four files are written, every kernel is
# matched to its launch, and the outputs name kernels and launching code;
# with CHECKER and SCHEMA (and protoc), the Perfetto trace decodes with as
# many kernels as stderr counts and a flow for each matched one at least.
# Usage: check_inject.sh EGPU TRACE_APP DIR [CHECKER SCHEMA]
egpu=$1 app=$2 dir=$3 checker=${4:-} schema=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$dir"
"$egpu" trace -o "$dir" -- "$app" --plain 2>"$dir.err"
rc=$?
cat "$dir.err" >&2
[ "$rc" -eq 0 ] || exit "$rc"
for f in trace.folded trace.perfetto-trace trace.svg summary.txt; do
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
if [ -n "$checker" ] && command -v protoc >/dev/null; then
	out=$(python3 "$checker" "$schema" "$dir/trace.perfetto-trace" \
		--kernels "$1") || fail "Perfetto trace: $out"
	echo "$out"
	flows=$(echo "$out" | sed -n 's/.*flows=\([0-9]*\).*/\1/p')
	[ "$flows" -ge "$3" ] || fail "$flows flows for $3 matched kernels"
fi
echo "PASSED: $1 kernels, all matched"
