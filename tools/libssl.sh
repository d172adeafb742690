#!/usr/bin/env bash
# Makes sure OpenSSL 3's static archives (Debian's libssl-dev) are where build.zig links them
# from, installing the package when they are missing, and prints their folder. `make build`,
# `make test` and `make release` run it first, as tools/bootstrap.sh fetches Zig. Also installs
# the `openssl` command when missing: src/tls/testdata/generate.sh uses it to make the test
# certificates (committed; only needed to make new ones).
#
# Needs root or passwordless sudo the first time, and apt-get (Debian or Ubuntu); elsewhere,
# install OpenSSL 3's static archives yourself and pass `-Dopenssl-lib=DIR` to zig build.
set -euo pipefail
lib=/usr/lib/x86_64-linux-gnu

have() { [ -f "$lib/libssl.a" ] && [ -f "$lib/libcrypto.a" ] && command -v openssl >/dev/null; }

if ! have; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || { echo "libssl.sh: need libssl-dev and neither root nor sudo" >&2; exit 1; }
        sudo="sudo -n"
    fi
    command -v apt-get >/dev/null || {
        echo "libssl.sh: need OpenSSL 3's libssl.a and libcrypto.a in $lib; no apt-get here" >&2
        exit 1
    }
    echo "libssl.sh: installing libssl-dev with apt-get" >&2
    log="$(mktemp)"
    if ! { timeout 600 $sudo apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive timeout 900 $sudo apt-get install -y -qq \
               --no-install-recommends libssl-dev openssl; } >"$log" 2>&1; then
        tail -n 30 "$log" >&2
        echo "libssl.sh: apt-get failed" >&2
        exit 1
    fi
    rm -f "$log"
    have || { echo "libssl.sh: libssl-dev installed, but $lib/libssl.a is still missing" >&2; exit 1; }
fi

# src/tls/c.zig declares the 3.0 API by hand: refuse another major version here, at build time,
# rather than at run time (tls.init checks the linked version too).
version="$(sed -n 's/^# *define OPENSSL_VERSION_MAJOR *\([0-9]*\).*/\1/p' /usr/include/openssl/opensslv.h 2>/dev/null || true)"
if [ -n "$version" ] && [ "$version" != 3 ]; then
    echo "libssl.sh: OpenSSL $version.x found; src/tls/ is written against 3.x" >&2
    exit 1
fi
echo "$lib"
