# SPDX-License-Identifier: MIT
"""egpu.memcheck.run without a GPU: the egpu tool of the build runs the
command with a stand-in for the attach agent (tests/cli/fake_agent.c),
which writes at the command's exit the report this test wrote; run()
must give back its error count and report, pass the options on, and
raise when there is no report."""
import os

import pytest

import egpu
import egpu.memcheck

TEXT = ("egpu memcheck: invalid 4-byte global store in k(float*) at a.cu:12\n"
        "    block (0,0,0) thread (0,0,0), address 0x7f0000400000: just past the end\n"
        "    and 1,023 more at this site\n"
        "egpu memcheck: 1,024 errors at 1 site\n")
JSON = ('{"reports":[{"kernel":"k(float*)","file":"a.cu","line":12,"kind":"store",'
        '"space":"global","count":2}],"errors":2,"sites":1,"sites_not_shown":0,'
        '"errors_not_shown":0}\n')


@pytest.fixture
def fake(egpu_cli, tmp_path, monkeypatch):
    """Writes the report the stand-in agent will hand over; returns the
    egpu tool."""
    agent = os.environ.get("EGPU_TEST_FAKE_AGENT")
    if not agent:
        pytest.skip("the build has no stand-in agent")
    monkeypatch.setenv("EGPU_ATTACH_LIB", agent)
    # sanitized, the stand-in goes ahead of the sanitizers' runtimes in
    # the command's LD_PRELOAD (as in tests/cli)
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "detect_leaks=0")
                       + ":verify_asan_link_order=0")
    monkeypatch.setenv("EGPU_FAKE_REPORT", str(tmp_path / "report"))

    def write(text):
        (tmp_path / "report").write_text(text)
        return egpu_cli
    return write


def test_text_report(fake):
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], cli=fake(TEXT))
    assert (r.returncode, r.errors, r.report) == (1, 1024, TEXT)
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], cli=fake("egpu memcheck: no errors\n"))
    assert (r.returncode, r.errors) == (0, 0)


def test_json_report(fake):
    r = egpu.memcheck.run(["bash", "-c", "exit 3"], json=True, cli=fake(JSON))
    assert (r.returncode, r.errors) == (3, 2)
    assert r.report["reports"][0]["line"] == 12 and r.report["sites"] == 1
    # a note of the agent's before the report's object
    note = "egpu memcheck: 3 more sites went wrong; the log kept the first 4096\n"
    r = egpu.memcheck.run(["bash", "-c", "exit 0"], json=True, cli=fake(note + JSON))
    assert (r.returncode, r.errors, r.report["sites"]) == (1, 2, 1)


def test_options_reach_the_agent(fake, tmp_path):
    seen = tmp_path / "env"
    cmd = ["bash", "-c", f'echo "$EGPU_MEMCHECK $EGPU_MEMCHECK_CONTAIN $EGPU_MEMCHECK_MAX '
           f'$EGPU_ATTACH_JSON" > {seen}']
    egpu.memcheck.run(cmd, contain=True, json=True, max_reports=5, cli=fake(JSON))
    assert seen.read_text() == "1 1 5 1\n"
    egpu.memcheck.run(cmd, cli=fake(TEXT))
    assert seen.read_text() == "1   \n"


def test_no_report(fake):
    with pytest.raises(egpu.Error, match="no report .exit status 137"):
        egpu.memcheck.run(["bash", "-c", "kill -KILL $$"], cli=fake(TEXT))
    with pytest.raises(egpu.Error, match="no report .exit status 125"):
        egpu.memcheck.run(["bash", "-c", "exit 0"], json=True, cli=fake("modules: 1\n"))


def test_bad_arguments(fake):
    for argv in ([], "bash -c true"):
        with pytest.raises(egpu.InvalidArgument, match="argv"):
            egpu.memcheck.run(argv, cli=fake(TEXT))
    for n in (0, -1, 2.5, True, "3"):
        with pytest.raises(egpu.InvalidArgument, match="max_reports"):
            egpu.memcheck.run(["true"], max_reports=n, cli=fake(TEXT))


def test_no_tool(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(egpu.NotFound, match="not on PATH"):
        egpu.memcheck.run(["true"])
