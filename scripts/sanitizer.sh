# Sourced by the scripts that run compute-sanitizer: sets $sanitizer to
# $COMPUTE_SANITIZER, else the one on PATH, else CUDA's; exits if none.
sanitizer=${COMPUTE_SANITIZER:-compute-sanitizer}
command -v "$sanitizer" >/dev/null ||
	sanitizer=/usr/local/cuda/bin/compute-sanitizer
[ -x "$sanitizer" ] || command -v "$sanitizer" >/dev/null ||
	{ echo "no compute-sanitizer found (set COMPUTE_SANITIZER)" >&2; exit 1; }
