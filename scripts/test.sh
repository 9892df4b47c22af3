#!/usr/bin/env bash
# Install what is missing, build, and run every test: the unit, binding
# (pytest, go test) and GPU tests under ctest (GPU tests report "skipped"
# without a GPU), a Release build of the library and CLI, the unit tests
# again under AddressSanitizer and UBSan, and a clang build of the library
# whose fuzz targets each run briefly.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
scripts/deps.sh

jobs=$(nproc)
# Each stage's time on stderr, for keeping CI within its budget.
stage() {
	local t0=$SECONDS
	"$@"
	echo "test.sh: $* took $((SECONDS - t0)) s" >&2
}
# The bindings test with the Python that deps.sh gave pytest and numpy.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEGPU_WERROR=ON \
	-DEGPU_BUILD_PYTHON=ON -DEGPU_BUILD_GO=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
stage cmake --build build -j"$jobs"
stage ctest --test-dir build --output-on-failure -j"$jobs"
# pytest's and go test's own summaries, which ctest keeps in its log
grep -E '^[0-9]+ (passed|failed|skipped)|^(ok|FAIL)[[:space:]]+libegpu|GPU tests skipped' \
	build/Testing/Temporary/LastTest.log || true

# The build a packager runs (Release: other warnings at -O3), library and
# CLI only; scripts/build_matrix.sh builds every type with gcc and clang.
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DEGPU_WERROR=ON \
	-DEGPU_BUILD_TESTS=OFF -DEGPU_BUILD_EXAMPLES=OFF >/dev/null
stage cmake --build build-release -j"$jobs"

# -O1, as AddressSanitizer's documentation advises: at -O0 the sanitized
# tests take nearly twice as long.
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	-DEGPU_SANITIZE=ON -DEGPU_WERROR=ON -DEGPU_BUILD_EXAMPLES=OFF >/dev/null
stage cmake --build build-asan -j"$jobs"
# The first run's times, so that ctest starts the longest tests first.
mkdir -p build-asan/Testing/Temporary
cp build/Testing/Temporary/CTestCostData.txt build-asan/Testing/Temporary/ 2>/dev/null || true
ASAN_OPTIONS=detect_leaks=1 stage ctest --test-dir build-asan --output-on-failure \
	-LE "gpu|install" -j"$jobs"

# Fuzzing, briefly (tests/fuzz, docs/fuzzing.md): where clang links
# libFuzzer, each target runs for EGPU_FUZZ_SECONDS (0: not at all). The
# same build is CI's clang build (-Werror) of the library; clang builds
# the rest with scripts/build_matrix.sh (too long for CI's 20 minutes).
if [ "${EGPU_FUZZ_SECONDS:-10}" != 0 ] && echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
	clang-16 -x c -fsanitize=fuzzer,address -o /dev/null - 2>/dev/null; then
	cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang-16 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DEGPU_FUZZ=ON -DEGPU_SANITIZE=ON -DEGPU_WERROR=ON -DEGPU_BUILD_TESTS=OFF \
		-DEGPU_BUILD_EXAMPLES=OFF -DEGPU_BUILD_TOOLS=OFF >/dev/null
	stage cmake --build build-fuzz -j"$jobs" --target egpu_fuzzers
	stage tests/fuzz/run_fuzz.sh build-fuzz "${EGPU_FUZZ_SECONDS:-10}"
else
	echo "test.sh: clang-16 cannot link libFuzzer: fuzzing skipped" >&2
fi
