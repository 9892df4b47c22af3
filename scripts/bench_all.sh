#!/usr/bin/env bash
# Every benchmark table of docs/benchmarks.md in one run on one GPU, named:
# probe overhead (bench_overhead), memory probes and `egpu memcheck` next to
# compute-sanitizer memcheck on the same binary (bench_memcheck.sh: device
# time of vecadd 16M and SGEMM 2048^3 under each checker over the plain
# kernels'; it runs bench_mem, whose
# "trace (spans)" rows are the complete trace on spans: "empty ring" the
# trace kept in GPU memory, "ratio" streamed while a thread drains, every
# span decoded, "B/access" ring bytes per lane access; "trace (spans,
# lossless)" the same into a 16 MiB lossless ring the warps wait on:
# "dropped" must read 0.00%, "drain GB/s" is what was delivered into host
# memory while the kernels ran; "trace (spans, lossless, chunks)" the same
# drained as chunks on 8 consumer threads),
# event rings (ringbuf_bench: rings in host memory, and a ring in GPU memory
# consumed per record, in batches, on 4 threads, to a file, as chunks; the
# "GPU, 64 MiB, lossless" rows are "16 B per thread, lossless, delivered":
# 0 dropped, "delivered" GB/s) and host lookups
# (lookup_bench), and the probe cost on a torch.compile'd transformer
# (transformer_bench.py) and its complete trace (transformer_trace_bench.py;
# both skipped with a message without PyTorch/Triton).
#
#   scripts/bench_all.sh [BUILD_DIR] [RUNS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
runs=${2:-20}
bench="$build/tests/bench"

echo "# libegpu benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), median of $runs runs"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader |
	sed 's/^/GPU, driver: /'
echo
echo "## Probe overhead (bench_overhead $runs)"
"$bench/bench_overhead" "$runs"
echo
echo "## Memory probes, egpu memcheck and compute-sanitizer memcheck (bench_memcheck.sh)"
bash "$here/bench_memcheck.sh" "$build" "$runs"
echo
echo "## Event rings (ringbuf_bench 5)"
# Exits 1 after printing its table when a row lost records or a ring that
# holds a whole run dropped some (a FAIL line says which): say so, go on.
"$bench/ringbuf_bench" 5 || echo "**ringbuf_bench FAILED** (exit $?): see the FAIL lines above"
echo
echo "## Host lookups (lookup_bench 2001)"
"$bench/lookup_bench" 2001
echo
echo "## Probes on a torch.compile'd transformer (transformer_bench.py $build/tests/bench $runs)"
python3 "$here/../tests/bench/transformer_bench.py" "$bench" "$runs" ||
	echo "**transformer_bench FAILED** (exit $?): outputs differ or no probe ran"
echo
echo "## The complete trace of a torch.compile'd transformer (transformer_trace_bench.py $build/tests/bench $runs)"
python3 "$here/../tests/bench/transformer_trace_bench.py" "$bench" "$runs" ||
	echo "**transformer_trace_bench FAILED** (exit $?): outputs differ, nothing traced or records dropped"
