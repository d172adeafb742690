"""test262's runtime tests, run by sluice with node 20 as the oracle (issue 25).

For each test in the directories a handler uses, node runs it the way test262 asks (its own
harness files, then the test, in strict mode, in a fresh realm: test262_node.js), and sluice
runs it with `sluice js run`. Only the tests node passes count: sluice should pass them too.

sluice cannot load test262's own harness files, which are written in sloppy ES5 (`var`,
`arguments`): `test262/harness/` holds the same functions written in the language
(`assert`, `Test262Error`, `verifyProperty`...), with test262's names and behaviour, and an
include the folder has no version of is taken from test262 as it is.

Each test ends in one of:
- pass: sluice passes it as node does;
- out: sluice refuses it at compile time, naming a construct docs/JS.md lists as out
  ("... is not supported"): excluded from the rate, as the issue asks, and counted by name;
- fail: anything else sluice does with it (a wrong result, an exception, a refusal of
  something inside the language);
- crash, hang, budget: sluice died on a signal, ran past the time limit, or was terminated
  (these must be 0).

Usage:
  python3 test/js/test262_runtime.py                  # CI-sized: a seeded sample per directory
  python3 test/js/test262_runtime.py --full           # every test of every directory
  python3 test/js/test262_runtime.py --dir built-ins/Array --show fail
Environment: TEST262_DIR (a checkout of tc39/test262: its harness/ and test/; default
test/js/.cache/test262-repo), SLUICE_BIN, JS_TEST262_SAMPLE (tests per directory in the
default mode, default 60), JS_TEST262_SEED (default 262).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = HERE / ".cache"
OUR_HARNESS = HERE / "test262" / "harness"
TEST262_DIR = Path(os.environ.get("TEST262_DIR") or CACHE / "test262-repo")
SLUICE_BIN = os.environ.get("SLUICE_BIN") or str(REPO / "zig-out" / "bin" / "sluice")
NODE_CACHE = CACHE / "test262-node-results.json"
TIMEOUT_S = 10.0

# The directories issue 25 names.
DIRECTORIES = [
    "built-ins/Array", "built-ins/String", "built-ins/JSON", "built-ins/Object",
    "built-ins/Number", "built-ins/Math", "built-ins/Map", "built-ins/Set",
    "built-ins/RegExp", "built-ins/Promise", "built-ins/Symbol", "built-ins/Date",
    "language/expressions", "language/statements",
]

_META_RE = re.compile(r"/\*---(.*?)---\*/", re.S)


@dataclass
class Test:
    path: Path
    rel: str
    directory: str
    includes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    negative: dict | None = None

    @property
    def is_async(self) -> bool:
        return "async" in self.flags


def available() -> bool:
    return (TEST262_DIR / "harness" / "assert.js").is_file() and (TEST262_DIR / "test").is_dir()


def _yaml_list(meta: str, key: str) -> list[str]:
    """A YAML list in test262's frontmatter, inline (`key: [a, b]`) or in block form."""
    m = re.search(rf"^\s*{key}:\s*\[(.*?)\]", meta, re.M | re.S)
    if m:
        return [x.strip() for x in m.group(1).split(",") if x.strip()]
    m = re.search(rf"^(\s*){key}:\s*\n((?:\1\s+-.*\n?)+)", meta, re.M)
    if m:
        return [line.strip()[1:].strip() for line in m.group(2).splitlines() if line.strip().startswith("-")]
    return []


def parse_test(path: Path, directory: str) -> Test | None:
    """The test's metadata, or None for a test outside what the runner runs (modules, raw
    and sloppy-only tests: sluice's code is always strict)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    m = _META_RE.search(text)
    meta = m.group(1) if m else ""
    flags = _yaml_list(meta, "flags")
    if {"module", "raw", "noStrict", "CanBlockIsFalse", "CanBlockIsTrue"} & set(flags):
        return None
    negative = None
    n = re.search(r"^\s*negative:\s*\n\s+phase:\s*(\w+)\s*\n\s+type:\s*(\w+)", meta, re.M)
    if n:
        negative = {"phase": n.group(1), "type": n.group(2)}
    rel = str(path.relative_to(TEST262_DIR / "test"))
    return Test(path, rel, directory, _yaml_list(meta, "includes"), flags, negative)


def collect(directories: list[str]) -> list[Test]:
    tests = []
    for d in directories:
        for p in sorted((TEST262_DIR / "test" / d).rglob("*.js")):
            if "_FIXTURE" in p.name:
                continue
            t = parse_test(p, d)
            if t is not None:
                tests.append(t)
    return tests


def _harness_names(t: Test) -> list[str]:
    names = ["assert.js", "sta.js"]
    if t.is_async:
        names.append("doneprintHandle.js")
    return names + [i for i in t.includes if i not in names]


def node_source(t: Test) -> str:
    parts = ['"use strict";\n']
    for name in _harness_names(t):
        parts.append((TEST262_DIR / "harness" / name).read_text(encoding="utf-8"))
    parts.append(t.path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def sluice_source(t: Test) -> str:
    parts = []
    for name in _harness_names(t):
        ours = OUR_HARNESS / name
        src = ours if ours.is_file() else TEST262_DIR / "harness" / name
        parts.append(src.read_text(encoding="utf-8"))
    parts.append(t.path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def node_verdicts(tests: list[Test]) -> dict[str, str]:
    """node's verdict per test, cached by the test's text (node does not change under us)."""
    cache = json.loads(NODE_CACHE.read_text()) if NODE_CACHE.is_file() else {}
    todo = []
    keys = {}
    for t in tests:
        src = node_source(t)
        key = t.rel + ":" + hashlib.sha1(src.encode()).hexdigest()[:16]
        keys[t.rel] = key
        if key not in cache:
            todo.append({"id": key, "source": src, "negative": t.negative, "async": t.is_async})
    for start in range(0, len(todo), 2000):
        chunk = todo[start:start + 2000]
        with tempfile.TemporaryDirectory() as tmp:
            jobs = Path(tmp) / "jobs.json"
            out = Path(tmp) / "results.json"
            jobs.write_text(json.dumps(chunk))
            subprocess.run(["node", "--unhandled-rejections=warn", str(HERE / "test262_node.js"), str(jobs), str(out)],
                           check=True, timeout=1800, stderr=subprocess.DEVNULL)
            cache.update(json.loads(out.read_text()))
    if todo:
        CACHE.mkdir(exist_ok=True)
        NODE_CACHE.write_text(json.dumps(cache))
    return {rel: cache[key] for rel, key in keys.items()}


def _error_type(line: str) -> str:
    m = re.match(r"Uncaught (\w+)", line)
    return m.group(1) if m else ""


def sluice_verdict(t: Test, tmp: Path) -> tuple[str, str]:
    """(outcome, detail) of sluice on one test: pass, out, fail, crash, hang or budget."""
    script = tmp / (hashlib.sha1(t.rel.encode()).hexdigest()[:16] + ".js")
    script.write_text(sluice_source(t), encoding="utf-8")
    try:
        r = subprocess.run([SLUICE_BIN, "js", "run", "--heap-mb", "64", "--budget", "2000000000", str(script)],
                           capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return "hang", f"ran past {TIMEOUT_S:.0f} s"
    finally:
        script.unlink(missing_ok=True)
    stderr = r.stderr.decode("utf-8", "replace")
    first = stderr.splitlines()[0] if stderr else ""
    if r.returncode < 0 or r.returncode not in (0, 1):
        return "crash", f"exit {r.returncode}: {first}"
    if "terminated:" in stderr:
        return "budget", first
    compile_error = re.match(r"^\S+:\d+:\d+: (.*)$", first) if r.returncode == 1 else None
    neg = t.negative
    if compile_error:
        message = compile_error.group(1)
        if neg and neg["phase"] in ("parse", "early"):
            return "pass", ""
        if "not supported" in message:
            return "out", message
        return "fail", f"refused: {message}"
    if neg and neg["phase"] in ("parse", "early"):
        return "fail", "compiled"
    if r.returncode == 1:
        if neg and _error_type(first) == neg["type"]:
            return "pass", ""
        return "fail", first
    if neg:
        return "fail", "did not throw"
    if t.is_async and "Test262:AsyncTestComplete" not in r.stdout.decode("utf-8", "replace"):
        return "fail", "async test did not complete"
    return "pass", ""


def _out_name(detail: str) -> str:
    """The construct an `out` refusal names ("classes", "var", "regular expressions")."""
    name = re.sub(r" (is|are) not supported.*$", "", detail)
    # A refused RegExp feature is counted by the feature, not by its pattern.
    return re.sub(r"^Invalid regular expression: /.*/[a-z]*: ", "", name)


def run(tests: list[Test], jobs: int) -> dict[str, tuple[str, str]]:
    verdicts = node_verdicts(tests)
    chosen = [t for t in tests if verdicts[t.rel] == "pass"]
    results: dict[str, tuple[str, str]] = {}
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {pool.submit(sluice_verdict, t, Path(tmp)): t for t in chosen}
        for f in concurrent.futures.as_completed(futures):
            results[futures[f].rel] = f.result()
    return results


def report(tests: list[Test], results: dict[str, tuple[str, str]], out=sys.stdout) -> dict:
    """Per directory: node passes, sluice passes, out, fail, crash/hang/budget, and the rate
    inside the language (pass / (node passes - out))."""
    by_dir: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    outs: collections.Counter = collections.Counter()
    for t in tests:
        if t.rel not in results:
            continue
        outcome, detail = results[t.rel]
        by_dir[t.directory]["node"] += 1
        by_dir[t.directory][outcome] += 1
        if outcome == "out":
            outs[_out_name(detail)] += 1
    total: collections.Counter = collections.Counter()
    print(f"{'directory':24} {'node':>6} {'pass':>6} {'out':>6} {'fail':>6} {'c/h/b':>6} {'raw%':>6} {'in%':>6}", file=out)
    # The directories named with --dir that are not issue 25's (String.prototype.match...)
    # are reported after them.
    for d in DIRECTORIES + [d for d in by_dir if d not in DIRECTORIES]:
        if d not in by_dir:
            continue
        c = by_dir[d]
        total.update(c)
        _line(d, c, out)
    _line("total", total, out)
    print("out, by construct: " + ", ".join(f"{k} {v}" for k, v in outs.most_common()), file=out)
    return {"directories": {d: dict(c) for d, c in by_dir.items()}, "total": dict(total), "out": dict(outs)}


def _line(name: str, c: collections.Counter, out) -> None:
    inside = c["node"] - c["out"]
    bad = c["crash"] + c["hang"] + c["budget"]
    raw = 100.0 * c["pass"] / c["node"] if c["node"] else 0.0
    rate = 100.0 * c["pass"] / inside if inside else 0.0
    print(f"{name:24} {c['node']:6} {c['pass']:6} {c['out']:6} {c['fail']:6} {bad:6} {raw:6.1f} {rate:6.1f}", file=out)


def sample(tests: list[Test], per_directory: int, seed: int) -> list[Test]:
    rng = random.Random(seed)
    by_dir: dict[str, list[Test]] = collections.defaultdict(list)
    for t in tests:
        by_dir[t.directory].append(t)
    chosen = []
    for d in DIRECTORIES:
        group = by_dir.get(d, [])
        chosen += rng.sample(group, min(per_directory, len(group)))
    return chosen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="every test, not a sample")
    ap.add_argument("--dir", action="append", help="only this directory (repeatable)")
    ap.add_argument("--show", choices=["fail", "out", "crash", "hang", "budget", "pass"], action="append", default=[])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    if not available():
        print(f"test262 not found at {TEST262_DIR} (set TEST262_DIR to a checkout of tc39/test262)")
        return 2
    tests = collect(args.dir or DIRECTORIES)
    if not args.full:
        tests = sample(tests, int(os.environ.get("JS_TEST262_SAMPLE", "60")), int(os.environ.get("JS_TEST262_SEED", "262")))
    results = run(tests, args.jobs)
    for t in sorted(tests, key=lambda t: t.rel):
        if t.rel in results and results[t.rel][0] in args.show:
            print(f"{results[t.rel][0]:6} {t.rel}: {results[t.rel][1]}")
    figures = report(tests, results)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    bad = sum(figures["total"].get(k, 0) for k in ("crash", "hang", "budget"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
