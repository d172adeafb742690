"""The corpus checked against node alone: it must be a fair test before sluice is run on it.

Each script runs under node and exits 0, or exits 1 with an uncaught exception when its name
starts with `uncaught_`; it prints the same in strict mode (sluice treats all code as
strict); and the static scan finds nothing outside the subset. The batch runner that the
other tests use for speed is checked against real `node FILE` runs here too.
"""

from __future__ import annotations

import os
import re

import pytest

import jsrun
import subset
from jsfixtures import corpus_node, node  # noqa: F401 (fixtures)

CORPUS = jsrun.corpus_files()
IDS = [p.name for p in CORPUS]


def test_corpus_is_hundreds_of_scripts_named_by_topic():
    """At least 400 scripts, each named in snake_case by its topic, with a comment first."""
    assert len(CORPUS) >= 400, f"only {len(CORPUS)} corpus scripts"
    bad = [p.name for p in CORPUS if not re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+\.m?js", p.name)]
    assert not bad, f"names not in snake_case topic form: {bad}"
    uncommented = [p.name for p in CORPUS
                   if not re.match(r'("use strict";\n)?// ', p.read_text(encoding="utf-8"))]
    assert not uncommented, f"scripts that do not open with a comment saying what they check: " \
                            f"{uncommented}"


def test_corpus_covers_every_uncaught_kind():
    """The uncaught_ scripts cover Errors, an empty message, and thrown non-Error values."""
    names = {p.name for p in CORPUS if p.name.startswith("uncaught_")}
    for needed in ("uncaught_error_simple.js", "uncaught_error_empty_message.js",
                   "uncaught_throw_number.js", "uncaught_throw_string.js",
                   "uncaught_throw_object.js", "uncaught_error_in_module.mjs"):
        assert needed in names


def test_corpus_never_uses_console_format_directives():
    """No console.log call starts with a string literal holding `%`: node would read it as
    a format string (%s, %d, ...), which the subset's console.log does not promise."""
    directive = re.compile(r"""console\.log\(\s*["'`][^"'`]*%""")
    found = [p.name for p in CORPUS if directive.search(p.read_text(encoding="utf-8"))]
    assert not found, f"console.log with a % in its first argument: {found}"


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_corpus_script_stays_inside_the_subset(path):
    """The static scan finds no construct that is out of the subset or undecided by it."""
    found = subset.corpus_features(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name} uses {found} (see subset.py for what each name means)"


@pytest.mark.parametrize("path", CORPUS, ids=IDS)
def test_corpus_script_runs_under_node(path, corpus_node):
    """node runs the script to exit 0, or to exit 1 with an uncaught exception whose
    report we can read when the name starts with `uncaught_`."""
    out = corpus_node[str(path)]
    if path.name.startswith("uncaught_"):
        assert out.rc == 1, f"{path.name}: expected an uncaught exception, got " \
                            f"{out.describe()}\n{out.stderr}"
        assert out.uncaught, f"{path.name}: no uncaught-exception line found in:\n{out.stderr}"
    else:
        assert out.rc == 0, f"{path.name}: {out.describe()}\n{out.stderr}"
    assert out.stdout or path.name.startswith("uncaught_"), f"{path.name} prints nothing"


@pytest.fixture(scope="module")
def strict_batch(node):
    return jsrun.node_batch([p for p in CORPUS if p.suffix == ".js"], strict=True)


@pytest.mark.parametrize("path", [p for p in CORPUS if p.suffix == ".js"],
                         ids=[p.name for p in CORPUS if p.suffix == ".js"])
def test_corpus_script_prints_the_same_in_strict_mode(path, corpus_node, strict_batch):
    """With "use strict" in force the script prints the same and throws the same: sluice
    runs all code as strict, node runs a .js file sloppy, and the corpus must not depend on
    the difference (scripts about strict-only behaviour say "use strict" themselves)."""
    sloppy = corpus_node[str(path)]
    strict = strict_batch[str(path)]
    if strict.threw:
        strict_cli = jsrun.node_cli(path, strict=True)
        assert (strict_cli.stdout, strict_cli.rc, strict_cli.uncaught) == \
            (sloppy.stdout, sloppy.rc, sloppy.uncaught), f"{path.name} differs in strict mode"
    else:
        assert strict.compile_error is None, strict.compile_error
        assert sloppy.rc == 0 and strict.stdout == sloppy.stdout, \
            f"{path.name} prints differently in strict mode"


def test_batch_runner_matches_node_cli(node):
    """node_batch.js prints exactly what `node FILE` prints, on a sample of the corpus
    (every 15th script; JS_BATCH_CHECK=all for every one)."""
    every = 1 if os.environ.get("JS_BATCH_CHECK") == "all" else 15
    sample = [p for p in CORPUS if p.suffix == ".js"
              and not p.name.startswith("uncaught_")][::every]
    batch = jsrun.node_batch(sample)
    for p in sample:
        cli = jsrun.node_cli(p)
        assert cli.rc == 0
        assert batch[str(p)].stdout == cli.stdout, f"{p.name}: the batch runner's stdout " \
                                                   f"differs from `node {p.name}`"


def test_uncaught_line_extraction():
    """The uncaught line is read from node's report for an Error and for a thrown value."""
    error_report = "/x.js:2\nthrow new TypeError(\"bad\");\n^\n\nTypeError: bad\n    at ..."
    assert jsrun.uncaught_line(error_report) == "TypeError: bad"
    value_report = "\n/x.js:1\nthrow 1;\n^\n1\n(Use `node --trace-uncaught ...`)"
    assert jsrun.uncaught_line(value_report) == "1"
