# SPDX-License-Identifier: MIT
"""Host probes under egpu attach, on the GPU: launchapp (50 launches, the
grid of launch i is i + 1 blocks) built with the shared and the static
CUDA runtime, under launchlat.bpf.o: a uprobe on cudaLaunchKernel notes
each launch's time in a map keyed by its grid, the kernel's entry probe
reads it back into a latency histogram; a uretprobe on cuLibraryLoadData
counts the runtime's module loads; one on cuMemAlloc counts the
driver allocations under cudaMalloc. With EGPU_MEMCHECK=1 in the
environment (ctest attach_uprobe_memcheck_gpu) memcheck wraps cuMemAlloc
too: the two are chained (hook.c), so the probe must still see it and
memcheck must not turn itself off. Checks that the results stay
correct, that the host probe ran once per launch, that every kernel found
its launch's timestamp (counts exact), and that the latencies are
plausible (host and GPU timestamps on one clock). Exit 77 without a GPU.

usage: uprobe_gpu.py EGPU LAUNCHLAT.o OUT_DIR APP...
"""
import json
import os
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_present import gpu_present  # noqa: E402

egpu, probe, out, *apps = sys.argv[1:]
LAUNCHES = 50
SECOND_BIN = 31  # bins k >= 31 hold latencies of 2^30 ns (1.07 s) and more
failures = []


def check(tag, what, got, want):
    ok = got == want
    print(f"  {tag}: {what}: {got} (want {want}) {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{tag}: {what}: {got} != {want}")


def map_values(report, name):
    """{key: value} of an array map of one-word keys and values."""
    entries = report.get("maps", {}).get(name, {}).get("entries", [])
    return {e["key"][0]: e["value"][0] for e in entries}


def run(app):
    tag = os.path.basename(app)
    path = os.path.join(out, tag + ".json")
    r = subprocess.run([egpu, "attach", "--json", "-o", path, probe, "--", app],
                       capture_output=True, text=True)
    print(f"== {tag} (rc {r.returncode})\n{r.stdout}{r.stderr}")
    check(tag, "exit status", r.returncode, 0)
    check(tag, "results", "results: correct" in r.stdout, True)
    check(tag, "host probe attached",
          "host probe 'on_launch' on cudaLaunchKernel (uprobe)" in r.stderr, True)
    rep = json.load(open(path)) if os.path.exists(path) else {}
    counts = map_values(rep, "counts")
    hist = map_values(rep, "latency")
    print(f"  {tag}: latency histogram (bin k: [2^(k-1), 2^k) ns): {hist}")
    check(tag, "host calls seen", counts.get(0, 0), LAUNCHES)
    check(tag, "kernels that found their launch", counts.get(1, 0), LAUNCHES)
    check(tag, "kernels that did not", counts.get(2, 0), 0)
    check(tag, "histogram total", sum(hist.values()), LAUNCHES)
    # the runtime loads its fatbin with cuLibraryLoadData (docs/attach.md)
    check(tag, "module loads seen by the uretprobe", counts.get(3, 0) >= 1, True)
    check(tag, "driver allocations seen by the uretprobe",
          counts.get(4, 0) >= 1, True)
    if os.environ.get("EGPU_MEMCHECK") == "1":
        check(tag, "memcheck stayed on (no 'egpu memcheck:' message)",
              "egpu memcheck:" in r.stderr, False)
    check(tag, "latencies of a second or more",
          sum(v for k, v in hist.items() if k >= SECOND_BIN), 0)
    # the host's timestamp precedes the launch call; only the clock
    # calibration's error (microseconds) could put a start before it
    check(tag, "at most a tenth started before their launch",
          hist.get(0, 0) <= LAUNCHES // 10, True)


def main():
    if not gpu_present():
        print("no GPU: skipped")
        return 77
    os.makedirs(out, exist_ok=True)
    for app in apps:
        run(app)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


sys.exit(main())
