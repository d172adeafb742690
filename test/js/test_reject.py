"""Rejection: every construct left out of the subset is refused with its line and column.

Each file in reject/ opens with two comments:
    // expect: LINE:COL MESSAGE   (MESSAGE: alternatives split by |, matched without case;
                                   may be absent for plain syntax errors)
    // anchor: TEXT               (the source text that starts at LINE:COL)
LINE and COL count from 1 and point at the first character of the refused construct.

Against node (always run): a construct file is valid JavaScript (`node --check` accepts it)
that the subset scan flags; a `syntax_` file is refused by node at the same LINE:COL. Against
sluice: `sluice js check FILE` exits 1 and its first diagnostic is `FILE:LINE:COL: message`
with the message naming the construct, and `sluice js run FILE` refuses the file the same
way without running any of it.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import jsrun
import subset
from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

FILES = sorted(p for p in jsrun.REJECT.iterdir() if p.suffix in (".js", ".mjs"))
IDS = [p.name for p in FILES]
_EXPECT_RE = re.compile(r"^// expect: (\d+):(\d+)(?: (.+))?$")
_ANCHOR_RE = re.compile(r"^// anchor: (.+)$")

# Every construct the issue lists as out, and the reject files that cover it.
OUT_CONSTRUCTS = {
    "with": ["with_statement.js"],
    "eval": ["eval_call.js"],
    "Function(...)": ["function_constructor.js"],
    "arguments at the top level": ["arguments_top_level.js"],
    "top-level await": ["await_top_level.mjs"],
    "regular expression features that need backtracking": [
        "regex_backreference.js", "regex_lookahead.js", "regex_lookbehind.js",
        "regex_unicode_property.js",
    ],
    "BigInt": ["bigint_literal.js", "bigint_call.js"],
    "Proxy": ["proxy_global.js"],
    "SharedArrayBuffer and the other typed arrays' kin": ["typed_array_shared_buffer.js"],
}


@dataclass
class Expect:
    line: int
    col: int
    messages: list[str]  # alternatives; empty: any message
    anchor: str


def expect_of(path: Path) -> Expect:
    lines = path.read_text(encoding="utf-8").split("\n")
    m = _EXPECT_RE.match(lines[0])
    a = _ANCHOR_RE.match(lines[1])
    assert m and a, f"{path.name}: the first lines must be `// expect: LINE:COL MESSAGE` " \
                    f"and `// anchor: TEXT`"
    messages = [s.strip() for s in (m.group(3) or "").split("|") if s.strip()]
    return Expect(int(m.group(1)), int(m.group(2)), messages, a.group(1))


def node_check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([jsrun.NODE, "--check", str(path)], capture_output=True, text=True,
                          timeout=30, stdin=subprocess.DEVNULL)


def node_error_position(stderr: str) -> tuple[int, int] | None:
    """LINE:COL of a syntax error from node's report: the line from `FILE:LINE`, the column
    from the caret under the source line."""
    lines = stderr.split("\n")
    m = re.match(r"^.*:(\d+)$", lines[0]) if lines else None
    if not m or len(lines) < 3 or "^" not in lines[2]:
        return None
    return int(m.group(1)), lines[2].index("^") + 1


def test_every_out_construct_has_a_reject_file():
    """Each construct the issue lists as out is covered, and every reject file is listed
    here or is a plain syntax error."""
    names = {p.name for p in FILES}
    for construct, files in OUT_CONSTRUCTS.items():
        missing = [f for f in files if f not in names]
        assert not missing, f"{construct}: missing reject files {missing}"
    listed = {f for files in OUT_CONSTRUCTS.values() for f in files}
    stray = [n for n in names if n not in listed and not n.startswith("syntax_")]
    assert not stray, f"reject files that name no construct: {stray}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_reject_file_is_what_it_says(path, node):
    """The expected position holds the anchor text; a construct file is valid JavaScript
    for node and the subset scan flags it; a syntax_ file is refused by node at the
    expected position."""
    exp = expect_of(path)
    source_line = path.read_text(encoding="utf-8").split("\n")[exp.line - 1]
    assert source_line[exp.col - 1:].startswith(exp.anchor), \
        f"{path.name}: {exp.line}:{exp.col} is {source_line[exp.col - 1:]!r}, not the anchor " \
        f"{exp.anchor!r}"
    proc = node_check(path)
    if path.name.startswith("syntax_"):
        assert proc.returncode != 0, f"{path.name}: node accepts it"
        assert "SyntaxError" in proc.stderr
        assert node_error_position(proc.stderr) == (exp.line, exp.col), \
            f"{path.name}: node places the error elsewhere:\n{proc.stderr}"
    else:
        assert proc.returncode == 0, f"{path.name}: node refuses it:\n{proc.stderr}"
        assert subset.out_features(subset.scan(path.read_text(encoding="utf-8"))), \
            f"{path.name}: the subset scan finds nothing out of the subset"


def _diagnostics(text: str, path: Path) -> list[str]:
    return [ln for ln in text.split("\n") if ln.startswith(f"{path}:")]


def _assert_diagnostic(path: Path, exp: Expect, text: str, what: str):
    found = _diagnostics(text, path)
    assert found, f"{what}: no line starting with `{path}:`; output was:\n{text}"
    first = found[0]
    prefix = f"{path}:{exp.line}:{exp.col}: "
    assert first.startswith(prefix), f"{what}: want {prefix}..., got {first!r}"
    if exp.messages:
        message = first[len(prefix):].lower()
        assert any(m.lower() in message for m in exp.messages), \
            f"{what}: the message {first[len(prefix):]!r} names none of {exp.messages}"


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_sluice_check_refuses_with_position(path, sluice_js):
    """`sluice js check FILE` exits 1 with `FILE:LINE:COL: message` first."""
    exp = expect_of(path)
    proc = jsrun.sluice("js", "check", str(path))
    text = (proc.stderr + proc.stdout).decode("utf-8", "replace")
    assert proc.returncode == 1, f"sluice js check {path.name} exited {proc.returncode}:\n{text}"
    _assert_diagnostic(path, exp, text, f"sluice js check {path.name}")


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_sluice_run_refuses_without_running(path, sluice_js):
    """`sluice js run FILE` exits 1 with the same diagnostic on stderr and prints nothing:
    the file is refused before any of it runs."""
    exp = expect_of(path)
    proc = jsrun.sluice("js", "run", str(path))
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 1, f"sluice js run {path.name} exited {proc.returncode}"
    assert proc.stdout == b"", f"sluice js run {path.name} ran code: {proc.stdout[:200]!r}"
    _assert_diagnostic(path, exp, stderr, f"sluice js run {path.name}")


def test_sluice_check_reports_every_file_of_many(sluice_js):
    """`sluice js check` given every reject file at once exits 1 and reports each one."""
    proc = jsrun.sluice("js", "check", *[str(p) for p in FILES], timeout=60)
    text = (proc.stderr + proc.stdout).decode("utf-8", "replace")
    assert proc.returncode == 1
    silent = [p.name for p in FILES if not _diagnostics(text, p)]
    assert not silent, f"no diagnostic for {silent}"
