#!/usr/bin/env bash
# Fetches what every build needs into ignored folders and prints the path of the zig binary:
# - the pinned Zig toolchain from PyPI into .zig/;
# - AWS-LC's source, as the pinned `aws-lc-sys` crate from crates.io, into .aws-lc/ (build.zig
#   compiles it; tools/aws_lc.zig says how). The crate is fetched from crates.io's download
#   address, the file cargo itself downloads, and checked against the SHA-256 the registry's
#   index lists for it (the checksum cargo checks); cargo is not needed.
# Idempotent: a second run with the right versions in place does nothing. Needs python3 (pip),
# curl and tar.
set -euo pipefail
zig_version="0.17.1"
# A new AWS-LC: pick the crate version, take its "cksum" from
# https://index.crates.io/aw/s-/aws-lc-sys, change both lines and build (tools/aws_lc.zig reads
# the version from here).
aws_lc_sys_version="0.47.0"
aws_lc_sys_sha256="8bfbe32ac36b3c428696ce315464181bc4029d689fd58e3f2a4e58c252242f52"
root="$(cd "$(dirname "$0")/.." && pwd)"

fetch_zig() {
    local dest="$root/.zig"
    local zig="$dest/ziglang/zig"
    if [ -x "$zig" ] && [ "$("$zig" version)" = "$zig_version" ]; then
        return
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps \
        --target "$dest" "ziglang==$zig_version" >&2
    test "$("$zig" version)" = "$zig_version"
}

# .aws-lc/aws-lc-sys-VERSION/ holds the crate's files; .aws-lc/aws-lc-sys-VERSION/.complete is
# written last, so an interrupted fetch is redone.
fetch_aws_lc() {
    local dest="$root/.aws-lc"
    local folder="$dest/aws-lc-sys-$aws_lc_sys_version"
    [ -f "$folder/.complete" ] && return
    mkdir -p "$dest"
    local crate="$dest/aws-lc-sys-$aws_lc_sys_version.crate"
    echo "bootstrap: fetching aws-lc-sys $aws_lc_sys_version (AWS-LC's source, 9.7 MB) from crates.io" >&2
    curl --fail --silent --show-error --location --retry 3 --output "$crate.part" \
        "https://static.crates.io/crates/aws-lc-sys/aws-lc-sys-$aws_lc_sys_version.crate"
    local actual
    actual="$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$crate.part")"
    if [ "$actual" != "$aws_lc_sys_sha256" ]; then
        rm -f "$crate.part"
        echo "bootstrap: aws-lc-sys-$aws_lc_sys_version.crate has SHA-256 $actual, expected $aws_lc_sys_sha256" >&2
        exit 1
    fi
    rm -rf "$folder"
    tar -xzf "$crate.part" -C "$dest"
    rm -f "$crate.part"
    test -f "$folder/aws-lc/include/openssl/ssl.h"
    # Versions other than the pinned one are left from earlier pins: only this one is used.
    touch "$folder/.complete"
}

fetch_zig
fetch_aws_lc
echo "$root/.zig/ziglang/zig"
