#!/usr/bin/env bash
# Cold-start benchmark: process spawn to the first proxied 200, sluice against nginx, HAProxy
# and a floor (bench/floor.c, static C that binds, accepts and answers a fixed 200: no
# proxying; built with static glibc and with static musl).
#
# A driver in Python (no shell in the timed path) starts each contender with Popen, retries
# connect() until the port accepts, sends `GET / HTTP/1.1` with `Connection: close` and stops
# the clock when the whole 200 response has arrived; the proxies forward it to a backend (nginx,
# `return 200 "hello\n"`) that was started once before the loop. Then the contender's process
# group gets SIGKILL. Contenders run interleaved (rotated round robin), each on a fresh port,
# COLDSTART_RUNS times after COLDSTART_WARMUP warm-ups. Also: sluice's `--trace-init` phase
# lines, and the size of the stripped static release binary. Prints median/p90/min/max and
# ratios to the floors, also to bench/out/coldstart-<timestamp>.md (.json: every run). A
# measurement, not a test: exits non-zero only when the harness breaks. See bench/README.md.
#
# Usage: bench/coldstart.sh [--help]
#
# Environment (all optional):
#   COLDSTART_RUNS=50        measured runs per contender
#   COLDSTART_WARMUP=3       discarded runs per contender first (page cache, lazy kernel state)
#   COLDSTART_TRACE_RUNS=5   extra `sluice --trace-init` runs (the median one is printed)
#   COLDSTART_POLL_US=20     sleep between refused connects, µs (0: spin; see bench/README.md)
#   COLDSTART_TIMEOUT=5      seconds one run may take before it counts as failed
#   COLDSTART_TARGETS="floor floor-musl sluice-w1 sluice-epoll sluice-tls sluice-default
#                      sluice-release nginx haproxy haproxy-noca"   rows, in this order
#                            (sluice-tls: an HTTPS listener with an ECDSA P-256 certificate
#                            made here; the client's TLS handshake is inside the timed span)
#   SLUICE_BIN=path          use this binary instead of building one (BENCH_OPTIMIZE, ReleaseSafe)
#   COLDSTART_VARIANTS="NAME=PATH ..."  more `--workers 1` rows, one per other sluice binary
#                            (an A/B of a start-up change in one interleaved run)
#   SLUICE_ARGS="..."        extra flags for every sluice row
#   COLDSTART_RELEASE=1      0 skips the stripped musl release build (size, sluice-release row)
set -euo pipefail

bench=coldstart
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 nginx haproxy
make_run_dir                       # configs, logs, the floor binary of this run
build_sluice || die "$sluice_fail"

# The shipped binary: what `make release` builds (static musl, stripped), but into
# bench/out/release instead of zig-out/.
release_bin=""
release_cmd="zig build -Doptimize=ReleaseSafe -Dtarget=x86_64-linux-musl -Dstrip=true -p bench/out/release"
if [ "${COLDSTART_RELEASE:-1}" != 0 ]; then
    release_bin="$(build_sluice_mode ReleaseSafe "$out/release" -Dtarget=x86_64-linux-musl \
        -Dstrip=true)" ||
        { release_bin=""; log "release build failed: no size figure and no sluice-release row ($sluice_fail)"; }
fi

# --- the floors: a static C program, built twice ----------------------------------------

# gcc with static glibc (when static glibc is installed) and zig cc with static musl. Both are
# reported: glibc's start-up runs CPUID-based feature detection, which costs extra where
# CPUID traps to a hypervisor; the musl build has none of it.
floor_bin=""
floor_cmd=""
if command -v gcc >/dev/null &&
       gcc -O2 -static -o "$run/floor-glibc" "$here/floor.c" 2>"$run/floor-build.log"; then
    floor_bin="$run/floor-glibc"
    floor_cmd="gcc -O2 -static -o floor-glibc bench/floor.c"
else
    log "gcc -O2 -static did not work here (no static glibc?): musl floor only"
fi
floor_musl_bin=""
floor_musl_cmd=""
if get_zig && "$zig" cc -target x86_64-linux-musl -O2 -static -o "$run/floor-musl" \
        "$here/floor.c" >>"$run/floor-build.log" 2>&1; then
    floor_musl_bin="$run/floor-musl"
    floor_musl_cmd="zig cc -target x86_64-linux-musl -O2 -static -o floor-musl bench/floor.c"
fi
if [ -z "$floor_bin$floor_musl_bin" ]; then
    tail -n 20 "$run/floor-build.log" >&2
    die "could not build bench/floor.c with gcc -static or zig cc"
fi

# The sluice-tls row's certificate (ECDSA P-256, self-signed), made by common.sh's make_certs.
tls_args=()
if need_tools openssl && make_certs "$run"; then
    tls_args=(--tls-cert "$run/ecdsa.pem" --tls-key "$run/ecdsa.key")
else
    log "openssl could not make a certificate: no sluice-tls row (see $run/certs.log)"
fi

# coldstart.py starts and stops everything else (also on SIGINT/SIGTERM, which reach it
# directly through exec) and writes the report.
harness_info
exec python3 "$here/coldstart.py" --sluice "$SLUICE_BIN" --release "$release_bin" \
    --floor "$floor_bin" --floor-musl "$floor_musl_bin" --nginx "$(command -v nginx)" --haproxy "$(command -v haproxy)" \
    "${tls_args[@]}" --run-dir "$run" --report "$out/coldstart-$stamp.md" --command "$(command_line COLDSTART_)" \
    "${info[@]}" \
    --info "nginx: $(nginx_version); HAProxy: $(haproxy_version); $(python3 --version 2>&1)" \
    --info "floors (bench/floor.c): \`${floor_cmd:-no static glibc}\`; \`${floor_musl_cmd:-no zig}\`" \
    --info "release binary: \`$release_cmd\`" \
    --info "$(setup_took "tools, builds")"
