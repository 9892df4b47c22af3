#!/usr/bin/env bash
# Build every CMake configuration with gcc and clang and fail on any
# compiler warning (-Werror through EGPU_WERROR). Usage:
#   scripts/build_matrix.sh [BUILD_ROOT] [TYPE...]   (default: all four types)
# EGPU_MATRIX_CC="gcc clang-16" chooses the compilers (default: both).
# Bindings are left out: they are built by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/cuda/bin"
root=${1:-build-matrix}
shift || true
types=("$@")
((${#types[@]})) || types=(Release Debug RelWithDebInfo MinSizeRel)
read -ra ccs <<<"${EGPU_MATRIX_CC:-gcc $(command -v clang-16 || command -v clang)}"
for cc in "${ccs[@]}"; do
	for type in "${types[@]}"; do
		dir="$root/$(basename "$cc")-$type"
		echo "build-matrix: $(basename "$cc") $type" >&2
		cmake -S . -B "$dir" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE="$type" \
			-DEGPU_WERROR=ON >/dev/null
		cmake --build "$dir" -j"$(nproc)" >"$dir.log" 2>&1 ||
			{ grep -E 'warning|error' "$dir.log" | head -20; exit 1; }
	done
done
echo "build-matrix: every configuration built without a warning" >&2
