#!/usr/bin/env bash
# JavaScript handler benchmark (issue 13): bench/js/app.js's JSON branch under sluice
# (--handler-file, ReleaseSafe; and compiled in with -Dhandler, ReleaseFast), against the same
# logic under node's `http` server, Bun.serve and Deno.serve, one process each pinned to one
# CPU. Requests per second, CPU per request and latency (p50/p90/p99) from wrk in interleaved
# rounds; cold start, spawn to the first 200 of the handler, beside sluice without a handler.
# Bodies are checked byte-identical before anything is measured. Prints the tables, also to
# bench/out/js-<timestamp>.md (.json: every run). A measurement, not a test: exits non-zero
# only when the harness breaks. See bench/README.md.
#
# Usage: bench/js.sh [--help]
#
# Node is the machine's (`node` on PATH); Bun and Deno are installed from npm
# (@oven/bun-linux-x64, @deno/linux-x64-glibc) into bench/out/js-runtimes when missing.
#
# Environment (all optional):
#   JS_RUNS=3               measured rounds (every server once per round, order rotated)
#   JS_DURATION=8           seconds of each measured wrk run
#   JS_WARMUP=2             seconds of warm-up before each measured run
#   JS_CONNECTIONS=50       wrk connections (one wrk thread)
#   JS_COLD_RUNS=20         cold-start runs per server (0 skips the cold start)
#   JS_COLD_WARMUP=2        discarded cold-start runs per server first
#   JS_SERVER_CPUS=1        taskset CPU list for each server; JS_LOAD_CPUS=0 for wrk
#   JS_TARGETS="sluice sluice-embedded node bun deno"
#   JS_EMBEDDED=1           0 skips the ReleaseFast -Dhandler build (and its row)
#   JS_FETCH=1              0 skips the fetch case (a handler's fetch against Response.proxy)
#   JS_BASELINE_BIN=path    another sluice binary for the sluice-baseline target, run as the
#                           sluice row is (an A/B of a change: JS_TARGETS="sluice sluice-baseline")
#   SLUICE_BIN=path         use this binary instead of building one (ReleaseSafe)
set -euo pipefail

bench=js
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
no_args "$@"

need_tools python3 wrk nginx taskset:util-linux
make_run_dir
build_sluice || die "$sluice_fail"

# sluice with the handler compiled in: its own prefix, ReleaseFast.
embedded_bin=""
embedded_cmd="zig build -Doptimize=ReleaseFast -Dhandler=bench/js/app.js --prefix bench/out/zig-out-js"
if [ "${JS_EMBEDDED:-1}" != 0 ]; then
    embedded_bin="$(build_sluice_mode ReleaseFast "$out/zig-out-js" -Dhandler="$here/js/app.js")" ||
        { embedded_bin=""; log "the -Dhandler build failed: no sluice-embedded row ($sluice_fail)"; }
fi

# Bun and Deno from npm (the packages ship the binaries), once, into bench/out/js-runtimes.
runtimes="$out/js-runtimes"
bun_bin="$runtimes/node_modules/@oven/bun-linux-x64/bin/bun"
deno_bin="$runtimes/node_modules/@deno/linux-x64-glibc/deno"
if [ ! -x "$bun_bin" ] || [ ! -x "$deno_bin" ]; then
    if command -v npm >/dev/null; then
        log "installing Bun and Deno from npm into $runtimes"
        mkdir -p "$runtimes"
        (cd "$runtimes" && timeout 600 npm install --no-audit --no-fund --ignore-scripts \
            @oven/bun-linux-x64 @deno/linux-x64-glibc) >"$run/npm.log" 2>&1 ||
            { tail -n 20 "$run/npm.log" >&2; log "npm install failed: no Bun or Deno rows"; }
    else
        log "no npm: no Bun or Deno rows"
    fi
fi
[ -x "$bun_bin" ] || bun_bin=""
[ -x "$deno_bin" ] || deno_bin=""
node_bin="$(command -v node || true)"

harness_info
exec python3 "$here/js.py" --sluice "$SLUICE_BIN" --sluice-embedded "$embedded_bin" \
    --sluice-baseline "${JS_BASELINE_BIN:-}" \
    --node "$node_bin" --bun "$bun_bin" --deno "$deno_bin" --nginx "$(command -v nginx)" \
    --js-dir "$here/js" --run-dir "$run" --report "$out/js-$stamp.md" \
    --command "$(command_line JS_)" "${info[@]}" \
    --info "node ${node_bin:+$("$node_bin" --version)}; Bun ${bun_bin:+$("$bun_bin" --version)}; $([ -n "$deno_bin" ] && "$deno_bin" --version | head -1); wrk $(wrk_version); nginx $(nginx_version) (the fetch case's pool, the cold-start backend)" \
    --info "sluice with the handler compiled in: \`$embedded_cmd\`" \
    --info "$(setup_took "tools, builds")"
