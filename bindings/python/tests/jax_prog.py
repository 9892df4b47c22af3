# SPDX-License-Identifier: MIT
"""A jitted JAX function (matmul, tanh, gelu, softmax, a reduction) run
three times; prints one JSON line: the result's bytes (hex) and, with
"egpu" as the argument, what egpu.jax saw (per kernel: threads that ran
the probe, threads launched; the stand-in server's counts).

    python3 jax_prog.py plain|egpu|attach [PROBE.o]
"attach" is the plain program, for `egpu attach PROBE.o -- ...`."""
import json
import os
import sys

mode = sys.argv[1]
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
# XLA's autotuner picks kernels by their time, and probes change it: no
# autotuning, so that the plain and the instrumented runs compare.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                           " --xla_gpu_autotune_level=0").strip()
if mode == "egpu":
    import egpu
    import egpu.jax  # before JAX compiles anything
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


@jax.jit
def f(a, b):
    x = jnp.tanh(a @ b)
    x = jax.nn.gelu(x)
    x = jax.nn.softmax(x, axis=-1)
    return x.sum(axis=0) + jnp.max(x)


rng = np.random.default_rng(0)
a = jnp.asarray(rng.standard_normal((512, 512), dtype=np.float32))
b = jnp.asarray(rng.standard_normal((512, 512), dtype=np.float32))


def run():
    for _ in range(3):
        out = f(a, b).block_until_ready()
    return np.asarray(out).tobytes().hex()


result = {"mode": mode}
if mode == "egpu":
    major, minor = jax.devices()[0].compute_capability.split(".")
    ctx = egpu.Context(sm=f"sm_{major}{minor}")
    obj = ctx.load(sys.argv[2])
    obj.attach_all()
    with egpu.jax.instrument(obj) as inst:
        result["out"] = run()
    result["threads"] = inst.by_kernel("threads")
    result["launched"] = inst.by_kernel("launched")
    result["stats"] = inst.stats
    result["after"] = run()  # plain again: compiled anew, no probes
    result["threads_after"] = inst.by_kernel("threads")
else:
    result["out"] = run()
print(json.dumps(result))
