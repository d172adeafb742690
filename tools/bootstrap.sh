#!/usr/bin/env bash
# Fetches the pinned Zig toolchain from PyPI into .zig/ (ignored by git) and prints the
# path of the zig binary. Idempotent: a second run with the right version does nothing.
set -euo pipefail
zig_version="0.17.1"
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.zig"
zig="$dest/ziglang/zig"
if [ -x "$zig" ] && [ "$("$zig" version)" = "$zig_version" ]; then
    echo "$zig"
    exit 0
fi
rm -rf "$dest"
mkdir -p "$dest"
python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$dest" "ziglang==$zig_version" >&2
test "$("$zig" version)" = "$zig_version"
echo "$zig"
