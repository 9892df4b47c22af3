# SPDX-License-Identifier: MIT
"""egpu attach on unmodified programs, on the GPU: vecapp with static and
shared cudart under the cuda-counter and threadhist probes (results
unchanged, counts exact), vecapp without PTX (left alone and listed), a
program linked with -lcuda loading 100 modules (time added, the cache),
and a PyTorch eager script when torch is installed. Exit 77 without a GPU.

usage: attach_gpu.py EGPU APPS_DIR COUNTER.o THREADHIST.o BENCH OUT_DIR
"""
import json
import os
import subprocess
import sys
import time

egpu, apps, counter, threadhist, bench, out = sys.argv[1:7]
HERE = os.path.dirname(os.path.abspath(__file__))
ADD_THREADS, ADD_LAUNCHES = 1 << 20, 3
WORK_THREADS, WORK_LAUNCHES = 80 * 128, 2
failures = []


def gpu_present():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


def attach(tag, probe, cmd, extra=()):
    """Run cmd under egpu attach --json; returns (stdout, report, seconds)."""
    path = os.path.join(out, tag + ".json")
    t = time.monotonic()
    r = subprocess.run([egpu, "attach", "--json", "-o", path, *extra, probe, "--", *cmd],
                       capture_output=True, text=True)
    secs = time.monotonic() - t
    with open(os.path.join(out, tag + ".log"), "w") as f:
        f.write(r.stdout + r.stderr)
    print(f"== {tag} ({secs:.2f} s, rc {r.returncode})\n{r.stdout}{r.stderr}")
    report = json.load(open(path)) if os.path.exists(path) else {}
    check(tag, "exit status", r.returncode, 0)
    return r.stdout, report, secs


def check(tag, what, got, want):
    ok = got == want
    print(f"  {tag}: {what}: {got} (want {want}) {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{tag}: {what}: {got} != {want}")


def kernel_id(report, name):
    for k in report.get("kernels", []):
        if name in k["demangled"]:
            return k["id"]
    return None


def stats_of(report, kid):
    for e in report.get("maps", {}).get("stats", {}).get("entries", []):
        if e["key"] == [kid]:
            return e["value"]
    return None


def run_counter(tag, app):
    stdout, rep, _ = attach(tag, counter, [app])
    check(tag, "results", "results: correct" in stdout, True)
    for name, launches, threads in (("vec_add", ADD_LAUNCHES, ADD_THREADS),
                                    ("stride_work", WORK_LAUNCHES, WORK_THREADS)):
        v = stats_of(rep, kernel_id(rep, name))
        check(tag, f"{name} launches/entries/exits",
              v[:3] if v else None, [launches, launches * threads, launches * threads])


def run_threadhist(tag, app):
    stdout, rep, _ = attach(tag, threadhist, [app])
    check(tag, "results", "results: correct" in stdout, True)
    runs = [e["value"] for e in rep.get("maps", {}).get("per_thread", {}).get("entries", [])
            if e["key"] == [0]]
    check(tag, "stride_work thread runs (summed)", runs, [[WORK_LAUNCHES * WORK_THREADS]])


def run_bench():
    t = time.monotonic()
    plain = subprocess.run([bench, "100"], capture_output=True, text=True)
    plain_s = time.monotonic() - t
    print(f"== bench without probes ({plain_s:.2f} s)\n{plain.stdout}{plain.stderr}")
    stdout, rep, secs = attach("bench", counter, [bench, "100"])
    check("bench", "modules instrumented", rep.get("instrumented"), 200)
    check("bench", "cache hits (second pass)", rep.get("cache_hits"), 100)
    check("bench", "kernels, one id each", len(rep.get("kernels", [])), 100)
    vals = [e["value"][:3] for e in rep.get("maps", {}).get("stats", {}).get("entries", [])]
    check("bench", "every kernel 2 launches x 64 threads", vals, [[2, 128, 128]] * 64)
    print(f"  bench: process took {secs - plain_s:+.3f} s with probes; "
          f"instrumenting {rep.get('instrument_ms', 0):.1f} ms, driver loads "
          f"{rep.get('load_ms', 0):.1f} ms over 200 loads")


def run_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("== torch not installed: PyTorch script skipped")
        return
    stdout, rep, _ = attach("torch", counter, [sys.executable, os.path.join(HERE, "torch_eager.py")])
    check("torch", "results", "results: correct" in stdout, True)
    v = stats_of(rep, kernel_id(rep, "own_count"))
    check("torch", "own_count launches/entries/exits", v[:3] if v else None, [1, 256, 256])
    print(f"  torch: {len(rep.get('kernels', []))} kernels with probes, "
          f"{len(rep.get('sass_only', []))} modules SASS only")


if not gpu_present():
    print("no GPU: skipped")
    sys.exit(77)
os.makedirs(out, exist_ok=True)
for kind in ("static", "shared"):
    run_counter(f"counter_{kind}", os.path.join(apps, f"vecapp_{kind}"))
    run_threadhist(f"threadhist_{kind}", os.path.join(apps, f"vecapp_{kind}"))
stdout, rep, _ = attach("sass_only", counter, [os.path.join(apps, "vecapp_sass")])
check("sass_only", "results", "results: correct" in stdout, True)
check("sass_only", "instrumented", rep.get("instrumented"), 0)
check("sass_only", "listed", len(rep.get("sass_only", [])) > 0, True)
run_bench()
run_torch()
print("FAILED:\n  " + "\n  ".join(failures) if failures else "all attach checks passed")
sys.exit(1 if failures else 0)
