#!/usr/bin/env bash
# Chaos benchmark: how sluice rides out backends that die, stall and fail, in bounded time.
#
# N nginx backends on 127.0.0.1 (each its own config, pid file and process tree), sluice in
# front with fast active checks and passive ejection, and Python keep-alive clients that
# record every request's outcome. For CHAOS_SECONDS one backend at a time is killed with
# SIGKILL and restarted on the same port, stalled (SIGSTOP) or made to answer 500. Prints
# requests, failures by kind, time to detection and to recovery per disturbance, requests
# per backend, sluice's stats line and its exit code; also to bench/out/chaos-<timestamp>.txt.
# A measurement, not a test: exits non-zero only when the harness breaks. See bench/README.md.
#
# Usage: bench/chaos.sh [--help]
#
# Environment (all optional):
#   CHAOS_SECONDS=30        seconds of load; disturbances run inside it
#   CHAOS_BACKENDS=4        nginx backends
#   CHAOS_CLIENTS=12        Python client threads (sequential keep-alive GETs each)
#   CHAOS_CLIENT_TIMEOUT=10 seconds a client waits for one response
#   CHAOS_PHASES=kill,stall,http500   kinds of disturbance (kill is required)
#   CHAOS_SEED=N            replay a schedule (printed in every report)
#   CHAOS_WARMUP=2          seconds of undisturbed load before the first disturbance
#   CHAOS_TAIL=4            seconds of undisturbed load after the last one
#   CHAOS_DOWN_MIN=2 CHAOS_DOWN_MAX=4   how long a backend stays disturbed (uniform)
#   CHAOS_GAP_MIN=1  CHAOS_GAP_MAX=2    pause between disturbances (uniform)
#   CHAOS_WRK_CONNECTIONS=0 >0 adds `wrk -t1 -cN` against sluice as background load
#   sluice's flags, each overridable:
#   CHAOS_HEALTH_PATH=/healthz CHAOS_HEALTH_INTERVAL=200ms CHAOS_HEALTH_TIMEOUT=200ms
#   CHAOS_HEALTH_FALL=2 CHAOS_HEALTH_RISE=2 CHAOS_EJECT_AFTER=3 CHAOS_EJECT_TIME=1s
#   CHAOS_CONNECT_TIMEOUT=500ms (--upstream-connect-timeout)
#   CHAOS_RESPONSE_TIMEOUT=2s   (--upstream-response-timeout)
#   SLUICE_ARGS="..."       more sluice flags, appended (e.g. "--workers 1 --io epoll")
#   SLUICE_BIN=path         use this binary instead of building one
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"

while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "chaos.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done

log() { printf '[chaos %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
started_at=$(date +%s)

# --- tools (as proxy.sh: Debian packages, installed when missing) ----------------------

export PATH="$PATH:/usr/sbin:/sbin"   # Debian's nginx lives in /usr/sbin

source "$(dirname "${BASH_SOURCE[0]}")/apt.sh"

ensure_tools() {
    local missing=()
    command -v python3 >/dev/null || missing+=(python3)
    command -v nginx >/dev/null || missing+=(nginx)
    if [ "${CHAOS_WRK_CONNECTIONS:-0}" != 0 ]; then
        command -v wrk >/dev/null || missing+=(wrk)
    fi
    apt_install chaos.sh "${missing[@]}"
}
ensure_tools

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$here/out"
run="$out/chaos-$stamp"            # configs, logs and the timeline of this run
mkdir -p "$run"

# --- build sluice (as proxy.sh: pinned Zig, ReleaseFast, its own prefix) ---------------

zig_version="?"
build=""
if [ -n "${SLUICE_BIN:-}" ]; then
    log "using SLUICE_BIN=$SLUICE_BIN"
    [ -x "$SLUICE_BIN" ] || { echo "chaos.sh: SLUICE_BIN $SLUICE_BIN is not executable" >&2; exit 1; }
    build="given as SLUICE_BIN"
else
    log "building sluice (zig build -Doptimize=ReleaseFast)"
    if ! zig="$(timeout 900 "$root/tools/bootstrap.sh" 2>"$run/bootstrap.log")"; then
        tail -n 20 "$run/bootstrap.log" >&2
        echo "chaos.sh: zig bootstrap failed" >&2
        exit 1
    fi
    zig_version="$("$zig" version)"
    # Its own prefix under bench/out, so a concurrent debug build in zig-out/ cannot swap
    # the binary under us.
    if ! (cd "$root" && timeout 1200 "$zig" build -Doptimize=ReleaseFast \
            --prefix "$out/zig-out") >"$run/build.log" 2>&1; then
        tail -n 30 "$run/build.log" >&2
        echo "chaos.sh: build failed (see $run/build.log)" >&2
        exit 1
    fi
    SLUICE_BIN="$out/zig-out/bin/sluice"
    build="zig $zig_version, ReleaseFast"
fi

# --- versions and machine, for the report ----------------------------------------------

cpu_model="$(grep -m1 -E '^(model name|Model|cpu model)' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
[ -n "$cpu_model" ] || cpu_model="$(uname -m)"
if commit="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null)"; then
    [ -n "$(git --no-optional-locks -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ] &&
        commit="$commit+dirty"
else
    commit="none (no commits yet)"
fi
sluice_version="$( (timeout 5 "$SLUICE_BIN" --version 2>&1 || true) | sed -n 1p)"
nginx_version="$(nginx -v 2>&1 | sed 's/^nginx version: nginx\///')"
wrk_version="$( (command -v wrk >/dev/null && wrk -v 2>&1 || true) | awk 'NR == 1 {print $2}')"

# The exact command: the knobs that were set, then the script.
command_line=""
for v in $(compgen -e | grep -E '^(CHAOS_|SLUICE_ARGS$|SLUICE_BIN$)' || true); do
    command_line+="$v=$(printf '%q' "${!v}") "
done
command_line+="bench/chaos.sh"

# chaos.py starts and stops everything else (also on SIGINT/SIGTERM, which reach it directly
# through exec) and writes the report.
exec python3 "$here/chaos.py" --sluice "$SLUICE_BIN" --run-dir "$run" \
    --report "$out/chaos-$stamp.txt" --command "$command_line" \
    --info "date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')" \
    --info "CPU: $cpu_model, nproc=$(nproc); kernel $(uname -sr)" \
    --info "sluice: $sluice_version (tree at commit $commit; binary $SLUICE_BIN, $build)" \
    --info "nginx: $nginx_version; wrk: ${wrk_version:-not installed}; $(python3 --version 2>&1)" \
    --info "set-up (tools, build) took $(($(date +%s) - started_at)) s before the harness started"
