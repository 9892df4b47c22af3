# SPDX-License-Identifier: MIT
"""Contexts, loading from a path or bytes, and what an object holds."""

import pathlib

import pytest

import egpu


def test_version_matches_the_header():
    assert egpu.version() == egpu.__version__
    assert egpu.version().startswith("0.")


def test_gpu_available_is_a_bool_with_a_reason():
    if egpu.gpu_available():
        assert egpu.gpu_unavailable_reason() == ""
    else:
        assert egpu.gpu_unavailable_reason() != ""


def test_programs_listed_and_named(obj):
    assert [p.name for p in obj.programs] == ["bump", "account", "on_entry", "on_exit"]
    entry = obj.programs["on_entry"]
    assert entry is obj.programs[2]
    assert (entry.section, entry.attach_point, entry.kernel) == \
        ("gpu/entry/add_one", "entry", "add_one")
    bump = obj.programs["bump"]
    assert (bump.attach_point, bump.kernel) == ("none", "")
    assert len(bump.insns) == 8 * bump.insn_cnt > 16
    assert "bump" in obj.programs and "nope" not in obj.programs


def test_maps_listed_with_their_shapes(obj):
    names = set(obj.maps.keys())
    assert {"counts", "slots", "flows", "per_thread"} < names
    assert any(n.endswith(".rodata") for n in names)
    flows = obj.maps["flows"]
    assert (flows.type, flows.key_size, flows.value_size, flows.max_entries) == \
        (1, 12, 16, 4)
    assert obj.maps["slots"].type == 2


def test_load_from_bytes_and_pathlike(ctx, probes_path):
    data = pathlib.Path(probes_path).read_bytes()
    a = ctx.load(data, name="from-bytes")
    b = ctx.load(memoryview(bytearray(data)))
    c = ctx.load(pathlib.Path(probes_path))
    assert a.name == "from-bytes"
    assert [p.name for p in b.programs] == [p.name for p in c.programs]
    assert ctx.objects == (a, b, c)


def test_load_insns_makes_one_program(ctx):
    mov_r0_7 = bytes([0xb7, 0, 0, 0, 7, 0, 0, 0])
    exit_ = bytes([0x95, 0, 0, 0, 0, 0, 0, 0])
    obj = ctx.load_insns(mov_r0_7 + exit_, name="raw")
    assert [p.name for p in obj.programs] == ["prog"]
    assert obj.programs["prog"].run() == 7


def test_missing_program_and_map_raise_not_found(obj):
    with pytest.raises(egpu.NotFound, match="no program 'nope'") as e:
        obj.programs["nope"]
    assert isinstance(e.value, KeyError)
    assert e.value.code == egpu.NotFound.code
    with pytest.raises(egpu.NotFound, match="nope"):
        obj.maps["nope"]


def test_close_invalidates_handles(ctx, probes_path):
    obj = ctx.load(probes_path)
    counts = obj.maps["counts"]
    obj.close()
    obj.close()  # idempotent
    assert obj.closed and ctx.objects == ()
    with pytest.raises(egpu.InvalidArgument, match="closed"):
        counts[1]
    with pytest.raises(egpu.InvalidArgument, match="closed"):
        obj.programs["bump"].run(b"\0\0")


def test_context_manager_closes_everything(probes_path):
    with egpu.Context(offline=True) as ctx:
        obj = ctx.load(probes_path)
    assert obj.closed
    with pytest.raises(egpu.InvalidArgument, match="context is closed"):
        ctx.load(probes_path)
    ctx.close()


def test_context_options_checked(probes_path):
    with pytest.raises(TypeError, match="callable"):
        egpu.Context(log="not callable")
    with pytest.raises(TypeError):
        egpu.Context(log_level="loud")
    for sm in ("gfx90a", "sm_1000", "sm_99999999999", "sm_31"):
        with pytest.raises(egpu.Error, match=f"'{sm}' is not a GPU target|{sm}"):
            egpu.Context(sm=sm)
    with egpu.Context(sm="sm_80", offline=True, log=lambda lvl, msg: None,
                      log_level=egpu.LOG_DEBUG) as ctx:
        assert "sm_80" in ctx.load(probes_path).programs["bump"].jit_ptx()


@pytest.mark.parametrize("sm,header", [("sm_100", ".version 8.6\n.target sm_100\n"),
                                       ("sm_120", ".version 8.7\n.target sm_120\n"),
                                       ("sm_100a", ".target sm_100a\n")])
def test_targets_newer_than_llvm_get_their_header(probes_path, sm, header):
    with egpu.Context(sm=sm, offline=True) as ctx:
        assert header in ctx.load(probes_path).programs["bump"].jit_ptx()
