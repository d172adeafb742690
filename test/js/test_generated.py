"""Generated programs (gen.py) run by node and by `sluice js run`.

JS_GEN_SEEDS picks the seeds: N means 0..N-1, START:COUNT a range (default 200, the short
pass of `make test`). The programs are written to test/js/.cache/gen/seed_N.js. Against node
alone, every program must stay inside the subset, print the same in strict mode and exit 0;
against sluice, each must match node as the corpus does. A failure names the seed, the
program's path and the command that prints it again.
"""

from __future__ import annotations

import os

import pytest

import gen
import jsrun
import subset
from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

GEN_DIR = jsrun.CACHE / "gen"


def seeds() -> list[int]:
    spec = os.environ.get("JS_GEN_SEEDS", "200").strip()
    if ":" in spec:
        start, count = (int(x) for x in spec.split(":", 1))
    else:
        start, count = 0, int(spec)
    return list(range(start, start + count))


SEEDS = seeds()


def program_path(seed: int):
    return GEN_DIR / f"seed_{seed}.js"


def replay(seed: int) -> str:
    return f"seed {seed}, program {program_path(seed)} (replay: python3 test/js/gen.py --seed {seed})"


@pytest.fixture(scope="module")
def programs():
    """Writes every selected program (the text is a pure function of the seed)."""
    GEN_DIR.mkdir(parents=True, exist_ok=True)
    for seed in SEEDS:
        text = gen.generate(seed)
        path = program_path(seed)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    return [program_path(s) for s in SEEDS]


@pytest.fixture(scope="module")
def node_results(programs, node):
    sloppy = jsrun.node_batch(programs)
    strict = jsrun.node_batch(programs, strict=True)
    return sloppy, strict


def test_generator_is_deterministic():
    """The same seed gives the same program; different seeds give different programs."""
    assert gen.generate(12345) == gen.generate(12345)
    assert gen.generate(1) != gen.generate(2)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_program_runs_under_node(seed, programs, node_results):
    """Inside the subset, exits 0 under node, and prints the same in strict mode."""
    path = program_path(seed)
    found = subset.scan(path.read_text(encoding="utf-8"))
    assert not found, f"{replay(seed)}: outside the subset: {found}"
    sloppy, strict = node_results
    r = sloppy[str(path)]
    if r.threw or r.compile_error:
        out = jsrun.node_cli(path)
        pytest.fail(f"{replay(seed)}: node: {out.describe()}\n{out.stderr[:3000]}",
                    pytrace=False)
    assert r.stdout, f"{replay(seed)}: prints nothing"
    assert strict[str(path)].stdout == r.stdout and not strict[str(path)].threw, \
        f"{replay(seed)}: prints differently in strict mode"


@pytest.fixture(scope="module")
def node_outcomes(programs, node_results):
    """node's Outcome per program, from the batch run (a program that threw is run again as
    `node FILE` for node's own report)."""
    if os.environ.get("JS_NODE_MODE") == "cli":
        return jsrun.node_outcomes(programs)
    sloppy, _ = node_results
    out = {}
    for path in programs:
        r = sloppy[str(path)]
        ok = not r.threw and r.compile_error is None
        out[str(path)] = jsrun.Outcome(r.stdout, 0) if ok else jsrun.node_cli(path)
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_sluice_runs_generated_program_as_node_does(seed, sluice_js, node_outcomes):
    """`sluice js run` on the generated program matches node."""
    path = program_path(seed)
    problem = jsrun.compare(path, node_outcomes[str(path)], jsrun.sluice_run(path))
    if problem:
        pytest.fail(f"{replay(seed)}\n{problem}", pytrace=False)
