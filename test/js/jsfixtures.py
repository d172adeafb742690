"""Fixtures for the JavaScript engine tests (issue 12: the engine behaves as node does).

Test modules import the fixtures they use from here (`from jsfixtures import node`). This
folder deliberately has no conftest.py: test/integration's tests import names from their own
conftest module, which a second conftest.py would shadow when both folders run together.

Layout
    corpus/            small scripts, one topic each, run by node and by `sluice js run`
    reject/            one file per construct left out of the subset; `sluice js check`
                       must refuse each at the position in its first-line comment
    gen.py             seeded generator of random programs inside the subset
    subset.py          the static scan that keeps corpus, generator and test262 inside it
    node_batch.js      runs many scripts in one node process (see jsrun.py)
    test262_parser.py  parser conformance on the npm package test262-parser-tests
                       (collected through test_test262.py)

Every test that needs sluice asks for the `sluice_js` fixture, which skips with the reason
when the binary is missing or has no `js` command yet; the tests of the corpus, the
generator and the test262 selection against node run regardless.

Environment
    SLUICE_BIN      the binary (default <repo>/zig-out/bin/sluice)
    JS_NODE_MODE    "cli" runs every script as its own `node FILE` instead of in batches
    JS_GEN_SEEDS    generated programs: N (seeds 0..N-1) or START:COUNT; default 200
    JS_TIMEOUT      seconds allowed for one `sluice js run` (default 10)
"""

from __future__ import annotations

import pytest

import jsrun


@pytest.fixture(scope="session")
def node() -> str:
    if jsrun.NODE is None:
        pytest.skip("node is not installed")
    return jsrun.NODE


@pytest.fixture(scope="session")
def sluice_js() -> str:
    """The sluice binary, when it has the `js` command; otherwise the test is skipped."""
    reason = jsrun.sluice_js_unavailable()
    if reason is not None:
        pytest.skip(reason)
    return jsrun.SLUICE_BIN


_corpus_node: dict[str, jsrun.Outcome] = {}


@pytest.fixture(scope="session")
def corpus_node(node) -> dict[str, jsrun.Outcome]:
    """node's outcome for every corpus script, computed once per run (kept here rather than
    in the fixture, which each importing module registers anew)."""
    if not _corpus_node:
        _corpus_node.update(jsrun.node_outcomes(jsrun.corpus_files()))
    return _corpus_node
