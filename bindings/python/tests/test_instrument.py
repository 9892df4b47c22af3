# SPDX-License-Identifier: MIT
"""Offline instrumentation of nvcc's PTX, attachments and its report."""

import os
import subprocess

import pytest

import egpu


def assemble(ptx, tmp_path):
    path = tmp_path / "out.ptx"
    path.write_text(ptx)
    subprocess.run([os.environ.get("EGPU_PTXAS", "ptxas"), "-arch=sm_90",
                    "-o", os.devnull, str(path)], check=True)


def test_attach_all_then_instrument(ctx, obj, kernels_ptx, tmp_path):
    assert obj.attach_all() == 2
    out, report = ctx.instrument(kernels_ptx)
    assert isinstance(out, str) and out != kernels_ptx
    assert (report.kernel_cnt, report.kernels_patched) == (2, 1)
    assert (report.entry_points, report.programs) == (1, 2)
    assert report.exit_points >= 1 and report.instrument_ms > 0
    add_one = next(k for k in report.kernels if k.name == "add_one")
    assert (add_one.entry_points, add_one.programs) == (1, 2)
    scale = next(k for k in report.kernels if k.name != "add_one")
    assert scale.demangled.startswith("scale(") and scale.programs == 0
    assemble(out, tmp_path)


def test_attach_by_demangled_name_and_glob(ctx, obj, kernels_ptx, tmp_path):
    link = obj.programs["on_entry"].attach("scale")
    obj.programs["on_exit"].attach("sc*", at="exit")
    assert (link.kernel, link.at) == ("scale", "entry")
    out, report = ctx.instrument(kernels_ptx.encode())
    scale = next(k for k in report.kernels if k.name != "add_one")
    assert (scale.entry_points, scale.programs) == (1, 2)
    assemble(out, tmp_path)
    link.detach()
    link.detach()
    _, report = ctx.instrument(kernels_ptx)
    assert report.entry_points == 0 and report.kernels_patched == 1


def test_no_attachments_leaves_kernels_alone(ctx, obj, kernels_ptx):
    _, report = ctx.instrument(kernels_ptx)
    assert report.kernels_patched == 0 and report.programs == 0


def test_closing_the_object_drops_its_links(ctx, obj, kernels_ptx):
    link = obj.programs["on_entry"].attach()
    obj.close()
    link.detach()  # already gone with the object: a no-op
    _, report = ctx.instrument(kernels_ptx)
    assert report.kernels_patched == 0


def test_bad_attach_point(obj):
    with pytest.raises(egpu.InvalidArgument, match="attach point 'middle'"):
        obj.programs["on_entry"].attach("add_one", at="middle")
    with pytest.raises(egpu.Error, match="is not entry, exit or mem"):
        obj.programs["bump"].attach("add_one")


def test_malformed_ptx_raises(ctx, obj):
    obj.attach_all()
    with pytest.raises(egpu.Error) as e:
        ctx.instrument(".version 8.0\n.target sm_90\n.visible .entry k( {")
    assert e.value.code is not None and str(e.value)


def test_module_load_refused_offline(ctx, kernels_ptx):
    with pytest.raises(egpu.InvalidArgument, match="offline"):
        ctx.module_load(kernels_ptx)


def test_kernel_ids_are_per_context(ctx, obj, kernels_ptx):
    """Ids stay unique across modules, the same for the same text, and a
    map keyed by them reads per kernel name."""
    _, first = ctx.instrument(kernels_ptx)
    _, again = ctx.instrument(kernels_ptx)
    _, other = ctx.instrument(kernels_ptx + "// another specialisation\n")
    ids = [k.kernel_id for k in first.kernels]
    assert ids == [0, 1] and [k.kernel_id for k in again.kernels] == ids
    assert [k.kernel_id for k in other.kernels] == [2, 3]
    infos = ctx.kernels
    assert [k.kernel_id for k in infos] == [0, 1, 2, 3]
    assert infos[2].name == first.kernels[0].name and infos[2].module == 1
    assert ctx.kernel(3).demangled == first.kernels[1].demangled
    with pytest.raises(egpu.NotFound):
        ctx.kernel(4)
    counts = obj.maps["counts"]
    counts[0], counts[2], counts[1] = 5, 7, 1
    assert counts.by_kernel() == {first.kernels[0].demangled: 12,
                                  first.kernels[1].demangled: 1}
    assert counts.kernel(first.kernels[0].name) == 12
    with pytest.raises(egpu.NotFound):
        counts.kernel("no_such_kernel")
