# SPDX-License-Identifier: MIT
"""Errors: one class per code, the library's message, inputs checked."""

import pytest

import egpu
from egpu import _errors


@pytest.mark.parametrize("cls,code", [
    (egpu.InvalidArgument, -1), (egpu.NoMemory, -2), (egpu.IOFailure, -3),
    (egpu.FormatError, -4), (egpu.VerifyError, -5), (egpu.JitError, -6),
    (egpu.NoDevice, -7), (egpu.NotFound, -8), (egpu.Full, -9),
    (egpu.CudaError, -10), (egpu.NotSupported, -11), (egpu.Exists, -12),
    (egpu.Busy, -13)])
def test_every_code_has_its_class(cls, code):
    e = _errors.make_error(code, "what and where")
    assert type(e) is cls and e.code == code and str(e) == "what and where"
    assert isinstance(e, egpu.Error)


def test_unknown_codes_give_the_base_class():
    assert type(_errors.make_error(-99, "x")) is egpu.Error
    assert _errors.make_error(-99, "x").code == -99
    assert _errors.make_error(0, "x").code is None


def test_load_errors_name_the_input(ctx, tmp_path):
    with pytest.raises(egpu.IOFailure, match="/nonexistent/probe.o") as e:
        ctx.load("/nonexistent/probe.o")
    assert e.value.code == -3
    with pytest.raises(egpu.IOFailure, match="is a directory"):
        ctx.load(str(tmp_path))
    with pytest.raises(egpu.FormatError) as e:
        ctx.load(b"\x7fELF not really an object")
    assert str(e.value) and e.value.code == -4
    with pytest.raises(egpu.InvalidArgument, match="gfx90a"):
        egpu.Context(sm="gfx90a")
    with pytest.raises(egpu.Error, match="8"):
        ctx.load_insns(b"1234567")
    with pytest.raises(TypeError):
        ctx.load(42)


def test_unsafe_program_is_refused(ctx):
    mov_r10_0 = bytes([0xb7, 0x0a, 0, 0, 0, 0, 0, 0])
    exit_ = bytes([0x95, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(egpu.Error, match="r10"):
        ctx.load_insns(mov_r10_0 + exit_)


def test_errors_from_codes_carry_the_message(obj):
    with pytest.raises(egpu.NotFound) as e:
        obj.maps["counts"][7]
    assert "map 'counts'" in str(e.value) and e.value.code == -8


def test_none_handles_are_refused():
    from egpu import _egpu
    with pytest.raises(egpu.InvalidArgument, match="NULL"):
        _egpu.map_update(None, b"", b"", 0)
    with pytest.raises(egpu.InvalidArgument, match="NULL"):
        _egpu.prog_run(None, 0, b"", None)
