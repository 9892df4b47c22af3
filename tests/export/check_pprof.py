#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""go tool pprof reads libegpu's profile of the synthetic trace.

check_pprof.py GO PPROF_SYNTH WORKDIR

The synthetic trace (tests/trace/synth.c) ran matmul_kernel 5 times for
4,500,032 ns in all, under the stacks main;forward;qkv_proj (twice),
main;forward;mlp_up and main;decode;cudaGraphLaunch (a graph launch with
rmsnorm and softmax too), and one launch without its record.
"""

import os
import subprocess
import sys


def pprof(go, args, profile, env):
    out = subprocess.run([go, "tool", "pprof"] + args + [profile], env=env,
                         capture_output=True, text=True, errors="replace",
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def main():
    go, synth, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    profile = os.path.join(work, "synth.pb.gz")
    subprocess.run([synth, profile], check=True)
    with open(profile, "rb") as f:
        assert f.read(2) == b"\x1f\x8b", "not gzip'd"
    env = dict(os.environ, PPROF_TMPDIR=work, HOME=work)

    top = pprof(go, ["-top", "-nodecount=50", "-nodefraction=0"], profile, env)
    print(top)
    assert "Type: gpu" in top, top
    line = next(l for l in top.splitlines() if l.endswith("[GPU_Kernel]matmul_kernel"))
    assert line.split()[0] == "4500.03us", line
    assert "[GPU_Memcpy]HtoD" in top and "[GPU_Kernel]softmax_kernel" in top

    top = pprof(go, ["-top", "-sample_index=launches"], profile, env)
    line = next(l for l in top.splitlines() if l.endswith("[GPU_Kernel]matmul_kernel"))
    assert line.split()[0] == "5", line

    traces = pprof(go, ["-traces"], profile, env)
    print(traces)
    # leaf first: the kernel, the launch API, then the host frames
    assert ("[GPU_Kernel]matmul_kernel\n" in traces and
            "cudaLaunchKernel\n" in traces), traces
    stacks = [t.split("\n") for t in traces.split("-----------+")]
    qkv = [s for s in stacks if any(l.strip().endswith("qkv_proj") for l in s)]
    assert qkv, traces
    frames = [l.split()[-1] for l in qkv[0] if l.strip()]
    i = frames.index("[GPU_Kernel]matmul_kernel")
    assert frames[i:i + 5] == ["[GPU_Kernel]matmul_kernel", "cudaLaunchKernel",
                               "qkv_proj", "forward", "main"], frames
    graph = [s for s in stacks if any("rmsnorm_kernel" in l for l in s)]
    labels = "".join(graph[0]).replace(" ", "")
    assert "graph:true" in labels and "device:0" in labels and \
        "stream:14" in labels, graph

    # every operation twice in a row: one sample each, counts doubled
    twice = os.path.join(work, "twice.pb.gz")
    subprocess.run([synth, twice, "twice"], check=True)
    top = pprof(go, ["-top", "-sample_index=launches"], twice, env)
    line = next(l for l in top.splitlines() if l.endswith("[GPU_Kernel]matmul_kernel"))
    assert line.split()[0] == "10", line
    top = pprof(go, ["-top"], twice, env)
    line = next(l for l in top.splitlines() if l.endswith("[GPU_Kernel]matmul_kernel"))
    assert line.split()[0] == "9000.06us", line

    print("go tool pprof read the profile: kernels, stacks, labels as expected")


if __name__ == "__main__":
    main()
