#!/usr/bin/env bash
# HTTPS benchmark (issue 11): sluice, nginx and HAProxy terminating TLS with the same
# certificate (ECDSA P-256 and RSA-2048, generated here with openssl), one worker each pinned
# to one CPU, all proxying to the same nginx backend (plain HTTP) with bench/proxy.sh's
# configs. Keep-alive HTTPS requests (wrk: req/s, latency, proxy CPU per request), full
# handshakes (`openssl s_time -new`, TLS 1.3) and resumed ones (`-reuse -tls1_2`, tickets) per
# CPU-second of the proxy, in interleaved rounds. Prints the tables, also to
# bench/out/tls-<timestamp>.md (.json: every run). A measurement, not a test: exits non-zero
# only when the harness breaks. See bench/README.md (and bench/coldstart.sh's sluice-tls row
# for the cold start with a TLS listener).
#
# Usage: bench/tls.sh [--help]
#
# Environment (all optional):
#   TLS_RUNS=3              rounds (every proxy and certificate once per round, rotated)
#   TLS_DURATION=8          seconds of each keep-alive wrk run (TLS_WARMUP=2 s before it)
#   TLS_CONNECTIONS=50      wrk connections (one wrk thread)
#   TLS_STIME=6             seconds of each `openssl s_time` run
#   TLS_SCENARIOS="keepalive new reuse"
#   TLS_TARGETS="sluice nginx haproxy"
#   TLS_PROXY_CPUS=1        taskset CPU list for each proxy; TLS_LOAD_CPUS=0 for wrk, s_time
#                           and the backend
#   SLUICE_BIN=path         use this binary instead of building one (ReleaseSafe)
set -euo pipefail

bench=tls
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 wrk nginx haproxy openssl taskset:util-linux
make_run_dir
build_sluice || die "$sluice_fail"

make_certs "$run" || { tail -n 20 "$run/certs.log" >&2; die "openssl could not make the certificates"; }

harness_info
exec python3 "$here/tls.py" --sluice "$SLUICE_BIN" --certs "$run" \
    --nginx "$(command -v nginx)" --haproxy "$(command -v haproxy)" \
    --run-dir "$run" --report "$out/tls-$stamp.md" --command "$(command_line TLS_)" \
    "${info[@]}" \
    --info "nginx: $(nginx_version) ($(nginx -V 2>&1 | grep -o 'built with OpenSSL [0-9.]*' || true)); HAProxy: $(haproxy_version) ($(haproxy -vv 2>/dev/null | grep -m1 -o 'Running on OpenSSL version : OpenSSL [0-9.]*' || true)); $("$SLUICE_BIN" --version); client $(openssl version); wrk $(wrk_version)" \
    --info "$(setup_took "tools, build, certificates")"
