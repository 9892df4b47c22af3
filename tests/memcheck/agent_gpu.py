# SPDX-License-Identifier: MIT
"""egpu memcheck's check on the GPU, through the attach agent alone (no
`egpu memcheck`): each case of the suite run with libegpu_attach.so
preloaded, EGPU_MEMCHECK=1 and the report written to EGPU_ATTACH_OUT.
A buggy case must be reported at its BUG line (suite.cu:LINE) with a
non-zero error count on the report's last line; a correct case must end
with "no errors". Then: JSON (EGPU_ATTACH_JSON=1: "errors" and the line),
containment (EGPU_MEMCHECK_CONTAIN=1: the VMM case,
which faults unchecked, runs to its end), and memcheck beside a probe
(EGPU_ATTACH=counter.bpf.o: both reports, the bug found). Exit 77
without a GPU.

usage: agent_gpu.py LIBEGPU_ATTACH.so SUITE SUITE.cu PROBE.o OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_present import gpu_present  # noqa: E402

agent, suite, source, probe, out = sys.argv[1:]
failures = []


def bug_lines():
    """{tag: line} of the BUG:TAG marks in the suite's source."""
    lines = {}
    for n, text in enumerate(open(source), 1):
        m = re.search(r"// BUG:(\w+)", text)
        if m:
            lines[m.group(1)] = n
    return lines


def cases():
    """[(case, tag or '-')] as the suite lists them."""
    r = subprocess.run([suite], capture_output=True, text=True)
    return [tuple(line.split()[:2]) for line in r.stdout.splitlines()
            if len(line.split()) >= 2]


def run(case, tag, **env):
    path = os.path.join(out, f"{tag}.{case}.txt")
    e = dict(os.environ, LD_PRELOAD=agent, EGPU_MEMCHECK="1",
             EGPU_ATTACH_OUT=path, **env)
    r = subprocess.run([suite, case], env=e, capture_output=True, text=True,
                       timeout=300)
    report = open(path).read() if os.path.exists(path) else ""
    print(f"== {case} {env} (rc {r.returncode})\n{r.stderr}{report}")
    return r, report


def check(what, ok):
    print(f"  {what}: {'ok' if ok else 'FAIL'}")
    if not ok:
        failures.append(what)


def errors_of(report):
    last = report.strip().splitlines()[-1] if report.strip() else ""
    m = re.match(r"egpu memcheck: ([\d,]+) errors? at", last)
    return int(m.group(1).replace(",", "")) if m else 0 if "no errors" in last else -1


def main():
    if not gpu_present():
        print("no GPU: skipped")
        return 77
    os.makedirs(out, exist_ok=True)
    lines = bug_lines()
    for case, tag in cases():
        r, report = run(case, "text")
        if tag == "-":
            check(f"{case}: clean", report.strip().endswith("egpu memcheck: no errors"))
            check(f"{case}: exit 0", r.returncode == 0)
            continue
        check(f"{case}: errors counted", errors_of(report) > 0)
        check(f"{case}: reported at suite.cu:{lines[tag]}",
              f"suite.cu:{lines[tag]}\n" in report)

    r, report = run("global_after", "json", EGPU_ATTACH_JSON="1")
    try:
        j = json.loads(report)
        check("json: errors", j["errors"] > 0)
        check("json: line", j["reports"][0]["line"] == lines["store"])
    except (ValueError, KeyError, IndexError) as e:
        check(f"json: parses ({e})", False)

    r, report = run("vmm", "contain", EGPU_MEMCHECK_CONTAIN="1")
    check("contain: vmm runs to its end", r.returncode == 0)
    check("contain: vmm's bug found", f"suite.cu:{lines['copy']}\n" in report)

    # Beside a probe, the file holds the probe's report and memcheck's
    # goes to stderr (one document a file).
    r, report = run("global_after", "probe", EGPU_ATTACH=probe)
    check("with a probe: its report in the file", report.strip() != "" and
          "egpu memcheck:" not in report)
    check("with a probe: the bug found", f"suite.cu:{lines['store']}\n" in r.stderr)
    check("with a probe: the count last", errors_of(r.stderr) > 0)

    print("FAILED:\n  " + "\n  ".join(failures) if failures else "all passed")
    return 1 if failures else 0


sys.exit(main())
