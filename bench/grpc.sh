#!/usr/bin/env bash
# gRPC benchmark (issue 22): unary calls per second through sluice against a direct
# connection, with nginx (grpc_pass) and HAProxy (proto h2 both sides) as peers in the same
# run. The backend and the load generator are Go (bench/grpcload/, grpc-go, built here) so that
# they outrun the proxy on their CPU. Paths: direct, client h2c -> proxy -> backend h2c, and
# sluice to a backend over TLS (h2); a small and a large message each way. Each proxy runs one
# worker pinned to one CPU; interleaved rounds, medians. Reports calls per second (and the
# ratio to direct), p50/p99 latency and the proxy's CPU per call. Prints the table, also to
# bench/out/grpc-<timestamp>.md (.json: every run). A measurement, not a test: exits non-zero
# only when the harness breaks. See bench/README.md.
#
# Needs Go >= 1.26 (grpc-go 1.85's floor; Debian 12's golang-go is 1.19, too old): `go` on
# PATH or /usr/local/go/bin/go, or GO=path. Its modules come from the Go module proxy, pinned
# by bench/grpcload/go.sum.
#
# Usage: bench/grpc.sh [--help]
#
# Environment (all optional):
#   GRPC_RUNS=3             rounds (every path once per round and size, rotated)
#   GRPC_DURATION=10        measured seconds per run (GRPC_WARMUP=2 seconds of calls before)
#   GRPC_CONNS=4            HTTP/2 connections from the load
#   GRPC_CONCURRENCY=16     unary calls in flight on each connection
#   GRPC_WINDOW=0           the load's HTTP/2 windows: 0 is grpc-go's default (dynamic, with
#                           BDP PINGs); N >= 65536 fixes both windows at N bytes, no PINGs
#   GRPC_SIZES="64 16384"   message bytes (request and response, an echo)
#   GRPC_TARGETS="direct sluice nginx haproxy sluice-tls"
#   GRPC_PROXY_CPUS=1       taskset CPU list for each proxy; GRPC_LOAD_CPUS=0 for the load
#                           and the backends
#   GO=path                 the go command to build bench/grpcload/ with
#   SLUICE_BIN=path         use this binary instead of building one (ReleaseSafe)
set -euo pipefail

bench=grpc
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

# find_go: GO, else go on PATH, else Go's own install folder; dies saying what to install.
find_go() {
    go="${GO:-$(command -v go || true)}"
    [ -z "$go" ] && [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go
    [ -n "$go" ] || die "needs Go >= 1.26 to build bench/grpcload/ (none on PATH or in /usr/local/go; Debian's golang-go is too old): install it, or set GO=path"
    local v
    v="$("$go" env GOVERSION 2>/dev/null || true)"
    case "$v" in
        go1.2[6-9]*|go1.[3-9][0-9]*|go[2-9]*) ;;
        *) die "needs Go >= 1.26 to build bench/grpcload/; $go is ${v:-unknown}" ;;
    esac
    go_version="$v"
}

# build_grpcbench: bench/grpcload/ into the run folder as grpcbench.
build_grpcbench() {
    grpcbench="$run/grpcbench"
    log "building bench/grpcload/ with $go_version"
    if ! (cd "$here/grpcload" && timeout 900 "$go" build -trimpath -o "$grpcbench" .) >"$run/build-grpc.log" 2>&1; then
        tail -n 30 "$run/build-grpc.log" >&2
        die "go build of bench/grpcload/ failed (see $run/build-grpc.log)"
    fi
}

need_tools python3 nginx haproxy openssl taskset:util-linux
find_go
make_run_dir
build_grpcbench
build_sluice || die "$sluice_fail"

make_certs "$run" || { tail -n 20 "$run/certs.log" >&2; die "openssl could not make the certificates"; }

# The knobs, by name: GRPC_ alone would also match grpc's own variables in the environment.
knobs='GRPC_(RUNS|DURATION|WARMUP|CONNS|CONCURRENCY|WINDOW|SIZES|TARGETS|PROXY_CPUS|LOAD_CPUS)$|GO$'
harness_info
exec python3 "$here/grpc_driver.py" --sluice "$SLUICE_BIN" --certs "$run" --grpcbench "$grpcbench" \
    --nginx "$(command -v nginx)" --haproxy "$(command -v haproxy)" \
    --run-dir "$run" --report "$out/grpc-$stamp.md" --command "$(command_line "$knobs")" \
    "${info[@]}" \
    --info "nginx: $(nginx_version); HAProxy: $(haproxy_version); $("$SLUICE_BIN" --version); load and backend: grpc-go $(sed -n 's/^require google.golang.org\/grpc //p' "$here/grpcload/go.mod") built with $go_version" \
    --info "$(setup_took "tools, builds, certificates")"
