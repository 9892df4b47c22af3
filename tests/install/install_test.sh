#!/usr/bin/env bash
# Install into a scratch prefix, then run what a user of the install runs,
# with no LD_LIBRARY_PATH: the installed egpu, a consumer built with
# pkg-config, one built with find_package(egpu), one linked statically
# against libegpu.a with `pkg-config --static`, and (given GO_DIR, the Go
# package) docs/go.md's test recipe as written there.
# Usage: install_test.sh BUILD SRC OBJ [GO_DIR]
set -euo pipefail
build=$1 src=$2 obj=$3 go_dir=${4:-}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
unset LD_LIBRARY_PATH

readelf -d "$prefix/bin/egpu" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\./lib\]' || {
	echo "install: bin/egpu has no RUNPATH \$ORIGIN/../lib" >&2
	exit 1
}
"$prefix/bin/egpu" --version
"$prefix/bin/egpu" inspect "$obj" >/dev/null

cc -std=c11 -Wall -Werror "$src/consumer/consumer.c" -o "$prefix/by_pkgconfig" \
	$(pkg-config --cflags --libs egpu)
"$prefix/by_pkgconfig" "$obj"

cmake -S "$src/consumer" -B "$prefix/cm" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$prefix/cm" >/dev/null
"$prefix/cm/consumer" "$obj"

# libegpu.a in place of -legpu, the rest from Libs.private.
libs=$(pkg-config --static --libs egpu)
cc -std=c11 -Wall -Werror "$src/consumer/consumer.c" -o "$prefix/static" \
	$(pkg-config --cflags egpu) ${libs/-legpu/$prefix/lib/libegpu.a}
if readelf -d "$prefix/static" | grep -q 'libegpu\.so'; then
	echo "install: the static consumer needs libegpu.so" >&2
	exit 1
fi
"$prefix/static" "$obj"

if [[ $go_dir ]]; then
	# Offline, with fresh caches of its own (the recipe sets neither; a
	# cache kept between runs keeps a former prefix's paths in its links).
	(cd "$go_dir" && GOCACHE="$prefix/gocache" \
		GOPATH="$prefix/gopath" GOPROXY=off go test ./... 2>&1 | grep -v 'Warning 302')
	echo "install: go test ./... ran against the installed library"
fi
echo "install: egpu, and the pkg-config, find_package and static consumers ran without LD_LIBRARY_PATH"
