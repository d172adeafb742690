"""Web APIs whose promises node settles outside the microtask queue (crypto.subtle.digest runs
on node's thread pool), compared with `node FILE`: the batch runner the corpus uses ends a
script when its microtasks are done, before such a promise settles, so these scripts live in
test/js/web/ and run one node process each."""

from __future__ import annotations

from pathlib import Path

import pytest

import jsrun
from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

SCRIPTS = sorted((Path(__file__).parent / "web").glob("*.js"))


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_web_script_runs_as_node_runs_it(path, node, sluice_js):
    """stdout, exit code and uncaught line equal node's, and node's output is not empty (the
    script waited for its promises there)."""
    expected = jsrun.node_cli(path, strict=True)
    assert expected.rc == 0 and expected.stdout.count(b"\n") >= 10, expected
    got = jsrun.sluice_run(path)
    problem = jsrun.compare(path, expected, got)
    assert problem is None, problem
