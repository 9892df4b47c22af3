#!/usr/bin/env bash
# On a GPU machine, run the `gpu` tests of a tree packed by gpu_pack.sh:
# put the tree and build back at the paths they were built at, rebuild the
# Python extension for this machine's Python, and run ctest -L gpu.
#
#   scripts/gpu_test.sh PACK [ctest args...]    (e.g. -R events_gpu)
# Logs go to $OUT when it is set.
set -uo pipefail
pack=$(realpath "${1:?usage: gpu_test.sh PACK [ctest args]}")
shift
root=$(cat "$pack/ROOT")
build=$(cat "$pack/BUILD")
# The root first: the build folder may lie inside it.
mkdir -p "$(dirname "$root")"
[ -e "$root" ] || ln -sfn "$pack/src" "$root"
mkdir -p "$(dirname "$build")"
[ -e "$build" ] || ln -sfn "$pack/build" "$build"
[ -e "$(dirname "$root")/shared" ] || [ ! -d "$pack/shared" ] ||
	ln -sfn "$pack/shared" "$(dirname "$root")/shared"

# Programs at paths the build machine named that this one lacks
py=$(command -v python3)
[ -e /usr/bin/cmake ] || ln -s "$(command -v cmake)" /usr/bin/cmake
for p in /root/.pyenv/shims/python3 /usr/bin/python3; do
	grep -rlF "$p" --include=CTestTestfile.cmake "$build" |
		xargs -r sed -i "s#$p#$py#g"
done

# The SWIG wrapper compiled for this Python
wrap=$(find "$build/bindings/python" -name '*_wrap.c' | head -1)
if [ -n "$wrap" ]; then
	inc=$($py -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	suf=$($py -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	rm -f "$build"/bindings/python/egpu/_egpu*.so
	gcc -shared -fPIC -O2 -w -I"$inc" -I"$root/include" -I"$root/bindings/python" \
		"$wrap" "$root/bindings/python/py_thread.c" -L"$build/lib" -legpu -Wl,-rpath,"$build/lib" \
		-o "$build/bindings/python/egpu/_egpu$suf" || echo "gpu_test: python extension failed"
fi

# libmicrohttpd from the pack where this machine has none
[ -f "$pack/lib/libmicrohttpd.so.12" ] && ! ldconfig -p | grep -q libmicrohttpd.so.12 &&
	export EGPU_MICROHTTPD="$pack/lib/libmicrohttpd.so.12"

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cd "$build" && ctest -L gpu --output-on-failure "$@" 2>&1 | tee /tmp/ctest.log
rc=${PIPESTATUS[0]}
[ -n "${OUT:-}" ] && cp Testing/Temporary/LastTest.log "$OUT/" 2>/dev/null
exit "$rc"
