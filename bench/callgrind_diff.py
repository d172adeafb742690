#!/usr/bin/env python3
"""The functions whose own instruction counts moved between two callgrind files of
bench/callgrind.sh, per request: where an A/B's difference went.

Usage: bench/callgrind_diff.py A.out B.out [REQUESTS] [--top N]
REQUESTS is the number counted (CG_REQUESTS, default 20000)."""
import re
import subprocess
import sys


def self_counts(path):
    """Function name -> its own instructions (callgrind_annotate's exclusive counts)."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+) \([^)]*\)\s+(\S.*)$", line) or re.match(r"^\s*([\d,]+)\s+(\S.*)$", line)
        if not m or "PROGRAM TOTALS" in line or "=>" in line:
            continue
        name = m.group(2).split(" [")[0]
        name = name.split(":", 1)[1] if re.match(r"^[^ ]*\.(zig|c|h|S):", name) or name.startswith("???:") else name
        name = re.sub(r"__(func|struct|enum|union|anon)_\d+", "", name)  # numbered anew by each build
        counts[name] = counts.get(name, 0) + int(m.group(1).replace(",", ""))
    return counts


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    top = 25
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
        args = [a for a in args if a != str(top)]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    requests = int(args[2]) if len(args) > 2 else 20000
    a, b = self_counts(args[0]), self_counts(args[1])
    rows = [(b.get(k, 0) - a.get(k, 0), a.get(k, 0), b.get(k, 0), k) for k in set(a) | set(b)]
    rows.sort(key=lambda r: -abs(r[0]))
    total_a, total_b = sum(a.values()), sum(b.values())
    print(f"{'A':>9} {'B':>9} {'B-A':>8}  per request (total {total_a / requests:,.0f} -> {total_b / requests:,.0f})")
    for delta, va, vb, name in rows[:top]:
        if delta == 0:
            break
        print(f"{va / requests:9.1f} {vb / requests:9.1f} {delta / requests:+8.1f}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
