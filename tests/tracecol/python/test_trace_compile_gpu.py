# SPDX-License-Identifier: MIT
"""`egpu trace` on a torch.compile program: the flame graph (trace.svg)
and folded stacks show the Python function that called the model,
predict() of compiled_model.py, above the Triton kernels it launched.

    python3 test_trace_compile_gpu.py EGPU_CLI OUTDIR

Exits 77 (skipped) without torch or a GPU."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, "compiled_model.py")


def main():
    cli, out = sys.argv[1], sys.argv[2]
    try:
        import torch
    except ImportError:
        print("skipped: no torch")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    r = subprocess.run([cli, "trace", "-o", out, "--", sys.executable, PROG],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    predict = f"predict ({PROG}:"
    stacks = [ln.rsplit(" ", 1)[0].split(";")
              for ln in open(os.path.join(out, "trace.folded"))]
    triton = [s for s in stacks if s[-1].startswith("[GPU_Kernel]triton_")]
    assert triton, "no Triton kernel in the trace"
    under = [s for s in triton if any(f.startswith(predict) for f in s)]
    # every compiled kernel launched by predict() sits under it, below
    # main() and above the launch
    assert under, [";".join(s) for s in triton[:3]]
    for s in under:
        i = next(i for i, f in enumerate(s) if f.startswith(predict))
        assert any(f.startswith("main (") for f in s[:i]), s
        assert not any(f.startswith("_PyEval_EvalFrameDefault") for f in s), s
    svg = open(os.path.join(out, "trace.svg")).read()
    assert "predict (" in svg
    print(f"{len(under)} Triton kernel stacks under predict(), e.g.:")
    print(";".join(under[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
