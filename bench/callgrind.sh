#!/usr/bin/env bash
# Instructions per request, counted by callgrind: the A/B figure for a change that can cost
# CPU per request (a count, not a time, so a busy machine does not move it). Each binary runs
# with one epoll worker (valgrind does not follow io_uring) in front of one nginx backend that
# answers a 6-byte "hello\n"; h2load sends WARMUP requests, callgrind starts counting, h2load
# sends REQUESTS more, counting stops. Prints, per binary, the instructions per request and
# the callgrind file (for `callgrind_annotate`, or `bench/callgrind_diff.py A B` for the
# functions that moved).
#
# Usage: bench/callgrind.sh [--help]
#
# Environment (all optional):
#   CG_PROTOCOL=h1          h1 (keep-alive HTTP/1.1), h1tls (the same over TLS, ECDSA P-256:
#                           its 64 handshakes counted too, the same for A and B), h2c
#                           (HTTP/2 with prior knowledge) or h2tls (HTTP/2 over TLS, ALPN h2,
#                           ECDSA P-256: its h2load -c handshakes counted too)
#   CG_REQUESTS=20000       requests counted (CG_WARMUP=2000 before them)
#   CG_CLIENTS, CG_STREAMS  h2load -c and -m (h1: 64 and 1; h2c and h2tls: 4 and 16, as many streams
#                           as the 64 connections below leave slots for)
#   SLUICE_BIN=path         the binary to count (default: this tree built ReleaseSafe with
#                           -Dcpu=x86_64_v2, which a given binary needs too: valgrind)
#   SLUICE_B_BIN=path       a second binary, counted in the same run (the A/B's other side)
#   SLUICE_ARGS="..."       extra flags for both
#   CG_HANDLER=fetch|proxy  through bench/handler_fetch.py's JavaScript handler instead of a
#                           plain pool: `fetch` (the pool's answer fetched and returned with a
#                           header changed) or `proxy` (the same request by Response.proxy),
#                           HTTP/1.1 only; the handler has 1 MiB of memory and 16 calls waiting
#                           at most, since its heaps are one reservation and under valgrind a
#                           larger one fails (see max_connections below)
#   CG_BACKEND=h1           what the pool speaks: h1, or h2c (nginx `listen ... http2`, prior
#                           knowledge; sluice `--backend-protocol h2c`, streams multiplexed),
#                           or grpc (bench/grpcload's echo server over h2c, GRPCBENCH=path to
#                           its binary, which bench/grpc.sh builds into its run folder; unary
#                           calls of a 64-byte message from h2load, with `te: trailers`)
set -euo pipefail

bench=callgrind
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 h2load:nghttp2-client nginx valgrind callgrind_control:valgrind openssl
make_run_dir
# valgrind does not know every instruction of a native build (AVX-512): a given binary must be
# built with -Dcpu=x86_64_v2 too.
if [ -z "${SLUICE_BIN:-}" ]; then
    get_zig || die "zig bootstrap failed"
    SLUICE_BIN="$(build_sluice_mode ReleaseSafe "$out/zig-out-callgrind" -Dcpu=x86_64_v2)" || die "$sluice_fail"
fi

protocol="${CG_PROTOCOL:-h1}"
requests="${CG_REQUESTS:-20000}"
warmup="${CG_WARMUP:-2000}"
case "$protocol" in
    h2c | h2tls) clients="${CG_CLIENTS:-4}" streams="${CG_STREAMS:-16}" ;;
    *) clients="${CG_CLIENTS:-64}" streams="${CG_STREAMS:-1}" ;;
esac
# Few connections: under valgrind, std's page allocator hints an address below its last map,
# and for a reservation larger than the space below (about 80 MB there) the hint wraps and
# mmap fails (EINVAL). 64 connections keep every reservation under that.
max_connections="${CG_MAX_CONNECTIONS:-64}"
case "$protocol" in
    h1) load_flags=(--h1) sluice_flags=() ;;
    h2c) load_flags=() sluice_flags=(--http2 on) ;;
    h1tls | h2tls)
        make_certs "$run" || die "openssl could not make the certificates (see $run/certs.log)"
        load_flags=() sluice_flags=(--tls-cert "$run/ecdsa.pem" --tls-key "$run/ecdsa.key")
        [ "$protocol" = h1tls ] && load_flags=(--h1) ;;
    *) die "CG_PROTOCOL is h1, h1tls, h2c or h2tls, not '$protocol'" ;;
esac
scheme=http
case "$protocol" in h1tls | h2tls) scheme=https ;; esac
target_path=/
case "${CG_HANDLER:-}" in
    "") ;;
    fetch | proxy)
        [ "$protocol" = h1 ] || die "CG_HANDLER runs over h1 only"
        [ "$CG_HANDLER" = proxy ] && target_path=/proxy ;;
    *) die "CG_HANDLER is fetch or proxy, not '$CG_HANDLER'" ;;
esac

lib="$here/benchlib.py"
port() { python3 "$lib" freeport; }
bport="$(port)"
python3 "$lib" conf backend "$run" "$bport" >"$run/backend.conf"
backend_flags=()
case "${CG_BACKEND:-h1}" in
    h1) ;;
    h2c)
        [ -z "${CG_HANDLER:-}" ] || die "CG_BACKEND=h2c runs without CG_HANDLER"
        sed -i "s/listen 127.0.0.1:$bport /listen 127.0.0.1:$bport http2 /" "$run/backend.conf"
        grep -q "listen 127.0.0.1:$bport http2 " "$run/backend.conf" || die "could not make the backend speak h2c"
        backend_flags=(--backend-protocol h2c) ;;
    grpc)
        [ -z "${CG_HANDLER:-}" ] || die "CG_BACKEND=grpc runs without CG_HANDLER"
        [ -x "${GRPCBENCH:-}" ] || die "CG_BACKEND=grpc needs GRPCBENCH=path to bench/grpcload's binary (bench/grpc.sh builds it)"
        backend_flags=(--backend-protocol h2c) ;;
    *) die "CG_BACKEND is h1, h2c or grpc, not '$CG_BACKEND'" ;;
esac
if [ "${CG_BACKEND:-h1}" = grpc ]; then
    # The gRPC echo server in nginx's place: a unary call of 64 bytes each way.
    "$GRPCBENCH" serve -listen "127.0.0.1:$bport" >"$run/backend.log" 2>&1 &
    backend_pid=$!
    python3 -c 'import struct, sys; sys.stdout.buffer.write(b"\x00" + struct.pack(">I", 64) + b"m" * 64)' >"$run/call.bin"
    load_flags+=(-d "$run/call.bin" -H "content-type: application/grpc" -H "te: trailers")
    target_path=/bench.Echo/Call
else
    nginx -e "$run/backend.error.log" -p "$run" -c "$run/backend.conf" >"$run/backend.log" 2>&1 &
    backend_pid=$!
fi
sluice_pid=""
# Whatever stops the script (a failed run included) stops the backend and the binary under test.
trap 'kill -TERM "$backend_pid" $sluice_pid 2>/dev/null || true' EXIT
python3 "$lib" wait-port "$bport" 10 "$backend_pid" || die "the backend did not start (see $run/backend.log)"
upstream_flags=(--backend "127.0.0.1:$bport" "${backend_flags[@]}")
if [ -n "${CG_HANDLER:-}" ]; then
    # handler_fetch.py's handler and site, with the memory valgrind can reserve.
    python3 - "$here" "$run" "$bport" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import handler_fetch
run, port = sys.argv[2], sys.argv[3]
open(f"{run}/edge.js", "w").write(handler_fetch.HANDLER)
site = handler_fetch.SITE.replace("BACKEND", port).replace('.deadline = "1s"', '.deadline = "1s", .memory = "1MiB", .suspended_max = 16')
open(f"{run}/site.zon", "w").write(site.replace('.listen = "127.0.0.1:PORT",\n', ""))
PY
    upstream_flags=(--config "$run/site.zon")
fi

# count LABEL BIN: one binary's figure, printed as a line of the table.
count() {
    local label="$1" bin="$2" sport cg_out pid
    sport="$(port)"
    cg_out="$run/callgrind.$label.out"
    # shellcheck disable=SC2086  # SLUICE_ARGS is a flag list
    valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$cg_out" \
        "$bin" --workers 1 --io epoll --max-connections "$max_connections" --listen "127.0.0.1:$sport" "${upstream_flags[@]}" \
        "${sluice_flags[@]}" ${SLUICE_ARGS:-} >"$run/$label.log" 2>&1 &
    pid=$!
    sluice_pid=$pid
    python3 "$lib" wait-port "$sport" 60 "$pid" || { kill "$pid" 2>/dev/null; die "$label did not start (see $run/$label.log)"; }
    h2load "${load_flags[@]}" -n "$warmup" -c "$clients" -m "$streams" "$scheme://127.0.0.1:$sport$target_path" \
        >"$run/$label.warmup.log" 2>&1 || die "h2load failed (see $run/$label.warmup.log)"
    callgrind_control -i on "$pid" >/dev/null 2>&1
    h2load "${load_flags[@]}" -n "$requests" -c "$clients" -m "$streams" "$scheme://127.0.0.1:$sport$target_path" \
        >"$run/$label.load.log" 2>&1 || die "h2load failed (see $run/$label.load.log)"
    callgrind_control -i off "$pid" >/dev/null 2>&1
    local ok
    ok="$(sed -n 's/^requests: .* \([0-9]*\) succeeded.*/\1/p' "$run/$label.load.log")"
    [ "$ok" = "$requests" ] || die "$label: $ok of $requests requests succeeded (see $run/$label.load.log)"
    kill -TERM "$pid"
    wait "$pid" 2>/dev/null || true
    sluice_pid=""
    local total
    total="$(callgrind_annotate "$cg_out" 2>/dev/null | sed -n 's/^\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)"
    [ -n "$total" ] || die "$label: no totals in $cg_out"
    printf '%-8s %10d instructions per request  (%s)\n' "$label" "$((total / requests))" "$cg_out"
}

log "$protocol${CG_HANDLER:+ through the handler ($CG_HANDLER)} to an ${CG_BACKEND:-h1} pool, $requests requests counted after $warmup, h2load -c $clients -m $streams"
count A "$SLUICE_BIN"
if [ -n "${SLUICE_B_BIN:-}" ]; then
    [ -x "$SLUICE_B_BIN" ] || die "SLUICE_B_BIN is not an executable"
    count B "$SLUICE_B_BIN"
fi
