#!/usr/bin/env bash
# Fetches what every build needs into ignored folders and prints the path of the zig binary:
# - the pinned Zig toolchain from PyPI into .zig/;
# - AWS-LC's source, as the pinned `aws-lc-sys` crate from crates.io, into .aws-lc/ (build.zig
#   compiles it; tools/aws_lc.zig says how). The crate is fetched from crates.io's download
#   address, the file cargo itself downloads, and checked against the SHA-256 the registry's
#   index lists for it (the checksum cargo checks); cargo is not needed.
# - nghttp2's source, as the pinned `libnghttp2-sys` crate, into .nghttp2/ the same way
#   (tools/nghttp2.zig compiles it).
# - zlib's source, as the pinned `libz-sys` crate, into .zlib/ the same way (tools/zlib.zig
#   compiles its deflate half).
# Idempotent: a second run with the right versions in place does nothing. Needs python3 (pip),
# curl and tar.
set -euo pipefail
zig_version="0.17.1"
# A new AWS-LC: pick the crate version, take its "cksum" from
# https://index.crates.io/aw/s-/aws-lc-sys, change both lines and build (tools/aws_lc.zig reads
# the version from here).
aws_lc_sys_version="0.47.0"
aws_lc_sys_sha256="8bfbe32ac36b3c428696ce315464181bc4029d689fd58e3f2a4e58c252242f52"
# A new nghttp2: the same, from https://index.crates.io/li/bn/libnghttp2-sys (the version after
# the `+` is nghttp2's own; tools/nghttp2.zig reads both from here).
nghttp2_sys_version="0.1.13+1.68.1"
nghttp2_sys_sha256="492e00167f1418c15648144f42bbfc63099806ecee9bf8d09a6353d6b4856b3c"
# A new zlib: the same, from https://index.crates.io/li/bz/libz-sys (tools/zlib.zig reads the
# version from here; the crate's src/zlib/ is zlib itself).
zlib_sys_version="1.1.33"
zlib_sys_sha256="fee3f59f4321dab0c78d828942e7aa09d0bd8ad6e78a501977e6bf3d02938045"
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

# fetch_crate NAME VERSION SHA256 DEST CHECK: .DEST/NAME-VERSION/ holds the crate's files (CHECK,
# a path inside it, must exist); .complete is written there last, so an interrupted fetch is
# redone. Versions other than the pinned one are left from earlier pins: only this one is used.
fetch_crate() {
    local name="$1" version="$2" sha256="$3" dest="$root/$4" check="$5"
    local folder="$dest/$name-$version"
    [ -f "$folder/.complete" ] && return
    mkdir -p "$dest"
    local crate="$dest/$name-$version.crate"
    echo "bootstrap: fetching $name $version from crates.io" >&2
    # `+` (build metadata in a version) is written %2B in the download address.
    curl --fail --silent --show-error --location --retry 3 --output "$crate.part" \
        "https://static.crates.io/crates/$name/$name-${version//+/%2B}.crate"
    local actual
    actual="$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$crate.part")"
    if [ "$actual" != "$sha256" ]; then
        rm -f "$crate.part"
        echo "bootstrap: $name-$version.crate has SHA-256 $actual, expected $sha256" >&2
        exit 1
    fi
    rm -rf "$folder"
    tar -xzf "$crate.part" -C "$dest"
    rm -f "$crate.part"
    test -f "$folder/$check"
    touch "$folder/.complete"
}

fetch_zig
# AWS-LC's source is 9.7 MB, nghttp2's 2.2 MB, libz-sys's 0.9 MB.
fetch_crate aws-lc-sys "$aws_lc_sys_version" "$aws_lc_sys_sha256" .aws-lc aws-lc/include/openssl/ssl.h
fetch_crate libnghttp2-sys "$nghttp2_sys_version" "$nghttp2_sys_sha256" .nghttp2 nghttp2/lib/includes/nghttp2/nghttp2.h
fetch_crate libz-sys "$zlib_sys_version" "$zlib_sys_sha256" .zlib src/zlib/deflate.c
echo "$root/.zig/ziglang/zig"
