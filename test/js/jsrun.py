"""Running a script under node and under `sluice js run`, and comparing the two.

The contract (issue 12) for `sluice js run FILE`:
- stdout equals node's stdout byte for byte, and the exit code matches (0, or 1 on an
  uncaught exception);
- on an uncaught exception, the first line of sluice's stderr is "Uncaught " followed by the
  line node prints after its source-and-caret block: "TypeError: bad" for an Error (just the
  name when the message is empty), node's rendering of any other thrown value otherwise.

Node is run in batches (node_batch.js) because one `node FILE` costs about 0.1 s; a script
that throws, and every module (.mjs), is run again as a real `node FILE` so that node's own
report is what sluice is compared with. JS_NODE_MODE=cli runs every script as `node FILE`.
"""

from __future__ import annotations

import base64
import difflib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"
REJECT = HERE / "reject"
CACHE = HERE / ".cache"
SLUICE_BIN = os.environ.get("SLUICE_BIN") or str(REPO / "zig-out" / "bin" / "sluice")
NODE = shutil.which("node")
# sluice's local time is UTC (docs/JS.md, "Date"): node is compared in the same zone.
NODE_ENV = {**os.environ, "TZ": "UTC"}
RUN_TIMEOUT_S = float(os.environ.get("JS_TIMEOUT", "10"))
BATCH_TIMEOUT_S = 600.0

# The caret line under the source line in node's report: spaces then one or more ^.
_CARET_RE = re.compile(r"^\s*\^+\s*$")


@dataclass
class Outcome:
    """What one run of a script did."""
    stdout: bytes
    rc: int
    stderr: str = ""
    uncaught: str | None = None  # the line that names the uncaught exception, if any

    def describe(self) -> str:
        text = f"exit code {self.rc}"
        if self.uncaught is not None:
            text += f", uncaught: {self.uncaught!r}"
        return text


def corpus_files() -> list[Path]:
    """The corpus scripts, sorted by name."""
    return sorted(p for p in CORPUS.iterdir() if p.suffix in (".js", ".mjs"))


# ---------------------------------------------------------------------------------------
# node


def node_version() -> str | None:
    if NODE is None:
        return None
    return subprocess.run([NODE, "--version"], capture_output=True, text=True,
                          timeout=30).stdout.strip()


def uncaught_line(stderr: str) -> str | None:
    """The line node prints after the source-and-caret block of an uncaught exception:
    the Error's "Name: message" (the first line of its stack), or the thrown value."""
    lines = stderr.split("\n")
    for i, line in enumerate(lines[:12]):
        if _CARET_RE.match(line):
            rest = lines[i + 1:]
            if rest and rest[0] == "" and len(rest) > 1:
                return rest[1]  # an Error: a blank line, then its stack
            return rest[0] if rest else None
    return None


def node_cli(path: Path | str, strict: bool = False) -> Outcome:
    """`node FILE` (with strict=True, a copy whose first line starts with "use strict")."""
    assert NODE is not None, "node is not installed"
    target = Path(path)
    tmp = None
    if strict and target.suffix != ".mjs":
        tmp = tempfile.NamedTemporaryFile("w", suffix=".js", delete=False, encoding="utf-8")
        tmp.write('"use strict";' + target.read_text(encoding="utf-8"))
        tmp.close()
        target = Path(tmp.name)
    try:
        proc = subprocess.run([NODE, str(target)], capture_output=True, env=NODE_ENV,
                              timeout=RUN_TIMEOUT_S * 3, stdin=subprocess.DEVNULL)
    finally:
        if tmp is not None:
            os.unlink(tmp.name)
    stderr = proc.stderr.decode("utf-8", "replace")
    uncaught = uncaught_line(stderr) if proc.returncode != 0 else None
    return Outcome(proc.stdout, proc.returncode, stderr, uncaught)


@dataclass
class BatchResult:
    stdout: bytes
    threw: bool
    compile_error: str | None


def node_batch(paths: list[Path], strict: bool = False) -> dict[str, BatchResult]:
    """Run every script in one node process (node_batch.js); keyed by str(path)."""
    assert NODE is not None, "node is not installed"
    with tempfile.TemporaryDirectory(prefix="js-batch-") as tmp:
        jobs = Path(tmp) / "jobs.json"
        results = Path(tmp) / "results.json"
        jobs.write_text(json.dumps([{"path": str(p), "strict": strict} for p in paths]))
        proc = subprocess.run([NODE, str(HERE / "node_batch.js"),
                               str(jobs), str(results)], capture_output=True, env=NODE_ENV,
                              timeout=BATCH_TIMEOUT_S, stdin=subprocess.DEVNULL)
        if proc.returncode != 0 or not results.exists():
            last = proc.stderr.decode("utf-8", "replace").strip().split("\n")[-5:]
            raise RuntimeError("node_batch.js failed (exit code "
                               f"{proc.returncode}); last stderr lines:\n" + "\n".join(last))
        out = {}
        for r in json.loads(results.read_text()):
            out[r["path"]] = BatchResult(base64.b64decode(r["stdout_b64"]), r["threw"],
                                         r["compile_error"])
        return out


def node_outcomes(paths: list[Path]) -> dict[str, Outcome]:
    """node's Outcome for each script, keyed by str(path): batched where that is exact,
    `node FILE` for modules, for scripts that throw and with JS_NODE_MODE=cli."""
    cli_all = os.environ.get("JS_NODE_MODE") == "cli"
    batchable = [p for p in paths if p.suffix != ".mjs" and not cli_all]
    batch = node_batch(batchable) if batchable else {}
    out: dict[str, Outcome] = {}
    for p in paths:
        r = batch.get(str(p))
        if r is not None and not r.threw and r.compile_error is None:
            out[str(p)] = Outcome(r.stdout, 0)
        else:
            out[str(p)] = node_cli(p)
    return out


# ---------------------------------------------------------------------------------------
# sluice

_probe_result: list[str | None] = []


def sluice_js_unavailable() -> str | None:
    """None when `sluice js` can be tested; otherwise the reason to skip. The command is
    taken to exist when `sluice js check` passes a one-line script, or when sluice's
    usage text mentions `sluice js`."""
    if _probe_result:
        return _probe_result[0]
    reason = _probe()
    _probe_result.append(reason)
    return reason


def _probe() -> str | None:
    if not (os.path.isfile(SLUICE_BIN) and os.access(SLUICE_BIN, os.X_OK)):
        return (f"sluice binary not found at {SLUICE_BIN} (build it with `zig build`, or "
                "set SLUICE_BIN)")
    with tempfile.TemporaryDirectory(prefix="js-probe-") as tmp:
        script = Path(tmp) / "probe.js"
        script.write_text("const probe = 1;\n")
        try:
            proc = subprocess.run([SLUICE_BIN, "js", "check", str(script)],
                                  capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
            usage = subprocess.run([SLUICE_BIN, "--help"], capture_output=True, timeout=10,
                                   stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"`{SLUICE_BIN} js check` did not answer within 10 s"
    if proc.returncode == 0 or b"sluice js" in usage.stdout + usage.stderr:
        return None
    said = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip().split("\n")[0]
    return (f"{SLUICE_BIN} has no `js` command yet (`sluice js check` exited "
            f"{proc.returncode}: {said})")


def sluice(*args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess:
    return subprocess.run([SLUICE_BIN, *args], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def sluice_run(path: Path | str) -> Outcome:
    """`sluice js run FILE`."""
    try:
        proc = sluice("js", "run", str(path))
    except subprocess.TimeoutExpired as e:
        return Outcome(e.stdout or b"", -1, f"timed out after {RUN_TIMEOUT_S} s", None)
    stderr = proc.stderr.decode("utf-8", "replace")
    first = stderr.split("\n")[0] if stderr else None
    return Outcome(proc.stdout, proc.returncode, stderr,
                   first if proc.returncode != 0 else None)


# ---------------------------------------------------------------------------------------
# comparison


def _text(b: bytes) -> list[str]:
    return b.decode("utf-8", "backslashreplace").splitlines(keepends=True)


def compare(path: Path | str, node: Outcome, got: Outcome) -> str | None:
    """None when sluice's run matches node's per the contract, else a readable report:
    the exit codes, the uncaught lines, and a diff of stdout (node first)."""
    problems = []
    if got.rc != node.rc:
        problems.append(f"exit code: node {node.rc}, sluice {got.rc}")
    if node.rc != 0:
        want = f"Uncaught {node.uncaught}"
        if got.uncaught != want:
            problems.append(f"stderr first line: want {want!r}, sluice printed "
                            f"{got.uncaught!r}")
    if got.stdout != node.stdout:
        diff = difflib.unified_diff(_text(node.stdout), _text(got.stdout), "node", "sluice")
        lines = list(diff)
        if not lines:  # same text, different bytes (say, a lone surrogate's encoding)
            lines = [f"node bytes:   {node.stdout[-200:]!r}\n",
                     f"sluice bytes: {got.stdout[-200:]!r}\n"]
        shown = lines[:120]
        if len(lines) > len(shown):
            shown.append(f"... {len(lines) - len(shown)} more diff lines\n")
        problems.append("stdout differs:\n" + "".join(shown))
    if not problems:
        return None
    report = [f"{path}: sluice js run differs from node"] + problems
    if got.stderr and got.rc != node.rc:
        report.append("sluice stderr:\n" + got.stderr[:2000])
    return "\n".join(report)
