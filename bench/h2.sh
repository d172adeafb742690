#!/usr/bin/env bash
# HTTP/2 benchmark (issue 22): sluice, nginx and HAProxy serving HTTP/2 to h2load (Debian's
# nghttp2-client) and proxying to the same plain HTTP/1.1 nginx backend, one worker each
# pinned to one CPU, in interleaved rounds. Two scenarios: h2c with prior knowledge and h2
# over TLS (ALPN, ECDSA P-256, made here with openssl). Reports requests per second and the
# proxy's CPU per request, and the memory of idle HTTP/2 connections. Prints the tables, also
# to bench/out/h2-<timestamp>.md (.json: every run). A measurement, not a test: exits
# non-zero only when the harness breaks. See bench/README.md.
#
# Usage: bench/h2.sh [--help]
#
# Environment (all optional):
#   H2_RUNS=3               rounds (every proxy once per round and scenario, rotated)
#   H2_REQUESTS=200000      requests per h2load run (H2_WARMUP=20000 before it)
#   H2_CLIENTS=16           h2load -c (connections)
#   H2_STREAMS=32           h2load -m (concurrent streams per connection)
#   H2_SCENARIOS="h2c tls"
#   H2_TARGETS="sluice nginx haproxy"
#   H2_IDLE=500             idle HTTP/2 connections opened for the memory figure (0: skip)
#   H2_IDLE_WAIT=7          seconds after the last idle connection opened before the RSS is read
#                           (sluice parks an idle connection's buffers after 1 s, trims pages every 5 s)
#   H2_PROXY_CPUS=1         taskset CPU list for each proxy; H2_LOAD_CPUS=0 for h2load and
#                           the backend
#   SLUICE_BIN=path         use this binary instead of building one (ReleaseSafe)
set -euo pipefail

bench=h2
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 h2load:nghttp2-client nginx haproxy openssl taskset:util-linux
make_run_dir
build_sluice || die "$sluice_fail"

make_certs "$run" || { tail -n 20 "$run/certs.log" >&2; die "openssl could not make the certificates"; }

harness_info
exec python3 "$here/http2.py" --sluice "$SLUICE_BIN" --certs "$run" \
    --nginx "$(command -v nginx)" --haproxy "$(command -v haproxy)" \
    --run-dir "$run" --report "$out/h2-$stamp.md" --command "$(command_line H2_)" \
    "${info[@]}" \
    --info "nginx: $(nginx_version); HAProxy: $(haproxy_version); $("$SLUICE_BIN" --version); $(h2load --version 2>&1 | head -1)" \
    --info "$(setup_took "tools, build, certificates")"
