#!/usr/bin/env bash
# Pack a build for a GPU machine that lacks the build dependencies (no LLVM
# headers, libbpf, Check, SWIG or Go there): build here, then copy the source
# tree and the build outputs the `gpu` tests need into DEST, which the GPU
# machine runs with scripts/gpu_test.sh. CPU-only test programs and compiler
# outputs (CMakeFiles) stay behind to keep DEST small.
#
#   scripts/gpu_pack.sh DEST [BUILD_DIR]     (BUILD_DIR defaults to build-gpu)
# Run it from inside the checkout to pack (any worktree); DEST/gpu_test.sh is
# this script's companion, so the GPU machine runs
#   bash DEST/gpu_test.sh DEST [ctest args]
# A DEST ending in .tgz is written as that archive of the folder DEST less
# .tgz (a third of its size: 19 MB for 63 MB, within the device tool's
# 64 MiB with the Go test programs), which the GPU machine unpacks first:
#   tar xzf DIR/NAME.tgz -C DIR && bash DIR/NAME/gpu_test.sh DIR/NAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(git rev-parse --show-toplevel)
dest=$(realpath -m "${1:?usage: gpu_pack.sh DEST [BUILD_DIR]}")
tgz=
case $dest in *.tgz) tgz=$dest dest=${dest%.tgz} ;; esac
build=$(realpath -m "${2:-$root/build-gpu}")
export PATH="$PATH:/usr/local/cuda/bin"

# Go's GPU tests travel as a compiled test program (the GPU machine has no Go)
go=OFF
command -v go >/dev/null && command -v swig >/dev/null && go=ON
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DEGPU_BUILD_PYTHON=ON -DEGPU_BUILD_GO=$go \
		-DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
fi
cmake --build "$build" -j"$(nproc)" >/dev/null

# CPU-only tests: the first word of every non-gpu test's command
cpu_only=$(cd "$build" && ctest -LE gpu --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    c = t.get("command") or []
    if c and c[0].startswith(sys.argv[1]):
        print(c[0])' "$build")
gpu_cmds=$(cd "$build" && ctest -L gpu --show-only=json-v1 | python3 -c '
import json, sys
for t in json.load(sys.stdin)["tests"]:
    for w in t.get("command") or []:
        print(w)')

rm -rf "$dest"
mkdir -p "$dest/src"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 cp --parents -t "$dest/src")
cp "$here/gpu_test.sh" "$dest/"
# The conformance vectors the tests read from ../shared beside the checkout
[ -d "$root/../shared/conformance" ] &&
	mkdir -p "$dest/shared" && cp -r "$root/../shared/conformance" "$dest/shared/"
# libmicrohttpd, which the GPU machine lacks (egpu's --metrics dlopens it)
mhd=$(ldconfig -p | awk '/libmicrohttpd\.so\.12 .*x86-64/ { print $NF; exit }')
[ -n "$mhd" ] && mkdir -p "$dest/lib" && cp -L "$mhd" "$dest/lib/"
echo "$root" >"$dest/ROOT"
echo "$build" >"$dest/BUILD"
mkdir -p "$dest/build"
# tests/ptx holds only CPU tests and what their runs wrote (45 MB of PTX).
(cd "$build" && find . ! -type d ! -path '*/CMakeFiles/*' ! -path '*/gocache/*' \
	! -path '*/gopath/*' ! -path './tests/ptx/*' ! -name '*.cubin' ! -name '*.a' -print0 |
	xargs -0 cp -P -p --parents -t "$dest/build")
for exe in $cpu_only; do
	grep -qxF "$exe" <<<"$gpu_cmds" && continue
	rm -f "$dest/build/${exe#"$build"/}"
done
# Debug info is most of a RelWithDebInfo binary and no test reads it (the
# tracer unwinds with .eh_frame and names frames from the symbol tables,
# which stay): the pack must fit the device tool's 64 MiB.
find "$dest/build" -type f ! -name '*.o' -print0 | while IFS= read -r -d '' f; do
	if [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ]; then
		strip --strip-debug "$f"
	fi
done
if [ -n "$tgz" ]; then
	tar czf "$tgz" -C "$(dirname "$dest")" "$(basename "$dest")"
	rm -rf "$dest"
	dest=$tgz
fi
du -sh "$dest"
