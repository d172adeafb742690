"""setTimeout, setInterval and their clears, compared with `node FILE`: the batch runner the
corpus uses ends a script when its microtasks are done, before any timer fires, so these
scripts live in test/js/timers/ and run one node process each. `sluice js run` runs timers
until none is left, as node does (src/js/builtins/timers.zig)."""

from __future__ import annotations

from pathlib import Path

import pytest

import jsrun
from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

SCRIPTS = sorted((Path(__file__).parent / "timers").glob("*.js"))


def test_timer_scripts_are_there():
    """The folder holds the order, clear, async and uncaught cases."""
    assert len(SCRIPTS) >= 4, SCRIPTS


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_timer_script_runs_as_node_runs_it(path, node, sluice_js):
    """stdout, exit code and uncaught line equal node's, and node printed lines from timers
    (the script did wait for them there)."""
    expected = jsrun.node_cli(path, strict=True)
    uncaught = path.name.startswith("uncaught_")
    assert expected.rc == (1 if uncaught else 0), expected
    assert expected.stdout.count(b"\n") >= 2, expected
    got = jsrun.sluice_run(path)
    problem = jsrun.compare(path, expected, got)
    assert problem is None, problem
