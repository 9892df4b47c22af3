#!/usr/bin/env bash
# Install into a scratch prefix, then build a consumer with pkg-config and
# with find_package(egpu), and run both on an eBPF object.
set -euo pipefail
build=$1 src=$2 obj=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

cc -std=c11 -Wall -Werror "$src/consumer/consumer.c" -o "$prefix/by_pkgconfig" \
	$(pkg-config --cflags --libs egpu)
"$prefix/by_pkgconfig" "$obj"

cmake -S "$src/consumer" -B "$prefix/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cm" >/dev/null
"$prefix/cm/consumer" "$obj"
echo "install: pkg-config and find_package consumers both ran"
