"""Ctrl-C while the console script imports its libraries (the first 0.1-0.2 s of a run) is one
`filterkit: error: interrupted` line and exit status 130, as later in the run: no traceback."""

from __future__ import annotations

import gc

import pytest

from filterkit import allocator, cli, ownership


def test_an_interrupt_while_the_command_tree_is_imported_is_one_line_and_130(monkeypatch, capsys):
    monkeypatch.setattr(ownership, "_claimed", False)  # main claims the process: undone after the test
    monkeypatch.setattr(cli.signal, "signal", lambda *arguments: None)  # the test process keeps its handlers
    monkeypatch.setattr(allocator, "keep_freed_memory", lambda: None)

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "command_tree", interrupted)
    with pytest.raises(SystemExit) as exited:
        cli.main(["tests/data/real/iris.arff"])
    assert exited.value.code == 130
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "filterkit: error: interrupted\n")
    assert gc.isenabled()  # main held the collector off while importing, and gives it back as it was
