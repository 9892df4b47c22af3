# SPDX-License-Identifier: MIT
"""Verification from Python: verdicts at load, verify() with its log and
statistics, strict loading and attaching, the JIT and context options."""

import os
import subprocess
import sys

import pytest

import egpu


def test_refused_program_keeps_its_object(ctx, mixed_path):
    obj = ctx.load(mixed_path)
    good, bad = obj.programs["good_entry"], obj.programs["bad_exit"]
    assert good.verdict == (True, "")
    ok, why = bad.verdict
    assert not ok
    assert "prog 'bad_exit'" in why and "mixed.bpf.c:28" in why
    with pytest.raises(egpu.VerifyError, match="bad_exit"):
        bad.attach()
    with pytest.raises(egpu.VerifyError, match="bad_exit"):
        bad.jit_ptx()
    assert obj.attach_all() == 1


def test_strict_load_fails_on_a_refusal(ctx, mixed_path):
    with pytest.raises(egpu.VerifyError, match="bad_exit"):
        ctx.load(mixed_path, strict=True)


def test_verify_reports_log_and_statistics(ctx, mixed_path):
    obj = ctx.load(mixed_path)
    v = obj.programs["good_entry"].verify()
    assert v and v.accepted and v.message == ""
    assert v.insns_processed > 0 and v.states > 0 and v.verify_ms >= 0
    assert "prog 'good_entry': accepted" in v.log
    r = obj.programs["bad_exit"].verify()
    assert not r
    assert "out-of-bounds access to ctx" in r.message
    assert "failing path" in r.log
    # Run directly over 48 bytes, its read at offset 40 is fine.
    assert obj.programs["bad_exit"].verify(at="none", ctx_len=48)
    assert not obj.programs["bad_exit"].verify(at="none", ctx_len=40)


def test_direct_run_jit_takes_ctx_len(ctx, probes_path):
    obj = ctx.load(probes_path)
    # bump reads its memory: translated for 8 bytes of it.
    assert ".visible .func" in obj.programs["bump"].jit_ptx(ctx_len=8)


def test_unmatched_pattern_warns_unless_strict(ctx, mixed_path, kernels_ptx):
    obj = ctx.load(mixed_path)
    good = obj.programs["good_entry"]
    link = good.attach()
    _, report = ctx.instrument(kernels_ptx)
    assert len(report.warnings) == 1
    assert "prog 'good_entry': no kernel matches 'saxpy'" in report.warnings[0]
    link.detach()
    good.attach(strict=True)
    with pytest.raises(egpu.NotFound, match="saxpy"):
        ctx.instrument(kernels_ptx)


def test_no_inline_calls_probes(mem_path, kernels_ptx):
    with egpu.Context(offline=True, no_inline=True) as c:
        c.load(mem_path).attach_all()
        _, report = c.instrument(kernels_ptx)
        assert report.kernels_patched >= 1
        assert all(k.inlined == 0 for k in report.kernels)


def test_mem_inline_limit_calls_past_the_bound(mem_path, kernels_ptx):
    """A 1-byte budget calls the memory probe at every site; no bound
    copies it into every site."""
    reports = {}
    for limit in (1, egpu.MEM_INLINE_UNLIMITED):
        with egpu.Context(offline=True, mem_inline_limit=limit) as c:
            c.load(mem_path).attach_all()
            out, reports[limit] = c.instrument(kernels_ptx)
            assert ("call \t(%egpu_m5)" in out) == (limit == 1)
    assert reports[1].mem_called == len(reports[1].mem_sites) > 0
    assert reports[egpu.MEM_INLINE_UNLIMITED].mem_called == 0


# A loop the verifier cannot bound costs it 1 M instructions: at every
# verbosity, from Python and from the CLI, each process stays under 512 MB.
_RSS_LIMIT_KB = 512 * 1024


@pytest.mark.parametrize("prog", ["spin", "fat_spin"])
@pytest.mark.parametrize("verbose", [0, 1, 2])
def test_unbounded_loop_is_cheap_from_python(unbounded_path, prog, verbose):
    script = (
        "import egpu, resource, sys\n"
        "with egpu.Context(offline=True) as c:\n"
        f"    v = c.load({unbounded_path!r}).programs[{prog!r}].verify(verbose={verbose})\n"
        "    assert not v.accepted and 'program too complex' in v.message\n"
        "    assert v.log.count('failing path, ') == 1, v.log[-2000:]\n"
        "    assert v.log.count('not proven to terminate') == 1\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True,
                         text=True, check=True).stdout
    assert int(out.split()[-1]) < _RSS_LIMIT_KB


@pytest.mark.parametrize("flag", [[], ["-v"], ["-vv"]])
def test_unbounded_loop_is_cheap_from_the_cli(egpu_cli, unbounded_path, flag):
    proc = subprocess.Popen([egpu_cli, "verify", *flag, unbounded_path],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 1, out[-2000:]
    assert usage.ru_maxrss < _RSS_LIMIT_KB
    # both programs refused, each once, after its path
    assert out.count("failing path, ") == 2 and out.count("refused: ") == 2
    assert out.count("(back edge: insn ") == 2
