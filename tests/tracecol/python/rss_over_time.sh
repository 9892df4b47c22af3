#!/bin/sh
# SPDX-License-Identifier: MIT
# The traced program's resident memory over time: runs launch_loop.py for
# STEPS steps (or SECONDS) under `egpu trace` (or plain, with EGPU_CLI "-") and prints
# "SECONDS VmRSS_kB" every INTERVAL seconds until it ends, then the loop's
# own line. A tracer whose memory is bounded gives a flat curve once the
# program has warmed up. $TRACE_ARGS go to `egpu trace` (e.g. "--last 10"
# for the flight recorder, whose memory is that of its window).
#   rss_over_time.sh EGPU_CLI|- OUTDIR [STEPS [INTERVAL [SECONDS]]]
set -u
cli=$1 out=$2 steps=${3:-200000} interval=${4:-5} secs=${5:-}
here=$(dirname "$0")
mkdir -p "$out"
if [ "$cli" = - ]; then
  # shellcheck disable=SC2086  # $secs: no word when not given
  python3 "$here/launch_loop.py" plain "$steps" $secs > "$out/loop.out" 2> "$out/loop.err" &
  top=$! pid=$top
else
  # shellcheck disable=SC2086  # TRACE_ARGS: several words; $secs
  "$cli" trace -o "$out" ${TRACE_ARGS:-} -- python3 "$here/launch_loop.py" plain "$steps" $secs \
    > "$out/loop.out" 2> "$out/loop.err" &
  top=$!
  pid=""
  while [ -z "$pid" ] && kill -0 "$top" 2>/dev/null; do
    sleep 0.2
    pid=$(pgrep -P "$top" | head -n 1)
  done
fi
t=0
while [ -n "$pid" ] && [ -r "/proc/$pid/status" ]; do
  echo "$t $(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\).*/\1/p' "/proc/$pid/status")"
  sleep "$interval"
  t=$((t + interval))
done
wait "$top"
cat "$out/loop.out"
