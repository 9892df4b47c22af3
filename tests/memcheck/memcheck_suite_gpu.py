# SPDX-License-Identifier: MIT
"""egpu memcheck on its suite (suite/suite.cu), on the GPU: every case
under `egpu memcheck --json`. A buggy case must exit non-zero with its bug
reported on the line suite.cu marks "BUG:TAG KIND SPACE", with that kind
and space, and nothing reported on another line (vmm, whose bad load
faults unchecked, must fail with a status other than 1, its report
checked only when it has one); a correct case (ok_*) must exit 0 with no
errors. With --contain, global_after and vmm must run to the end: exit 1,
the bug reported. One text run (no --json) must name the line too, and
where the allocation was made (its call stack: global_after). Exit 77
without a GPU.

usage: memcheck_suite_gpu.py EGPU SUITE SUITE.cu OUT_DIR
"""
import json
import os
import re
import subprocess
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_present import gpu_present  # noqa: E402

egpu, suite, source, out = sys.argv[1:5]
TIMEOUT_S = 300
CONTAINED = ("global_after", "vmm")
# Cases whose bad access is not contained without --contain: the run
# faults, and what the agent can still report is not required.
FAULTS = ("vmm",)
failures = []


def check(what, ok, detail=""):
    print(f"  {what}: {'ok' if ok else 'FAIL'}{' (' + detail + ')' if detail and not ok else ''}")
    if not ok:
        failures.append(what)


def markers():
    """{TAG: (line, kind, space)} from the source's BUG: comments."""
    bugs = {}
    with open(source) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"// BUG:(\w+) (\w+) (\w+)", line)
            if m:
                bugs[m.group(1)] = (n, m.group(2), m.group(3))
    return bugs


def memcheck(tag, case, *opts):
    """egpu memcheck OPTS -- SUITE CASE: (exit status, report or None)."""
    path = os.path.join(out, tag + (".json" if "--json" in opts else ".txt"))
    if os.path.exists(path):
        os.unlink(path)
    try:
        r = subprocess.run([egpu, "memcheck", *opts, "-o", path, "--", suite, case],
                           capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        print(f"== {tag}: timed out after {TIMEOUT_S} s")
        return None, None
    text = open(path).read() if os.path.exists(path) else ""
    print(f"== {tag} (rc {r.returncode})\n{r.stdout}{r.stderr}{text}")
    if "--json" not in opts:
        return r.returncode, text
    # the report's object is its last line, after any notes
    last = [l for l in text.splitlines() if l.startswith("{")][-1:]
    try:
        return r.returncode, json.loads(last[0]) if last else None
    except ValueError as e:
        check(f"{tag}: the report parses as JSON", False, str(e))
        return r.returncode, None


def reported_at(tag, report, bug):
    """Checks that @report names @bug (line, kind, space) and no other line."""
    line, kind, space = bug
    entries = report.get("reports", []) if report else []
    at = [e for e in entries if e.get("file") and
          os.path.basename(e["file"]) == os.path.basename(source) and e.get("line") == line]
    check(f"{tag}: errors counted", bool(report) and report.get("errors", 0) > 0,
          json.dumps(report))
    check(f"{tag}: reported at line {line}", bool(at),
          ", ".join(f"{e.get('file')}:{e.get('line')}" for e in entries))
    check(f"{tag}: a {space} {kind}",
          any(e.get("kind") == kind and e.get("space") == space for e in at),
          ", ".join(f"{e.get('space')} {e.get('kind')}" for e in at))
    others = [e for e in entries if e not in at]
    check(f"{tag}: nothing reported elsewhere", not others,
          ", ".join(f"{e.get('kernel')} {e.get('file')}:{e.get('line')}" for e in others))


def main():
    if not gpu_present():
        print("no GPU: skipped")
        return 77
    os.makedirs(out, exist_ok=True)
    bugs = markers()
    cases = [l.split() for l in subprocess.run([suite], capture_output=True, text=True,
                                               check=True).stdout.splitlines()]
    check("suite.cu's markers cover every buggy case",
          all(tag in bugs for _, tag in cases if tag != "-"), str(bugs))
    for case, tag in cases:
        rc, report = memcheck(case, case, "--json")
        if tag == "-":
            check(f"{case}: exit status 0", rc == 0, str(rc))
            check(f"{case}: clean", report is not None and report.get("errors") == 0 and
                  not report.get("reports"), json.dumps(report))
            continue
        check(f"{case}: exit status non-zero", rc not in (0, None), str(rc))
        if case in FAULTS:
            check(f"{case}: faults unchecked, not contained", rc not in (0, 1, None), str(rc))
        if case not in FAULTS or (report and report.get("errors")):
            reported_at(case, report, bugs.get(tag, (0, "", "")))
    for case in CONTAINED:
        tag = dict(cases)[case]
        rc, report = memcheck(case + "_contain", case, "--json", "--contain")
        check(f"{case} --contain: runs to the end (exit 1)", rc == 1, str(rc))
        reported_at(case + " --contain", report, bugs.get(tag, (0, "", "")))
    line = bugs["store"][0]
    rc, text = memcheck("global_after_text", "global_after")
    check("global_after, text: exit status 1", rc == 1, str(rc))
    check(f"global_after, text: names suite.cu:{line}",
          f"{os.path.basename(source)}:{line}" in (text or ""), text or "")
    made = (text or "").split(" made at ", 1)[1:]
    check("global_after, text: the allocation made in global_after (its stack)",
          bool(made) and "global_after" in made[0].splitlines()[0], text or "")
    print(f"memcheck_suite_gpu: {len(failures)} failures" if failures else
          "memcheck_suite_gpu: all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
