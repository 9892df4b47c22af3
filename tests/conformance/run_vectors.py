#!/usr/bin/env python3
"""Run ../shared/conformance/vectors.tsv through `egpu run`, as the
bpf_conformance runner would: program hex on stdin, memory hex as the first
argument, r0 in hex on stdout. Rows with an expected value must return
exactly it (all 64 bits); rows with an error, and the negative/unused-* rows,
must be refused with a message. Exit 77 (skipped) for --backend gpu where no
GPU is usable."""
import argparse
import csv
import subprocess
import sys

# The suite's own self-tests (see the vectors README): the expected value of
# this row is deliberately wrong, so a correct runtime returns something else.
WRONG_ON_PURPOSE = {"negative/incorrect_return_value_high_bits.data"}


def run(egpu, backend, prog_hex, mem_hex):
    args = [egpu, "run"]
    if mem_hex:
        args.append(" ".join(mem_hex[i:i + 2] for i in range(0, len(mem_hex), 2)))
    args += ["--backend", backend]
    prog = "  ".join(prog_hex[i:i + 2] for i in range(0, len(prog_hex), 2))
    return subprocess.run(args, input=prog + "\n", capture_output=True,
                          text=True, timeout=60)


def gpu_usable(egpu):
    p = run(egpu, "gpu", "b7000000010000009500000000000000", "")
    if p.returncode == 0:
        return True
    print("skipped: no usable GPU: " + (p.stdout + p.stderr).strip())
    return False


def check_row(row, p):
    out = (p.stdout.strip() or p.stderr.strip())
    if row["expected"]:
        if p.returncode != 0:
            return "failed: " + out
        got = int(p.stdout.strip(), 16)
        want = int(row["expected"], 16)
        if row["name"] in WRONG_ON_PURPOSE:
            return None if got != want else "matched a deliberately wrong value"
        return None if got == want else "r0 %#x, expected %#x" % (got, want)
    if p.returncode == 0:
        return "accepted, should be refused: r0 " + p.stdout.strip()
    if not out:
        return "refused without a message"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--egpu", required=True)
    ap.add_argument("--vectors", required=True)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--every", type=int, default=1,
                    help="run one row in N (sanitized builds: each row "
                    "starts a process, the plain build runs them all)")
    a = ap.parse_args()
    if a.backend == "gpu" and not gpu_usable(a.egpu):
        return 77
    passed = failed = 0
    with open(a.vectors, newline="") as f:
        for i, row in enumerate(csv.DictReader(f, delimiter="\t")):
            if i % a.every:
                continue
            p = run(a.egpu, a.backend, row["program_hex"], row["mem_hex"])
            why = check_row(row, p)
            if why:
                failed += 1
                print("FAIL %s: %s" % (row["name"], why))
            else:
                passed += 1
    print("conformance (%s): %d passed, %d failed" % (a.backend, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
