"""A seeded random differential of the typed arrays against node: every element type fed
edge numbers (NaN, ±Infinity, -0, halves, 2^31, 2^32, 1e21...), then subarray, slice,
indexOf, includes, at, join, fill, set across types, sort and views of sliced buffers.
`JS_TYPED_ARRAY_SEEDS=N` runs N seeds (default 3); 50 seeds (60,000 cases) agreed when
written."""

from __future__ import annotations

import os
import random

import pytest

import jsrun
from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

KINDS = ["Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
         "Int32Array", "Uint32Array", "Float32Array", "Float64Array"]
SPECIALS = ["NaN", "Infinity", "-Infinity", "-0", "0.5", "1.5", "2.5", "254.5", "255.5", "-0.5",
            "4294967296", "4294967295", "-4294967297", "2147483648", "-2147483649", "65536.7",
            "1e21", "-1e-7", "3.4e38", "1e39", "16777217"]
SEEDS = int(os.environ.get("JS_TYPED_ARRAY_SEEDS", "3"))


def script(seed: int) -> str:
    r = random.Random(seed)

    def num() -> str:
        c = r.random()
        if c < 0.3:
            return r.choice(SPECIALS)
        if c < 0.6:
            return str(r.randint(-70000, 70000))
        if c < 0.8:
            return repr(r.uniform(-1e10, 1e10))
        return repr(r.uniform(-300, 300))

    out = ['"use strict";',
           'const t = (f) => { try { console.log(f()); } catch (e) { console.log(e.name + ": " + e.message); } };']
    for _ in range(300):
        k, k2 = r.choice(KINDS), r.choice(KINDS)
        n = r.randint(0, 12)
        vals = ", ".join(num() for _ in range(n))
        a, b = r.randint(-15, 15), r.randint(-15, 15)
        out.append(f"t(() => new {k}([{vals}]));")
        out.append(f"t(() => {{ const x = new {k}([{vals}]); return [x.subarray({a}, {b}), "
                   f"x.slice({a}, {b}), x.indexOf(x[{abs(a) % max(n, 1)}]), x.includes({num()}), "
                   f"x.at({a}), x.join(), String(x.fill({num()}, {b}))]; }});")
        out.append(f"t(() => {{ const x = new {k}({n + 2}); x.set(new {k2}([{vals}]), "
                   f"{r.randint(0, 3)}); return x; }});")
        out.append(f"t(() => {{ const x = new {k}([{vals}]); return [x.sort(), "
                   f"new {k2}(x.buffer.slice(0, {r.randint(0, 16)}))]; }});")
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", range(SEEDS))
def test_random_typed_array_operations_print_as_in_node(seed, node, sluice_js, tmp_path):
    """The seed's script prints the same under node and sluice."""
    path = tmp_path / f"typed_arrays_{seed}.js"
    path.write_text(script(seed), encoding="utf-8")
    expected = jsrun.node_cli(path)
    assert expected.rc == 0, expected.stderr
    got = jsrun.sluice_run(path)
    problem = jsrun.compare(path, expected, got)
    assert problem is None, f"seed {seed}: {problem}"
