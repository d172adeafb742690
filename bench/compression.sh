#!/usr/bin/env bash
# Gzip end to end: sluice `--compress` against nginx `gzip on` at the same levels, same run
# (bench/compression.py does the work). Prints requests/s and the proxy's CPU per request and per MiB
# of page compressed, medians of interleaved rounds, sluice's as a ratio of nginx's.
#
# Usage: bench/compression.sh [--help]
#
# Environment (all optional):
#   BENCH_LEVELS=1,6        gzip levels, each run by both
#   BENCH_RUNS=3            rounds
#   BENCH_DURATION=5        seconds per measured run (after 1 s of warm-up)
#   BENCH_PAGE_KIB=20       the page's size
#   BENCH_CONNECTIONS=16    wrk -c (wrk -t1)
#   BENCH_PROXY_CPUS=1      taskset CPU list for the proxy under test
#   BENCH_LOAD_CPUS=0       taskset CPU list for wrk and the backend
#   BENCH_OPTIMIZE=ReleaseSafe  the build mode of sluice
#   SLUICE_BIN=path         use this binary instead of building one
#   SLUICE_B_BIN=path       a second sluice build, as the target `sluice_b`: an A/B
set -euo pipefail

bench=compression
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"
need_tools nginx wrk taskset:util-linux
make_run_dir
build_sluice || die "$sluice_fail"
b_args=()
[ -n "${SLUICE_B_BIN:-}" ] && b_args=(--sluice-b "$SLUICE_B_BIN")
log "sluice: $(sluice_version_of "$SLUICE_BIN") ($build); nginx $(nginx_version); run folder $run"
python3 "$here/compression.py" --sluice "$SLUICE_BIN" "${b_args[@]}" --run-dir "$run" \
    --levels "${BENCH_LEVELS:-1,6}" --rounds "${BENCH_RUNS:-3}" \
    --duration "${BENCH_DURATION:-5}" --page-kib "${BENCH_PAGE_KIB:-20}" \
    --connections "${BENCH_CONNECTIONS:-16}" --proxy-cpus "${BENCH_PROXY_CPUS:-1}" \
    --load-cpus "${BENCH_LOAD_CPUS:-0}" | tee "$run/report.txt"
