#!/usr/bin/env bash
# Install what libegpu needs to build and test on Debian 12, skipping
# packages already present. The CUDA toolkit (nvcc, ptxas, cuda.h) is
# expected to be installed already (/usr/local/cuda).
set -euo pipefail

pkgs=(cmake make gcc pkg-config llvm-16-dev clang-16 libclang-rt-16-dev libbpf-dev libelf-dev
      zlib1g-dev libzstd-dev libffi-dev check libsubunit-dev python3
      swig python3-dev python3-pytest python3-numpy python3-setuptools golang-go
      libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler protobuf-compiler
      golang-github-google-pprof-dev prometheus python3-prometheus-client
      golang-github-prometheus-client-golang-dev
      python3-matplotlib
      ${EGPU_EXTRA_PKGS:-})
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}" >&2
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi
if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
	echo "deps: the CUDA toolkit (nvcc) is required; install it first" >&2
	exit 1
fi
