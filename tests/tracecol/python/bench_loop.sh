#!/bin/sh
# SPDX-License-Identifier: MIT
# The tracer's cost on launch_loop.py beside Proton's, three rounds, the
# modes interleaved: plain, Proton (Python context), Proton (shadow),
# `egpu trace` with Python frames and without (EGPU_TRACE_NO_PYTHON=1),
# and with the JSON trace held to the end (--format json, the output
# before the streamed Perfetto trace); the egpu rows also give the
# Perfetto trace's bytes per launch.
#   bench_loop.sh EGPU_CLI OUTDIR [ROUNDS [STEPS]]
set -u
cli=$1 out=$2 rounds=${3:-3} steps=${4:-2000}
here=$(cd "$(dirname "$0")" && pwd) # absolute: the loop runs in OUTDIR
mkdir -p "$out"
cd "$out" || exit 1
for r in $(seq "$rounds"); do
  for mode in plain proton proton-shadow egpu egpu-nopy egpu-json; do
    # an egpu mode's environment, options and trace file (whose bytes
    # per launch it reports; the JSON, gigabytes, is not kept)
    env="" opts="" f=""
    case $mode in
    egpu) f=egpu-$r/trace.perfetto-trace ;;
    egpu-nopy) env=EGPU_TRACE_NO_PYTHON=1 f=egpunopy-$r/trace.perfetto-trace ;;
    egpu-json) opts="--format json" f=egpujson-$r/trace.json ;;
    esac
    if [ -n "$f" ]; then
      # shellcheck disable=SC2086  # $env, $opts: words or none
      env $env "$cli" trace $opts -o "${f%/*}" -- \
        python3 "$here/launch_loop.py" plain "$steps" \
        > "$mode.$r.out" 2> "$mode.$r.err"
    else
      python3 "$here/launch_loop.py" "$mode" "$steps" \
        > "$mode.$r.out" 2> "$mode.$r.err"
    fi
    size=""
    n=$(sed -n 's/.*: \([0-9]*\) launches,.*/\1/p' "$mode.$r.err")
    b=$( [ -n "$f" ] && stat -c %s "$f" 2>/dev/null)
    [ -n "$n" ] && [ -n "$b" ] && [ "$n" -gt 0 ] &&
      size=" trace_bytes=$b bytes_per_launch=$((b / n))"
    rm -f egpu*-"$r"/trace.svg egpujson-"$r"/trace.json
    echo "round $r $mode $(cat "$mode.$r.out")$size"
  done
done
