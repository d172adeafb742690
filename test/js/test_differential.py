"""The differential corpus: every corpus script under `sluice js run` and under node.

One test per script. stdout must match byte for byte and the exit code must match; when
node reports an uncaught exception, sluice's first stderr line must be "Uncaught " followed
by node's line (see jsrun.compare). A failure shows both exit codes and a diff of stdout.
Skipped, with the reason, while the binary has no `js` command.
"""

from __future__ import annotations

import pytest

import jsrun
from jsfixtures import corpus_node, node, sluice_js  # noqa: F401 (fixtures)

CORPUS = jsrun.corpus_files()


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_sluice_runs_script_as_node_does(path, sluice_js, corpus_node):
    """`sluice js run FILE` prints what `node FILE` prints and exits as it does."""
    problem = jsrun.compare(path, corpus_node[str(path)], jsrun.sluice_run(path))
    if problem:
        pytest.fail(problem, pytrace=False)


def test_sluice_check_accepts_the_whole_corpus(sluice_js):
    """`sluice js check` on every corpus script at once exits 0 and prints nothing: the
    corpus stays inside the subset."""
    proc = jsrun.sluice("js", "check", *[str(p) for p in CORPUS], timeout=60)
    output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    assert proc.returncode == 0, f"sluice js check refused corpus scripts:\n{output[:4000]}"
    assert output.strip() == ""
