# SPDX-License-Identifier: MIT
"""Python callables as user helpers, called by programs run on the CPU back
end (tests/helpers/helpers.bpf.c): every signature shape, from annotations
or an explicit signature, and bad registrations refused."""

import sys
from typing import Annotated

import pytest

import egpu
from egpu._helpers import signature_of

H_ADD5, H_NOTE, H_SUM, H_FILL, H_NONE = range(0x10000, 0x10005)


@pytest.fixture
def ctx():
    with egpu.Context(offline=True) as c:
        yield c


def register_all(ctx, notes):
    def add5(a: int, b: int, c: int, d: int, e: int) -> int:
        return a + 10 * b + 100 * c + 1000 * d + 10000 * e

    def note(x: int) -> None:
        notes.append(x)

    def total(buf: Annotated[bytes, 16], base: int) -> int:
        assert isinstance(buf, bytes) and len(buf) == 16
        return base + sum(buf)

    def fill(buf: Annotated[bytearray, 8]) -> int:
        buf[:] = b"\x11" * 8
        return 0

    ctx.register_helper(H_ADD5, add5)
    ctx.register_helper(H_NOTE, note)
    ctx.register_helper(H_SUM, total)
    ctx.register_helper(H_FILL, fill)
    ctx.register_helper(H_NONE, lambda: 42, signature="u64 ()", name="answer")


def test_signatures_from_annotations():
    def f(a: int, b: Annotated[bytes, 16], c: Annotated[bytearray, 4]) -> None:
        pass

    def g() -> int:
        return 0

    assert signature_of(f) == "void (u64, const u8[16], u8[4])"
    assert signature_of(g) == "u64 ()"


def test_every_signature_shape_runs(ctx, uhelpers_path):
    notes = []
    register_all(ctx, notes)
    progs = ctx.load(uhelpers_path).programs
    assert progs["five"].run() == 54321
    assert progs["note"].run() == 1 and notes == [7]
    assert progs["stack_buf"].run() == 100 + sum(range(16))
    assert progs["map_buf"].run() == 32
    assert progs["out_buf"].run() == 1  # the bytearray's bytes reached the probe
    assert progs["no_args"].run() == 42


def test_decorator_and_a_raising_helper(ctx, uhelpers_path, monkeypatch):
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    @ctx.helper(H_NONE)
    def broken() -> int:
        raise ValueError("inside the helper")

    prog = ctx.load(uhelpers_path).programs["no_args"]
    assert prog.run() == 0  # the call returned 0
    assert len(seen) == 1 and str(seen[0]) == "inside the helper"


def test_wrong_calls_are_refused_by_the_verifier(ctx, uhelpers_path):
    register_all(ctx, [])
    progs = ctx.load(uhelpers_path).programs
    with pytest.raises(egpu.VerifyError, match="r1 must point to 16 bytes of the stack"):
        progs["scalar_for_buf"].run()
    with pytest.raises(egpu.VerifyError, match="has not registered"):
        progs["unregistered"].run()


def test_bad_registrations_are_refused(ctx):
    def ok(x: int) -> int:
        return x

    def unannotated(x):
        return x

    def wrong(x: str) -> int:
        return 0

    with pytest.raises(egpu.InvalidArgument, match="outside the user helper range"):
        ctx.register_helper(5, ok)
    ctx.register_helper(H_ADD5, ok)
    with pytest.raises(egpu.InvalidArgument, match="already registered"):
        ctx.register_helper(H_ADD5, ok)
    with pytest.raises(egpu.InvalidArgument, match="no annotation"):
        ctx.register_helper(H_NOTE, unannotated)
    with pytest.raises(egpu.InvalidArgument, match="annotated <class 'str'>"):
        ctx.register_helper(H_NOTE, wrong)
    with pytest.raises(egpu.InvalidArgument, match="expected u64"):
        ctx.register_helper(H_NOTE, ok, signature="u64 (int)")
    with pytest.raises(egpu.InvalidArgument, match="not an identifier"):
        ctx.register_helper(H_NOTE, lambda: 0, signature="u64 ()")
    with pytest.raises(TypeError, match="callable"):
        ctx.register_helper(H_NOTE, 5, signature="u64 ()", name="five")


def test_helpers_called_from_threads_beside_poll_and_dispatch(ctx, uhelpers_path):
    """Python helpers called by programs on several threads while other
    threads poll and switch the dispatch mode (the GIL released around
    both): every call arrives, nothing deadlocks."""
    import threading

    notes = []
    register_all(ctx, notes)
    progs = ctx.load(uhelpers_path).programs
    runs, errors = 200, []

    def caller():
        try:
            for _ in range(runs):
                assert progs["five"].run() == 54321
                assert progs["note"].run() == 1
        except Exception as e:  # reported below: a thread cannot fail the test
            errors.append(e)

    def switcher():
        try:
            for i in range(runs):
                ctx.helper_dispatch(i % 2 == 0)
                assert ctx.helper_poll(0.001) == 0  # no GPU calls queued
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=f) for f in (caller, caller, switcher, switcher)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads) and errors == []
    assert notes == [7] * (2 * runs)
