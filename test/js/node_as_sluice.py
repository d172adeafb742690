#!/usr/bin/env python3
"""A stand-in for `sluice js` that runs node, to test the test harness itself.

    SLUICE_BIN=test/js/node_as_sluice.py python3 -m pytest test/js -q

`js run FILE` runs `node FILE` and reports an uncaught exception as the contract asks
("Uncaught " + node's line, exit code 1), so the differential and generated tests must all
pass with it: a failure there is a bug in the harness, not in an engine. `js check FILE...`
only knows what node knows: it refuses syntax errors at node's position and accepts the
constructs that are out of the subset, so the reject/ and test262 tests fail with it.
"""

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import jsrun  # noqa: E402


def main(argv: list[str]) -> int:
    if argv == ["--help"]:
        print("usage: sluice js run FILE | sluice js check FILE...")
        return 0
    if len(argv) >= 2 and argv[:2] == ["js", "run"] and len(argv) == 3:
        out = jsrun.node_cli(argv[2])
        sys.stdout.buffer.write(out.stdout)
        sys.stdout.flush()
        if out.rc != 0:
            sys.stderr.write(f"Uncaught {out.uncaught}\n")
            return 1
        return 0
    if len(argv) >= 3 and argv[:2] == ["js", "check"]:
        status = 0
        for path in argv[2:]:
            proc = subprocess.run([jsrun.NODE, "--check", path], capture_output=True, text=True)
            if proc.returncode != 0:
                lines = proc.stderr.split("\n")
                line = lines[0].rsplit(":", 1)[-1]
                col = lines[2].index("^") + 1 if len(lines) > 2 and "^" in lines[2] else 1
                message = next((ln for ln in lines if "Error" in ln), "syntax error")
                print(f"{path}:{line}:{col}: {message}", file=sys.stderr)
                status = 1
        return status
    print("sluice: error: unknown command", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
