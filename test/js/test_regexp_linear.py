"""sluice's regular expressions run in time linear in their input (src/js/regexp.zig).

The patterns here send a backtracking engine into exponential time (node itself does not
finish them), so these tests are not differential: each script's answer is known, and the
run must end within the usual run timeout (JS_TIMEOUT, 10 s by default) where node would
take longer than the age of the universe.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import jsrun
from jsfixtures import sluice_js  # noqa: F401  (a fixture)

SCRIPT = r"""
const a = "a".repeat(100000);
console.log(/(a*)*b/.test(a));
console.log(/^(a|aa)+$/.test(a));
console.log(/(a|a)*c/.exec(a));
console.log(/^(\w+\s?)*$/.test(a + "!"));
console.log((a + "b").replace(/(a+)+b/, "x"));
console.log(a.split(/(a*)*x/).length, a.match(/a*?a*?a*?$/)[0].length);
"""

EXPECTED = "false\ntrue\nnull\nfalse\nx\n1 100000\n"


def test_pathological_patterns_finish_in_linear_time(sluice_js):  # noqa: F811
    """Nested quantifiers over 100,000 characters answer in one pass each."""
    with tempfile.TemporaryDirectory(prefix="js-regexp-") as tmp:
        path = Path(tmp) / "linear.js"
        path.write_text(SCRIPT)
        proc = jsrun.sluice("js", "run", str(path))
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert proc.stdout.decode() == EXPECTED
