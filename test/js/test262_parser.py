"""Parser conformance: the npm package test262-parser-tests, restricted to the subset.

The package (pinned below) is installed at test time with npm into test/js/.cache/test262/
(ignored by git). It has three folders: pass/ (valid programs), fail/ (programs that do not
match the grammar) and early/ (programs that match the grammar but have an early error).
Files named *.module.js are modules; they are copied to .mjs files so that both node and
sluice see a module.

Selection (a static filter, subset.scan, plus node as referee):
- pass: no construct out of the subset or undecided by it, and node accepts the file as
  strict code (sluice treats all code as strict, so a sloppy-only program is not a pass).
- fail, early: no construct out of the subset or undecided by it (so the file is refused
  for its real fault, not for using something sluice leaves out), no `export` in a script
  (sluice may take any file as a module), and node refuses it.
Then `sluice js check` must accept every selected pass file and refuse every selected fail
and early file (each with a FILE:LINE:COL diagnostic).

`python3 test/js/test262_parser.py` installs the package and prints the selection counts and
why files were left out. pytest collects the tests below through test_test262.py (this
file keeps the name the issue gave it, which pytest's test_*.py pattern does not match).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import jsrun  # noqa: E402
import subset  # noqa: E402

PACKAGE = "test262-parser-tests"
VERSION = "0.0.5"
ROOT = jsrun.CACHE / "test262"
PACKAGE_DIR = ROOT / "node_modules" / PACKAGE
MODULES_DIR = ROOT / "modules"
KINDS = ("pass", "fail", "early")
CHECK_CHUNK = 200  # files per `sluice js check` call


def install() -> str | None:
    """Installs the package if it is not there yet; None on success, else the reason."""
    manifest = PACKAGE_DIR / "package.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("version") == VERSION:
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    ROOT.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            [npm, "install", "--prefix", str(ROOT), "--no-audit", "--no-fund", "--no-save",
             "--loglevel=error", f"{PACKAGE}@{VERSION}"],
            capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"npm install {PACKAGE}@{VERSION} took longer than 600 s"
    if proc.returncode != 0 or not manifest.exists():
        return f"npm install {PACKAGE}@{VERSION} failed: {proc.stderr.strip()[-500:]}"
    return None


@dataclass
class Selection:
    selected: dict[str, list[Path]] = field(default_factory=dict)  # kind -> files to check
    total: Counter = field(default_factory=Counter)  # kind -> files in the package
    dropped: dict[str, Counter] = field(default_factory=dict)  # kind -> reason -> count

    def summary(self) -> str:
        lines = []
        for kind in KINDS:
            reasons = ", ".join(f"{r} {n}" for r, n in self.dropped[kind].most_common(12))
            lines.append(f"{kind}: {len(self.selected[kind])} of {self.total[kind]} selected"
                         f" (left out: {reasons})")
        return "\n".join(lines)


def _target(kind: str, path: Path) -> tuple[Path, bool]:
    """The file to check and whether it is a module (modules get a .mjs copy)."""
    if not path.name.endswith(".module.js"):
        return path, False
    copy = MODULES_DIR / kind / (path.name[:-len(".module.js")] + ".mjs")
    if not copy.exists() or copy.read_bytes() != path.read_bytes():
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    return copy, True


def node_accepts(files: list[tuple[Path, bool]]) -> dict[str, bool]:
    """Whether node parses each (path, is_module) as strict code (node_parse_check.js)."""
    with tempfile.TemporaryDirectory(prefix="t262-") as tmp:
        jobs = Path(tmp) / "files.json"
        results = Path(tmp) / "results.json"
        jobs.write_text(json.dumps([{"path": str(p), "module": m} for p, m in files]))
        proc = subprocess.run([jsrun.NODE, "--experimental-vm-modules", "--no-warnings",
                               str(HERE / "node_parse_check.js"), str(jobs), str(results)],
                              capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"node_parse_check.js failed: {proc.stderr[-2000:]}")
        return {r["path"]: r["ok"] for r in json.loads(results.read_text())}


def select() -> Selection:
    sel = Selection()
    candidates: dict[str, list[tuple[Path, bool]]] = {}
    for kind in KINDS:
        sel.dropped[kind] = Counter()
        candidates[kind] = []
        for path in sorted((PACKAGE_DIR / kind).iterdir()):
            if path.suffix != ".js":
                continue
            sel.total[kind] += 1
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                sel.dropped[kind]["not UTF-8"] += 1
                continue
            found = subset.scan(text)
            outside = subset.out_features(found) + subset.unsure_features(found)
            if kind == "pass" and "lex_error" in found:
                outside.append("lex_error")
            if kind != "pass" and not path.name.endswith(".module.js") and any(
                    t.kind == "keyword" and t.value == "export"
                    for t in subset.tokenize_partial(text)[0]):
                # Refused only because a script may not export: sluice may well take any
                # file as a module, so this says nothing about its parser.
                outside.append("export in a script")
            if outside:
                for f in sorted(set(outside)):
                    sel.dropped[kind][f] += 1
                continue
            candidates[kind].append(_target(kind, path))
    verdicts = node_accepts([f for kind in KINDS for f in candidates[kind]])
    for kind in KINDS:
        sel.selected[kind] = []
        for path, _ in candidates[kind]:
            accepted = verdicts[str(path)]
            if accepted != (kind == "pass"):
                sel.dropped[kind]["node accepts it" if accepted
                                  else "node refuses it in strict mode"] += 1
                continue
            sel.selected[kind].append(path)
    return sel


# ---------------------------------------------------------------------------------------
# pytest

try:
    import pytest
except ImportError:  # running as a script without pytest
    pytest = None

if pytest is not None:
    from jsfixtures import node, sluice_js  # noqa: F401 (fixtures)

    @pytest.fixture(scope="module")
    def selection(node):
        reason = install()
        if reason is not None:
            pytest.skip(f"cannot install {PACKAGE}: {reason}")
        return select()

    def test_selection_keeps_a_useful_share(selection):
        """The filter keeps a fair number of files of each kind (the counts are printed with
        -s, and by running this file as a script)."""
        print("\n" + selection.summary())
        assert len(selection.selected["pass"]) >= 200, selection.summary()
        assert len(selection.selected["fail"]) >= 100, selection.summary()
        assert len(selection.selected["early"]) >= 30, selection.summary()

    def _check(files: list[Path]) -> tuple[dict[str, list[str]], list[str]]:
        """Runs `sluice js check` over `files` in chunks. Returns the diagnostics per file
        and a list of problems with the runs themselves (crashes, timeouts)."""
        diags: dict[str, list[str]] = {str(f): [] for f in files}
        problems = []
        for i in range(0, len(files), CHECK_CHUNK):
            chunk = [str(f) for f in files[i:i + CHECK_CHUNK]]
            try:
                proc = jsrun.sluice("js", "check", *chunk, timeout=120)
            except subprocess.TimeoutExpired:
                problems.append(f"files {i}..{i + len(chunk)}: timed out")
                continue
            if proc.returncode not in (0, 1):
                problems.append(f"files {i}..{i + len(chunk)}: exit code {proc.returncode}: "
                                f"{proc.stderr.decode('utf-8', 'replace')[-500:]}")
            text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
            for line in text.split("\n"):
                for f in chunk:
                    if line.startswith(f + ":"):
                        diags[f].append(line)
                        break
        return diags, problems

    def test_sluice_accepts_selected_pass_files(selection, sluice_js):
        """Every selected pass/ file is accepted by `sluice js check`."""
        diags, problems = _check(selection.selected["pass"])
        refused = [d[0] for d in diags.values() if d]
        assert not problems, "\n".join(problems)
        assert not refused, f"{len(refused)} pass files refused, first ones:\n" + \
                            "\n".join(refused[:40])

    @pytest.mark.parametrize("kind", ["fail", "early"])
    def test_sluice_refuses_selected_bad_files(selection, sluice_js, kind):
        """Every selected fail/ or early/ file is refused with a FILE:LINE:COL diagnostic."""
        files = selection.selected[kind]
        diags, problems = _check(files)
        assert not problems, "\n".join(problems)
        accepted = [f for f, d in diags.items() if not d]
        assert not accepted, f"{len(accepted)} {kind} files accepted, first ones:\n" + \
                             "\n".join(accepted[:40])
        import re
        malformed = [d[0] for d in diags.values()
                     if d and not re.match(r"^.+:\d+:\d+: .+", d[0])]
        assert not malformed, "diagnostics not in FILE:LINE:COL: form:\n" + \
                              "\n".join(malformed[:20])


def main() -> int:
    reason = install()
    if reason is not None:
        print(f"cannot install {PACKAGE}: {reason}")
        return 1
    print(select().summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
