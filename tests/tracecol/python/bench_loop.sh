#!/bin/sh
# SPDX-License-Identifier: MIT
# The tracer's cost on launch_loop.py beside Proton's, three rounds, the
# modes interleaved: plain, Proton (Python context), Proton (shadow),
# `egpu trace` with Python frames and without (EGPU_TRACE_NO_PYTHON=1);
# the egpu rows also give the Perfetto trace's bytes per launch.
#   bench_loop.sh EGPU_CLI OUTDIR [ROUNDS]
set -u
cli=$1 out=$2 rounds=${3:-3}
here=$(cd "$(dirname "$0")" && pwd) # absolute: the loop runs in OUTDIR
mkdir -p "$out"
cd "$out" || exit 1
for r in $(seq "$rounds"); do
  for mode in plain proton proton-shadow egpu egpu-nopy; do
    case $mode in
    egpu) "$cli" trace -o "egpu-$r" -- python3 "$here/launch_loop.py" plain \
            > "$mode.$r.out" 2> "$mode.$r.err" ;;
    egpu-nopy) EGPU_TRACE_NO_PYTHON=1 "$cli" trace -o "egpunopy-$r" -- \
            python3 "$here/launch_loop.py" plain \
            > "$mode.$r.out" 2> "$mode.$r.err" ;;
    *) python3 "$here/launch_loop.py" "$mode" > "$mode.$r.out" 2> "$mode.$r.err" ;;
    esac
    rm -f egpu*-"$r"/trace.svg  # kept: the Perfetto trace, folded, summary
    size=""
    for d in egpu-"$r" egpunopy-"$r"; do
      case $mode in egpu) [ "$d" = "egpu-$r" ] || continue ;;
        egpu-nopy) [ "$d" = "egpunopy-$r" ] || continue ;; *) continue ;; esac
      # the Perfetto trace's bytes per launch (egpu trace's own count)
      n=$(sed -n 's/.*: \([0-9]*\) launches,.*/\1/p' "$mode.$r.err")
      b=$(stat -c %s "$d/trace.perfetto-trace" 2>/dev/null)
      [ -n "$n" ] && [ -n "$b" ] && [ "$n" -gt 0 ] &&
        size=" perfetto_bytes=$b bytes_per_launch=$((b / n))"
    done
    echo "round $r $mode $(cat "$mode.$r.out")$size"
  done
done
