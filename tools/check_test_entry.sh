#!/usr/bin/env bash
# Fails when a file under src/ has tests but is not reached from the unit-test entry point:
# imported by src/unit_tests.zig, or by the namespace file of its folder (http.zig, loop.zig)
# which unit_tests.zig imports.
set -euo pipefail
cd "$(dirname "$0")/../src"
status=0
for file in $(grep -rl --include='*.zig' '^test ' . | sed 's|^\./||' | sort); do
    case "$file" in
        unit_tests.zig|main.zig|http/fuzz.zig|http/bench.zig) continue ;;
    esac
    base="$(basename "$file")"
    dir="$(dirname "$file")"
    if grep -q "@import(\"$file\")" unit_tests.zig; then continue; fi
    if [ "$dir" != "." ] && [ -f "$dir/$dir.zig" ] && grep -q "@import(\"$base\")" "$dir/$dir.zig" \
        && grep -q "@import(\"$dir/$dir.zig\")" unit_tests.zig; then continue; fi
    echo "check_test_entry: $file has tests but is not reached from src/unit_tests.zig" >&2
    status=1
done
exit $status
