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

bench=chaos
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 nginx
[ "${CHAOS_WRK_CONNECTIONS:-0}" = 0 ] || need_tools wrk
make_run_dir                       # configs, logs and the timeline of this run
build_sluice || die "$sluice_fail"

# chaos.py starts and stops everything else (also on SIGINT/SIGTERM, which reach it directly
# through exec) and writes the report.
harness_info
exec python3 "$here/chaos.py" --sluice "$SLUICE_BIN" --nginx "$(command -v nginx)" \
    --run-dir "$run" --report "$out/chaos-$stamp.txt" --command "$(command_line CHAOS_)" \
    "${info[@]}" \
    --info "nginx: $(nginx_version); wrk: $(wrk_version); $(python3 --version 2>&1)" \
    --info "$(setup_took "tools, build")"
