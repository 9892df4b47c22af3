#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Registers of the trace mode's kernels, whole and with the device runtime
compiled apart (docs/events.md, "The splicer's trace mode", static counts).

    scripts/trace_regs.py build/tests/events/workloads.trace.ptx [CAP]

The instrumented PTX carries the device runtime's functions as text; ptxas
compiles kernel and callees as one program, so a kernel takes what its
rarest callee needs (egpu_dev_trace_site: 64) plus what it keeps live
across the call. This prints each kernel's registers that way, then with
the runtime compiled on its own (ptxas -c, --maxrregcount CAP, 32 by
default) and linked (nvlink), where a callee keeps the count it was
compiled to and spills on its own (rare) path. Needs ptxas and nvlink
(CUDA_HOME/bin or PATH); no GPU.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

RUNTIME_END = "// end egpu linked code"
REGCOUNT = 0x2F  # EIATTR_REGCOUNT in .nv.info: {symbol, registers}
CALLED = ("egpu_dev_trace_site", "egpu_dev_trace_claim", "egpu_dev_trace_alone")


def tool(name):
    path = shutil.which(name) or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", name)
    if not os.path.exists(path):
        sys.exit(f"trace_regs: no {name} (PATH, CUDA_HOME)")
    return path


def split(ptx):
    """(runtime module, application module) of one instrumented module."""
    head_end = ptx.index("\n", ptx.index(".address_size")) + 1
    head = ptx[:head_end]
    start = ptx.index("// begin egpu linked code")
    end = ptx.index(RUNTIME_END)
    runtime = ptx[start:end]
    protos = []
    for name in CALLED:
        m = re.search(r"^\.func [^\n]*\b" + name + r"\(\n(?:[^\n]*\n)*?\);",
                      runtime, re.M)
        if m:
            protos.append(".extern " + m.group(0))
    visible = re.sub(r"^\.func ", ".visible .func ", runtime, flags=re.M)
    app = head + "\n".join(protos) + "\n" + ptx[head_end:start] + ptx[end:]
    return head + visible, app


def sections(data):
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    size, count, names = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * size)
             for i in range(count)]

    def text(base, off):
        return data[base + off:data.index(b"\0", base + off)].decode()
    return {text(heads[names][4], h[0]): h for h in heads}, text


def registers(cubin):
    """{function: registers} from a cubin's .nv.info sections."""
    data = open(cubin, "rb").read()
    secs, text = sections(data)
    sym, strtab = secs[".symtab"], secs[".strtab"]
    names = [text(strtab[4], struct.unpack_from("<I", data, sym[4] + i * 24)[0])
             for i in range(sym[5] // 24)]
    out = {}
    for name, h in secs.items():
        if not name.startswith(".nv.info"):
            continue
        p, end = h[4], h[4] + h[5]
        while p < end:
            fmt, attr = data[p], data[p + 1]
            if fmt == 4:  # a value of its own size
                n = struct.unpack_from("<H", data, p + 2)[0]
                if attr == REGCOUNT:
                    idx, val = struct.unpack_from("<II", data, p + 4)
                    out[names[idx]] = val
                p += 4 + n
            else:
                p += 4 if fmt in (2, 3) else 2
    return out


def run(*args):
    subprocess.run(args, check=True, capture_output=True, text=True)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cap = sys.argv[2] if len(sys.argv) == 3 else "32"
    ptx = open(sys.argv[1]).read()
    ptxas, nvlink = tool("ptxas"), tool("nvlink")
    kernels = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
    with tempfile.TemporaryDirectory() as d:
        whole = os.path.join(d, "whole.cubin")
        run(ptxas, "-arch=sm_90", sys.argv[1], "-o", whole)
        runtime, app = split(ptx)
        for name, text in (("rt.ptx", runtime), ("app.ptx", app)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        run(ptxas, "-c", "-arch=sm_90", "--maxrregcount", cap,
            os.path.join(d, "rt.ptx"), "-o", os.path.join(d, "rt.o"))
        run(ptxas, "-c", "-arch=sm_90", os.path.join(d, "app.ptx"),
            "-o", os.path.join(d, "app.o"))
        linked = os.path.join(d, "linked.cubin")
        run(nvlink, "-arch=sm_90", os.path.join(d, "app.o"),
            os.path.join(d, "rt.o"), "-o", linked)
        one, apart = registers(whole), registers(linked)
    print(f"kernel registers: one program / runtime apart (--maxrregcount {cap})")
    for k in kernels:
        print(f"{k:24} {one.get(k, '?'):>4} {apart.get(k, '?'):>4}")


if __name__ == "__main__":
    main()
