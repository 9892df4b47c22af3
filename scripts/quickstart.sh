#!/usr/bin/env bash
# Install what is missing, build, and run the main example: cuda-counter
# instruments a real kernel and runs it on the GPU when there is one; without
# one it shows the GPU-free half of the pipeline and says why it stops there.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
scripts/deps.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target egpu_cli cuda-counter >/dev/null

probe=build/examples/cuda-counter/counter.bpf.o
echo "== the probe (examples/cuda-counter/counter.bpf.c), as libegpu sees it"
build/tools/egpu inspect "$probe"
echo
echo "== the application's kernels instrumented and run (examples/cuda-counter)"
build/examples/cuda-counter/cuda-counter
