# SPDX-License-Identifier: MIT
"""egpu attach on unmodified programs, on the GPU: vecapp with static and
shared cudart under the cuda-counter and threadhist probes (results
unchanged, counts exact), vecapp without PTX (left alone and listed), a
program linked with -lcuda loading 100 modules (time added, the cache),
a PyTorch eager script when torch is installed, --metrics scraped
while vecapp's kernels run, and evapp (built as bpftime builds its
examples, shared and static cudart) under events.bpf.o: its GPU ring
records printed decoded (JSON lines and text), written raw, its maps
seeded with --set and --set-file, its bpf_printk lines naming the
kernel. Exit 77 without a GPU.

usage: attach_gpu.py EGPU APPS_DIR COUNTER.o THREADHIST.o BENCH OUT_DIR
                     EVENTS.o EVAPPS_DIR
"""
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_present import gpu_present  # noqa: E402

egpu, apps, counter, threadhist, bench, out, events_probe, evapps = sys.argv[1:9]
HERE = os.path.dirname(os.path.abspath(__file__))
ADD_THREADS, ADD_LAUNCHES = 1 << 20, 3
WORK_THREADS, WORK_LAUNCHES = 80 * 128, 2
EV_GRID, EV_LAUNCHES = 8, 2  # evapp.cu
failures = []


def attach(tag, probe, cmd, extra=(), want_rc=0):
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
    check(tag, "exit status", r.returncode, want_rc)
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


def run_atomizer(app):
    """atomizer ends 3 of 4 vec_add threads at entry (helper 507): the
    threads it let through and ended are counted exactly, and vecapp finds
    3/4 of its sums wrong (exit 1), which is the point."""
    tag = "atomizer"
    stdout, rep, _ = attach(tag, os.path.join(apps, "atomizer.bpf.o"), [app], want_rc=1)
    check(tag, "results", f"results: WRONG ({ADD_THREADS * 3 // 4} wrong)" in stdout, True)
    got = {e["key"][0]: e["value"][0]
           for e in rep.get("maps", {}).get("threads", {}).get("entries", [])}
    check(tag, "threads let through / ended",
          got, {0: ADD_LAUNCHES * ADD_THREADS // 4, 1: ADD_LAUNCHES * ADD_THREADS * 3 // 4})


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
    # PyTorch's compute_75 PTX gets probes translated for sm_75: none fail
    check("torch", "modules that failed to instrument", rep.get("failed"), 0)
    print(f"  torch: {len(rep.get('kernels', []))} kernels with probes, "
          f"{len(rep.get('sass_only', []))} modules SASS only")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url):
    """(text, seconds) of one GET, or (None, seconds) while nothing listens."""
    t = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            text = r.read().decode()
    except OSError:
        text = None
    return text, time.monotonic() - t


def run_metrics(app, seconds=6):
    """threadhist under --metrics while vecapp keeps stride_work running:
    scrapes see per_thread's runs grow, and end at most at the final count."""
    tag, port = "metrics", free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    path = os.path.join(out, tag + ".json")
    cmd = [egpu, "attach", "--json", "-o", path, "--metrics", f"127.0.0.1:{port}",
           "--metrics-spec", "entered_at=skip", threadhist, "--", app, str(seconds)]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    runs, times, text = [], [], None
    while p.poll() is None:
        got, secs = scrape(url)
        m = got and re.search(r'^egpu_per_thread_total\{[^}]*key="0"[^}]*\} (\d+)$', got, re.M)
        if m:
            text = got
            runs.append(int(m.group(1)))
            times.append(secs)
        time.sleep(0.25)
    stdout, stderr = p.communicate()
    print(f"== {tag} (rc {p.returncode})\n{stdout}{stderr}")
    if text:
        print("  last scrape:\n    " + "\n    ".join(text.strip().splitlines()))
    check(tag, "exit status", p.returncode, 0)
    more = re.search(r"stride_work: (\d+) more launches", stdout)
    final = (WORK_LAUNCHES + int(more.group(1))) * WORK_THREADS if more else None
    rep = json.load(open(path)) if os.path.exists(path) else {}
    got = [e["value"] for e in rep.get("maps", {}).get("per_thread", {}).get("entries", [])
           if e["key"] == [0]]
    check(tag, "final runs (report)", got, [[final]])
    check(tag, "scrapes while running >= 3", len(runs) >= 3, True)
    check(tag, "runs grow between scrapes", len(set(runs)) >= 2 and runs == sorted(runs), True)
    check(tag, "scrapes never above the final count", bool(runs) and max(runs) <= (final or 0), True)
    check(tag, "series labelled with the gpu", bool(text) and 'gpu_uuid="GPU-' in text, True)
    if times:
        print(f"  metrics: {len(times)} scrapes, median {1e3 * statistics.median(times):.1f} ms "
              f"(min {1e3 * min(times):.1f}, max {1e3 * max(times):.1f})")


def json_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_events(kind):
    """evapp under events.bpf.o, maps seeded: scale[0] = 3 (--set), config
    from a file (every 2nd block sends, bias -5, tag "gpu", level 3). Each
    launch: blocks 0, 2, 4, 6 send a block_event to the GPU ring `events`
    (its value type: printed by name), block 0's thread 0 an exit_note to
    the RINGBUF `exits` (typed as the only 16-byte struct), block 0 one
    print line, prefixed with the kernel's name; totals[0] gets 3 per
    block."""
    tag, app = f"events_{kind}", os.path.join(evapps, f"evapp_{kind}")
    seeds = os.path.join(out, tag + ".seeds.json")
    with open(seeds, "w") as f:
        json.dump({"config": {"0": {"every": 2, "bias": -5, "tag": "gpu", "level": 3}}}, f)
    ev_path = os.path.join(out, tag + ".events.jsonl")
    stdout, rep, _ = attach(tag, events_probe, [app],
                            ["--set", "scale[0]=3", "--set-file", seeds, "--events-out", ev_path])
    check(tag, "results", "results: correct" in stdout, True)
    lines = json_lines(ev_path) if os.path.exists(ev_path) else []
    events = [l["value"] for l in lines if l.get("map") == "events" and "value" in l]
    exits = [l["value"] for l in lines if l.get("map") == "exits" and "value" in l]
    summary = {l["map"]: (l["records"], l["drops"]) for l in lines if "records" in l}
    check(tag, "events decoded: blocks that sent", sorted(e["block"] for e in events),
          sorted(list(range(0, EV_GRID, 2)) * EV_LAUNCHES))
    check(tag, "events decoded: seeded fields",
          {(e["bias"], e["tag"], e["phase"]) for e in events}, {(-5, "gpu", "PHASE_ENTRY")})
    check(tag, "events: timestamps set", bool(events) and all(e["ns"] > 0 for e in events), True)
    check(tag, "exit notes decoded", exits,
          [{"blocks_seen": EV_GRID, "level": 3, "magic": 0xe61d}] * EV_LAUNCHES)
    check(tag, "records and drops at exit", summary,
          {"events": (EV_GRID // 2 * EV_LAUNCHES, 0), "exits": (EV_LAUNCHES, 0)})
    totals = [e["value"] for e in rep.get("maps", {}).get("totals", {}).get("entries", [])]
    check(tag, "totals[0] from the seeded scale", totals, [[3 * EV_GRID * EV_LAUNCHES]])
    with open(os.path.join(out, tag + ".log")) as f:
        check(tag, "print lines naming the kernel", f.read().count(
            "egpu: vec_scale(float*, float, int) block (0,0,0) thread (0,0,0): "
            "block 0 sent its event"), EV_LAUNCHES)


def run_events_text_and_raw():
    """The same in text on stderr, every block sending; then raw to one
    file per ring."""
    tag, app = "events_text", os.path.join(evapps, "evapp_shared")
    r = subprocess.run([egpu, "attach", "--set", 'config[0]={every: 1, tag: "txt"}',
                        events_probe, "--", app], capture_output=True, text=True)
    print(f"== {tag} (rc {r.returncode})\n{r.stdout}{r.stderr}")
    check(tag, "exit status", r.returncode, 0)
    check(tag, "a decoded line", any(
        l.startswith("events: {block: 7, ns: ") and
        l.endswith('bias: 0, phase: PHASE_ENTRY, tag: "txt"}') for l in r.stderr.splitlines()),
        True)
    check(tag, "records and drops reported",
          f"ring events: {EV_GRID * EV_LAUNCHES} records, 0 dropped" in r.stderr, True)
    raw = os.path.join(out, "events_raw")
    r = subprocess.run([egpu, "attach", "--events-raw", raw, "--set", "config[0]={every: 1}",
                        events_probe, "--", app], capture_output=True, text=True)
    print(f"== events_raw (rc {r.returncode})\n{r.stdout}{r.stderr}")
    sizes = {m: os.path.getsize(f"{raw}.{m}") if os.path.exists(f"{raw}.{m}") else None
             for m in ("events", "exits")}
    # the record file's 16-byte header, then each record: an 8-byte
    # header and the payload padded to 8 bytes
    check("events_raw", "raw file sizes", sizes,
          {"events": 16 + EV_GRID * EV_LAUNCHES * (8 + 32),
           "exits": 16 + EV_LAUNCHES * (8 + 16)})


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
run_atomizer(os.path.join(apps, "vecapp_static"))
for kind in ("shared", "static"):
    run_events(kind)
run_events_text_and_raw()
run_metrics(os.path.join(apps, "vecapp_static"))
run_bench()
run_torch()
print("FAILED:\n  " + "\n  ".join(failures) if failures else "all attach checks passed")
sys.exit(1 if failures else 0)
