#!/usr/bin/env bash
# Memory benchmark: idle RSS right after start, and memory per idle keep-alive connection,
# sluice against nginx and HAProxy.
#
# One backend (nginx, `return 200 "hello\n"`) on 127.0.0.1. Each proxy is started alone, left
# idle (no traffic at all) and its VmRSS (/proc/PID/status) and Pss (/proc/PID/smaps_rollup)
# read per process. Then MEMORY_CONNECTIONS (10000) client connections are opened to it, one
# keep-alive `GET /` is made on each (MEMORY_CONCURRENCY exchanges in flight at a time),
# every connection is left idle for MEMORY_SETTLE seconds (sluice returns an idle
# connection's buffer after one second), RSS is read again and the established sockets on
# the proxy's port are counted with `ss`. (after − before) / connections is the memory per
# idle connection. Rounds interleave the proxies; medians are reported. Tables go to stdout
# and to bench/out/memory-<timestamp>.md (.json: every figure). A measurement, not a test:
# exits non-zero only when the harness breaks. See bench/README.md.
#
# Usage: bench/memory.sh [--help]
#
# Environment (all optional):
#   MEMORY_CONNECTIONS=10000  idle keep-alive client connections per proxy
#   MEMORY_CONCURRENCY=200    connects/exchanges in flight at once while opening them
#   MEMORY_SETTLE=2           seconds every connection stays idle before RSS is read
#   MEMORY_IDLE_WAIT=1        seconds after start-up before the idle RSS is read
#   MEMORY_ROUNDS=3           rounds (each proxy started afresh per round)
#   MEMORY_WAVES=1            open the connections in this many waves ...
#   MEMORY_WAVE_GAP=1.5       ... this many seconds apart (see bench/README.md: sluice's
#                             RSS follows how many connections were hot at once)
#   MEMORY_OPEN_TIMEOUT=60    seconds allowed for opening all the connections
#   MEMORY_NOFILE=65536       `ulimit -n` for everything started (hard limit raised if allowed)
#   MEMORY_TARGETS="sluice-w1 sluice-default nginx haproxy"   add `tls` for three HTTPS rows
#                             (sluice --workers 1, nginx, HAProxy terminating TLS with one
#                             ECDSA P-256 certificate; each client connection does a TLS 1.3
#                             handshake before its request, then stays idle)
#   SLUICE_BIN=path           use this binary instead of building one (ReleaseFast)
#   SLUICE_ARGS="..."         extra flags for every sluice row (e.g. "--io epoll")
set -euo pipefail

bench=memory
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 nginx haproxy ss:iproute2
make_run_dir                       # configs and logs of this run

# --- file descriptors: 10,000 client sockets here, as many in the proxy ----------------

want_nofile="${MEMORY_NOFILE:-65536}"
case "$want_nofile" in ''|*[!0-9]*) echo "memory.sh: MEMORY_NOFILE must be a number" >&2; exit 2 ;; esac
hard_before="$(ulimit -Hn)"
if [ "$hard_before" != unlimited ] && [ "$hard_before" -lt "$want_nofile" ]; then
    ulimit -Hn "$want_nofile" 2>/dev/null || log "cannot raise the hard fd limit from $hard_before to $want_nofile"
fi
hard="$(ulimit -Hn)"
soft="$want_nofile"
[ "$hard" != unlimited ] && [ "$hard" -lt "$soft" ] && soft="$hard"
ulimit -n "$soft"
nofile_note="ulimit -n $(ulimit -n) (hard $(ulimit -Hn); it was $hard_before before this script)"
log "$nofile_note"

build_sluice || die "$sluice_fail"

# The HTTPS rows' certificate (MEMORY_TARGETS with `tls`): ECDSA P-256, common.sh's make_certs.
certs_args=()
if [[ " ${MEMORY_TARGETS:-} " == *" tls "* ]]; then
    need_tools openssl
    make_certs "$run" || { tail -n 20 "$run/certs.log" >&2; die "openssl could not make the certificate"; }
    certs_args=(--certs "$run")
fi

# memory.py starts and stops everything else (also on SIGINT/SIGTERM, which reach it directly
# through exec) and writes the report.
harness_info "; $(awk '/MemTotal/ {printf "RAM %.1f GiB", $2 / 1048576}' /proc/meminfo); page size $(getconf PAGESIZE)"
exec python3 "$here/memory.py" --sluice "$SLUICE_BIN" "${certs_args[@]}" \
    --nginx "$(command -v nginx)" --haproxy "$(command -v haproxy)" \
    --run-dir "$run" --report "$out/memory-$stamp.md" --command "$(command_line MEMORY_)" \
    "${info[@]}" \
    --info "nginx: $(nginx_version); HAProxy: $(haproxy_version); $(python3 --version 2>&1)" \
    --info "file descriptors: $nofile_note" \
    --info "$(setup_took "tools, build")"
