#!/usr/bin/env bash
# Install what is missing, build, and run every test: the unit and GPU tests
# under ctest (GPU tests report "skipped" without a GPU), then the unit tests
# again under AddressSanitizer and UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
scripts/deps.sh

jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DEGPU_SANITIZE=ON \
	-DEGPU_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -LE "gpu|install" -j"$jobs")
