# SPDX-License-Identifier: MIT
"""`egpu trace` on the launch-bound PyTorch loop (launch_loop.py) into
Perfetto's binary trace, decoded by protoc (check_perfetto.py) with exact
counts: as many kernels and operations as the tracer's own totals on
stderr, a flow for every kernel joined to its launch, and every call with
its interned stack. Prints the bytes per call.

    python3 test_trace_perfetto_gpu.py EGPU_CLI OUTDIR CHECKER SCHEMA [STEPS]

Exits 77 (skipped) without torch or a GPU."""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "launch_loop.py")


def main():
    cli, out, checker, schema = sys.argv[1:5]
    steps = sys.argv[5] if len(sys.argv) > 5 else "500"
    try:
        import torch
    except ImportError:
        print("skipped: no torch")
        return 77
    if not torch.cuda.is_available():
        print("skipped: no GPU")
        return 77
    r = subprocess.run([cli, "trace", "-o", out, "--", sys.executable, LOOP,
                        "plain", steps], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    m = re.search(r"(\d+) launches, (\d+) kernels \((\d+) matched to a "
                  r"launch\), (\d+) copies", r.stderr)
    assert m, r.stderr
    launches, kernels, matched, copies = map(int, m.groups())
    assert kernels >= 8 * int(steps), (kernels, steps)
    trace = os.path.join(out, "trace.perfetto-trace")
    c = subprocess.run([sys.executable, checker, schema, trace,
                        "--kernels", str(kernels),
                        "--ops", str(kernels + copies)],
                       capture_output=True, text=True, timeout=600)
    assert c.returncode == 0, (c.stdout, c.stderr)
    print(c.stdout.strip())
    got = dict(kv.split("=") for kv in c.stdout.split())
    # one call per launch and per copy call; every joined kernel has its
    # arrow (copies joined add theirs)
    assert int(got["calls"]) >= launches, (got, launches)
    assert matched <= int(got["flows"]) <= kernels + copies, (got, matched)
    assert int(got["stacks"]) >= 1
    print(f"{launches} launches, {float(got['bytes']) / launches:.1f} "
          f"bytes per launch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
