# SPDX-License-Identifier: MIT
"""Reads a .perfetto-trace the way a reader of Perfetto's format would:
decoded by protoc (`protoc --decode=egpu.perfetto.Trace` against
lib/trace/perfetto_trace.proto), then checked packet by packet:

- each sequence starts with a packet that clears its incremental state and
  sets its clock and track; its later packets (without flags: the writer
  leaves SEQ_NEEDS_INCREMENTAL_STATE out, its state is never lost) refer
  only to names and call stacks interned before on it;
- timestamps never go back on a sequence; begins and ends balance;
- every flow has both ends (one arrow per operation joined to a call), and
  an id is reused only after its flow ended.

Prints the counts (calls, operations, kernels, flows, stacks, bytes per
call) and, with --calls/--ops/--kernels/--flows, requires them exactly.
Several TRACEs are the files of one rotated stream: each is read alone,
the counts add up, and the flows are matched over all of them (an arrow
whose call and operation fell in two files has its ends in both);
--max-file-bytes bounds each file, --files the number of files.
--field-bytes prints where the bytes go: per call, by field of the
packets and of their track events (read off the wire, tags and lengths
included).

usage: check_perfetto.py SCHEMA TRACE... [--calls N] [--ops N]
       [--kernels N] [--flows N] [--max-bytes-per-call B]
       [--max-file-bytes B] [--files N] [--field-bytes]"""

import argparse
import collections
import os
import subprocess
import sys


def parse_text(lines):
    """protoc's text format as nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for raw in lines:
        line = raw.strip()
        if not line:
            continue
        if line == "}":
            cur = stack.pop()
        elif line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        else:
            key, _, value = line.partition(": ")
            if value.startswith('"'):
                value = bytes(value[1:-1], "utf-8").decode("unicode_escape")
            cur.setdefault(key, []).append(value)
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


class Seq:
    def __init__(self):
        self.ts = None
        self.names = set()
        self.stacks = set()
        self.depth = 0


def check_flow_ids(events):
    """Flow ids may be reused, but only once their flow has ended: in time
    order (an arrow's start first at a tie, so reuse at the very time
    another flow ends counts as overlap) each id is open at most once."""
    open_ids = set()
    for ts, kind, fid, where in sorted(events):
        if kind == 0:
            assert fid not in open_ids, where + ": flow id reused while open"
            open_ids.add(fid)
        else:
            assert fid in open_ids, where + ": ends a flow that is not open"
            open_ids.remove(fid)


def check(packets, flow_events):
    seqs = {}
    tracks = {}
    n = dict(calls=0, ops=0, kernels=0, stacks=0,
             fan_out=set(), fan_in=0)
    for i, p in enumerate(packets):
        where = "packet %d" % i
        if "track_descriptor" in p:
            d = p["track_descriptor"][0]
            tracks[one(d, "uuid")] = d
            continue
        sid = one(p, "trusted_packet_sequence_id")
        assert sid, where + ": no sequence"
        flags = int(one(p, "sequence_flags", "0"))
        if "clock_snapshot" in p:
            assert flags == 1 and sid not in seqs, where
            clocks = p["clock_snapshot"][0]["clocks"]
            inc = [c for c in clocks if one(c, "is_incremental") == "true"]
            assert len(inc) == 1 and one(inc[0], "clock_id") == "64", where
            defs = p["trace_packet_defaults"][0]
            assert one(defs, "timestamp_clock_id") == "64", where
            s = seqs[sid] = Seq()
            s.ts = int(one(inc[0], "timestamp"))
            s.track = one(defs["track_event_defaults"][0], "track_uuid")
            assert s.track in tracks, where + ": track not described"
            continue
        assert sid in seqs and flags == 0, where + ": state not set up"
        s = seqs[sid]
        interned = p.get("interned_data", [{}])[0]
        for e in interned.get("event_names", []):
            s.names.add(one(e, "iid"))
        frames = {one(f, "iid") for f in interned.get("frames", [])}
        fnames = {one(f, "iid") for f in interned.get("function_names", [])}
        assert frames == fnames, where
        s.frames = getattr(s, "frames", set()) | frames
        for c in interned.get("callstacks", []):
            assert all(f in s.frames for f in c.get("frame_ids", [])), where
            s.stacks.add(one(c, "iid"))
            n["stacks"] += 1
        s.ts += int(one(p, "timestamp"))
        assert s.ts < 1 << 63, where + ": time went back"
        e = p["track_event"][0]
        if one(e, "type") == "TYPE_SLICE_END":
            s.depth -= 1
            assert s.depth >= 0, where + ": an end without a begin"
            continue
        assert one(e, "type") == "TYPE_SLICE_BEGIN", where
        assert one(e, "name_iid") in s.names, where + ": name not interned"
        s.depth += 1
        thread = "thread" in tracks[s.track]
        legacy = e.get("legacy_event", [{}])[0]
        if thread:
            n["calls"] += 1
            stack = one(e, "callstack_iid")
            assert stack is None or stack in s.stacks, where + ": stack"
            flow_events += [(s.ts, 0, f, where) for f in e.get("flow_ids_old", [])]
            if one(legacy, "flow_direction") == "FLOW_OUT":
                n["fan_out"].add(one(legacy, "bind_id"))
        else:
            n["ops"] += 1
            args = [one(a, "name") for a in e.get("debug_annotations", [])]
            n["kernels"] += "bytes" not in args
            ends = e.get("terminating_flow_ids_old", [])
            flow_events += [(s.ts, 1, f, where) for f in ends]
            if one(legacy, "flow_direction") == "FLOW_IN":
                assert one(legacy, "bind_id") in n["fan_out"], where
                n["fan_in"] += 1
    for sid, s in seqs.items():
        assert s.depth == 0, "sequence %s: slices left open" % sid
    n["flows"] = n["fan_in"]
    n["sequences"] = len(seqs)
    del n["fan_out"], n["fan_in"]
    return n


# Field numbers of perfetto_trace.proto, for --field-bytes.
FIELDS = {
    "trace": {1: "packet"},
    "packet": {8: "timestamp", 10: "trusted_packet_sequence_id",
               13: "sequence_flags", 11: "track_event",
               12: "interned_data", 60: "track_descriptor",
               6: "clock_snapshot", 59: "trace_packet_defaults"},
    "track_event": {9: "type", 10: "name_iid", 36: "flow_ids_old",
                    42: "terminating_flow_ids_old", 56: "callstack_iid",
                    4: "debug_annotations", 6: "legacy_event"},
}


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def field_bytes(b, msg, lo, hi, out):
    """Bytes by field of the message b[lo:hi] of type @msg, into @out;
    packets and track events are opened, their tag and length counted
    apart."""
    i = lo
    while i < hi:
        start = i
        key, i = varint(b, i)
        name = FIELDS[msg].get(key >> 3, str(key >> 3))
        wire = key & 7
        if wire == 0:
            _, i = varint(b, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            n, j = varint(b, i)
            i = j + n
            if name in FIELDS:
                out[name + " (tag, length)"] += j - start
                field_bytes(b, name, j, i, out)
                continue
        out[msg + "." + name] += i - start


def decode(schema, path):
    with open(path, "rb") as f:
        data = f.read()
    out = subprocess.run(
        ["protoc", "--decode=egpu.perfetto.Trace",
         "-I" + os.path.dirname(os.path.abspath(schema)),
         os.path.abspath(schema)],
        input=data, capture_output=True, check=True)
    assert not out.stderr, out.stderr.decode()
    doc = parse_text(out.stdout.decode("utf-8", "replace").splitlines())
    return doc.get("packet", []), len(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("schema")
    ap.add_argument("trace", nargs="+")
    for k in ("calls", "ops", "kernels", "flows", "files"):
        ap.add_argument("--" + k, type=int)
    ap.add_argument("--max-bytes-per-call", type=float)
    ap.add_argument("--max-file-bytes", type=int)
    ap.add_argument("--field-bytes", action="store_true")
    a = ap.parse_args()
    n, flow_events = {}, []
    for path in a.trace:
        packets, size = decode(a.schema, path)
        assert a.max_file_bytes is None or size <= a.max_file_bytes, (
            "%s: %d bytes" % (path, size))
        for k, v in check(packets, flow_events).items():
            n[k] = n.get(k, 0) + v
        n["bytes"] = n.get("bytes", 0) + size
    starts = sum(1 for e in flow_events if e[1] == 0)
    assert starts * 2 == len(flow_events), "a flow without its other end"
    check_flow_ids(flow_events)
    n["flows"] += starts
    n["files"] = len(a.trace)
    per = n["bytes"] / n["calls"] if n["calls"] else 0
    print(" ".join("%s=%s" % kv for kv in sorted(n.items())) +
          " bytes_per_call=%.1f" % per)
    if a.field_bytes and n["calls"]:
        by = collections.Counter()
        for path in a.trace:
            with open(path, "rb") as f:
                data = f.read()
            field_bytes(data, "trace", 0, len(data), by)
        for k, v in by.most_common():
            print("%-50s %6.2f" % (k, v / n["calls"]))
    for k in ("calls", "ops", "kernels", "flows", "files"):
        want = getattr(a, k)
        assert want is None or n[k] == want, "%s: %d, want %d" % (
            k, n[k], want)
    assert a.max_bytes_per_call is None or per <= a.max_bytes_per_call, per
    return 0


if __name__ == "__main__":
    sys.exit(main())
