# SPDX-License-Identifier: MIT
"""Python's own parsers on what test_writers.c left in the build folder:
the Chrome traces load as JSON and every flow joins a call to an
operation; the SVGs parse as XML and each frame is as wide as its time
(read from the folded stacks of the same trace)."""

import json
import os
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
SPAN = 1180.0  # width less the margins
FRAME_H = 16


def check_chrome(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == sum(e["ph"] == "s" for e in events), "flow ids repeat"
    assert starts.keys() == ends.keys(), "a flow without its other end"
    for e in spans:
        assert e["ts"] >= 0 and e["dur"] >= 0, e
    calls = {(e["tid"], e["ts"]): e for e in spans if e["cat"] == "cuda_api"}
    ops = [e for e in spans if e["cat"] != "cuda_api"]
    matched = 0
    for op in ops:
        matched += "corr" in op["args"] and any(
            c["args"]["corr"] == op["args"]["corr"] for c in calls.values())
    assert len(starts) == matched, (len(starts), matched)
    for fid, s in starts.items():
        f = ends[fid]
        call = calls[(s["tid"], s["ts"])]
        assert f["bp"] == "e" and s["pid"] == 1 and f["pid"] >= 2
        # the arrow ends at an operation of the same correlation id
        assert any(o["ts"] == f["ts"] and o["pid"] == f["pid"] and
                   o["tid"] == f["tid"] and
                   o["args"]["corr"] == call["args"]["corr"] for o in ops)
    return len(starts)


def read_folded(path):
    lines = {}
    with open(path, "rb") as f:
        for line in f.read().decode("utf-8", "replace").splitlines():
            stack, _, us = line.rpartition(" ")
            lines[stack] = int(us)
    return lines


def frames_of(svg):
    out = []
    for g in svg.iter(SVG + "g"):
        if g.get("class") != "f":
            continue
        title = g.find(SVG + "title").text
        rect = g.find(SVG + "rect")
        out.append((title[:title.rindex(" (")], float(rect.get("x")),
                    float(rect.get("y")), float(rect.get("width"))))
    return out


def check_svg(path, folded):
    svg = ET.parse(path).getroot()
    frames = frames_of(svg)
    total_us = sum(folded.values())
    if not frames:
        assert total_us == 0
        return 0
    root = [f for f in frames if f[0] == "all"]
    assert len(root) == 1 and abs(root[0][3] - SPAN) < 0.01, root

    def parent(fr):
        for p in frames:
            if (abs(p[2] - fr[2] - FRAME_H) < 0.5 and p[1] <= fr[1] + 0.01 and
                    fr[1] + fr[3] <= p[1] + p[3] + 0.01):
                return p
        raise AssertionError(f"frame {fr} has no parent")

    leaves = 0
    for fr in frames:
        if fr[0] == "all":
            continue
        kids = [k for k in frames if abs(fr[2] - k[2] - FRAME_H) < 0.5 and
                fr[1] - 0.01 <= k[1] and k[1] + k[3] <= fr[1] + fr[3] + 0.01]
        assert sum(k[3] for k in kids) <= fr[3] + 0.01 * (len(kids) + 1)
        if kids:
            continue
        names, p = [fr[0]], parent(fr)
        while p[0] != "all":
            names.insert(0, p[0])
            p = parent(p)
        stack = ";".join(names)
        assert stack in folded, f"leaf {stack!r} is no folded line"
        # a line is within 1 us of its time; x and width to 0.005 px
        want = fr[3] / SPAN * total_us
        assert abs(want - folded[stack]) <= 1 + 0.01 * total_us / SPAN, \
            (stack, want, folded[stack])
        leaves += 1
    assert leaves == len(folded), (leaves, len(folded))
    return leaves


def main(build):
    for name in ("synth2", "synth1", "empty"):
        base = os.path.join(build, name)
        if os.path.exists(base + ".json"):
            flows = check_chrome(base + ".json")
            print(f"{name}.json: valid JSON, {flows} flows")
        if os.path.exists(base + ".svg"):
            leaves = check_svg(base + ".svg", read_folded(base + ".folded"))
            print(f"{name}.svg: valid XML, {leaves} leaf frames proportional to time")


if __name__ == "__main__":
    main(sys.argv[1])
