"""Fixtures for the JavaScript engine tests (issue 12: the engine behaves as node does).

Layout
    corpus/            small scripts, one topic each, run by node and by `sluice js run`
    reject/            one file per construct left out of the subset; `sluice js check`
                       must refuse each at the position in its first-line comment
    gen.py             seeded generator of random programs inside the subset
    subset.py          the static scan that keeps corpus, generator and test262 inside it
    node_batch.js      runs many scripts in one node process (see jsrun.py)
    test262_parser.py  parser conformance on the npm package test262-parser-tests

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

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import jsrun  # noqa: E402


def corpus_files() -> list[Path]:
    return sorted(p for p in jsrun.CORPUS.iterdir() if p.suffix in (".js", ".mjs"))


def pytest_collect_file(file_path, parent):
    # The parser-conformance module keeps the name the issue gave it; pytest's default
    # pattern (test_*.py) would not collect it.
    if file_path.name == "test262_parser.py" and file_path.parent == HERE:
        return pytest.Module.from_parent(parent, path=file_path)
    return None


def pytest_report_header(config):
    reason = jsrun.sluice_js_unavailable()
    sluice_state = "ready" if reason is None else f"skipped: {reason}"
    return [f"node: {jsrun.NODE} {jsrun.node_version()}; sluice js: {sluice_state}"]


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


@pytest.fixture(scope="session")
def corpus_node(node) -> dict[str, jsrun.Outcome]:
    """node's outcome for every corpus script, computed once per run."""
    return jsrun.node_outcomes(corpus_files())
