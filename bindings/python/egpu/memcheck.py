# SPDX-License-Identifier: MIT
"""Memory-safety checking of a program's CUDA kernels, from Python: runs
the program under ``egpu memcheck`` (docs/memcheck.md) and returns its
report.

    import egpu.memcheck
    r = egpu.memcheck.run(["python3", "train.py"], json=True, contain=True)
    for e in r.report["reports"]:
        print(e["kernel"], e["file"], e["line"], e["where"])

The check runs in the attach agent preloaded into the program started,
which follows that process's allocations and checks every module loaded
with PTX; so the program is a new process. Kernels a framework
instruments itself (egpu.triton, egpu.jax) are not checked: that needs
the allocation table inside libegpu, behind its API, which is not built
yet; and Triton's cubins (assembled by its own ptxas) load unchecked
under the agent.
"""
import json as _json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ._errors import Error, InvalidArgument, NotFound

# egpu memcheck's exit status when it could check nothing (docs/memcheck.md).
NOT_CHECKED = 125
# The text report's summary line: "egpu memcheck: no errors",
# "egpu memcheck: 1,024 errors at 1 site".
_SUMMARY = re.compile(r"^egpu memcheck: (?:no errors|([\d,]+) errors? at)", re.M)


@dataclass(frozen=True)
class Result:
    """What ``egpu memcheck`` reported. ``returncode``: its exit status
    (the program's when it failed, else 1 with errors, 0 without);
    ``errors``: the bad accesses counted; ``report``: the parsed JSON
    report (``reports``, ``errors``, ``sites``, ...) with ``json=True``,
    else the text report."""
    returncode: int
    errors: int
    report: object


def _cli(cli):
    path = cli or shutil.which("egpu")
    if not path:
        raise NotFound("egpu.memcheck: the egpu tool is not on PATH (pass cli=)")
    return path


def _parse(text, as_json):
    """(errors counted, report) of the report's text; errors None: it has
    no summary."""
    if not as_json:
        found = _SUMMARY.findall(text)
        return (int(found[-1].replace(",", "") or 0) if found else None), text
    # the report's object is its last line; notes or a probe's report
    # (egpu attach's, beside memcheck) may come before it
    last = [l for l in text.splitlines() if l.startswith("{")][-1:]
    try:
        report = _json.loads(last[0] if last else text)
        return int(report["errors"]), report
    except (ValueError, KeyError, TypeError):
        return None, text


def run(argv, contain=False, json=False, max_reports=None, cli=None):
    """Run the command ``argv`` (a list) under ``egpu memcheck``, its
    output passing through, and return a :class:`Result`. ``contain``: a
    bad load gives 0 and a bad store is dropped, so the program runs on;
    ``max_reports``: sites printed (default 20); ``cli``: the egpu tool
    (default: ``egpu`` on PATH). Raises :class:`egpu.Error` when there is
    no report (the program killed, or the agent could not run in it)."""
    if not argv or isinstance(argv, (str, bytes)):
        raise InvalidArgument("egpu.memcheck.run: argv must be a non-empty list")
    opts = ["--json"] if json else []
    opts += ["--contain"] if contain else []
    if max_reports is not None:
        if isinstance(max_reports, bool) or not isinstance(max_reports, int) or max_reports < 1:
            raise InvalidArgument(f"egpu.memcheck.run: max_reports must be an int >= 1, not {max_reports!r}")
        opts += ["--max-reports", str(max_reports)]
    with tempfile.TemporaryDirectory(prefix="egpu-memcheck-") as tmp:
        path = os.path.join(tmp, "report")
        rc = subprocess.run([_cli(cli), "memcheck", *opts, "-o", path, "--",
                             *map(str, argv)]).returncode
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
    errors, report = _parse(text, json)
    if errors is None:
        raise Error(f"egpu memcheck {argv[0]}: no report (exit status {rc}; "
                    "its messages are on stderr)")
    return Result(rc, errors, report)
