#!/usr/bin/env bash
# Proxy benchmark: sluice against nginx and HAProxy, same machine, same run.
#
# One shared backend (nginx, 1 worker) on 127.0.0.1 answers `/` with a 6-byte "hello\n" and
# `/1m` with a 1 MiB body; each proxy under test runs with one worker as a keep-alive reverse
# proxy to it; wrk drives each one in interleaved rounds, in two scenarios: small responses
# (`/`) and 1 MiB responses (`/1m`). Per run we record wrk's req/s and p50/p99, and the
# proxy's own CPU time (utime+stime of its whole process tree, from /proc) per request. For
# each scenario, a short extra run per proxy counts its system calls and io_uring
# operations and completions per response (perf's tracepoints, or strace). Medians, ratios and the machine go to
# stdout and to bench/out/proxy-<timestamp>.md. See bench/README.md.
#
# Usage: bench/proxy.sh [--quick] [--runs N] [--help]
#
# Environment (all optional):
#   BENCH_RUNS=5            measured runs per target (--quick: 1)
#   BENCH_DURATION=10       seconds per measured run (--quick: 3)
#   BENCH_WARMUP=2          seconds of wrk before every measured run (--quick: 1)
#   BENCH_CONNECTIONS=50    wrk -c
#   BENCH_SCENARIOS="small large"  small: `/`, 6-byte body; large: `/1m`, 1 MiB body
#   BENCH_LARGE_CONNECTIONS=10     wrk -c of the large scenario
#   BENCH_SYSCALL_SECONDS=3 length of each scenario's system-call counting run (0: none)
#   BENCH_THREADS=1         wrk -t
#   BENCH_TARGETS="backend floor sluice sluice_fast nginx haproxy"   subset/order of rows
#                           (floor: bench/pipe_floor.c, a minimal epoll byte pipe, the least a
#                           proxy can do; sluice: the BENCH_OPTIMIZE build; sluice_fast:
#                           ReleaseFast, to show what the safety checks of ReleaseSafe cost)
#   BENCH_OPTIMIZE=ReleaseSafe  the build mode of the `sluice` row (what make release ships)
#   BENCH_PIN=auto          auto (both when nproc >= 2, else 0), both, 1, 0: both measures the
#                           small scenario pinned and unpinned in each round (the processes'
#                           affinity is changed between the two with taskset -a -p)
#   BENCH_PROXY_CPUS=1      taskset CPU list for the proxy under test
#   BENCH_LOAD_CPUS=0       taskset CPU list for wrk and the backend
#   BENCH_FOREIGN_MAX=0.10  a run during which other programs used more than this many
#                           cores is repeated ...
#   BENCH_RETRIES=2         ... at most this many times; the attempt with the least
#                           other load counts
#   SLUICE_BIN=path         use this binary instead of building one
#   SLUICE_B_BIN=path       a second sluice build, as the target `sluice_b` (add it to
#                           BENCH_TARGETS): an A/B of a change in the same interleaved rounds
#   SLUICE_B_ARGS="..."     extra flags for `sluice_b` only (after SLUICE_ARGS); with
#                           SLUICE_B_BIN the same binary, an A/B of a setting
#   SLUICE_ARGS="..."       extra sluice flags (e.g. "--io epoll")
set -euo pipefail

bench=proxy
log_tag=bench
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
lib="$here/benchlib.py"

quick=0
runs_flag=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --runs) runs_flag="${2:?--runs needs a number}"; shift ;;
        --runs=*) runs_flag="${1#--runs=}" ;;
        -h|--help) usage; exit 0 ;;
        *) bad_arg "$1" ;;
    esac
    shift
done

if [ "$quick" = 1 ]; then
    RUNS="${runs_flag:-${BENCH_RUNS:-1}}"
    DURATION="${BENCH_DURATION:-3}"
    WARMUP="${BENCH_WARMUP:-1}"
    mode="quick"
else
    RUNS="${runs_flag:-${BENCH_RUNS:-5}}"
    DURATION="${BENCH_DURATION:-10}"
    WARMUP="${BENCH_WARMUP:-2}"
    mode="full"
fi
CONNS="${BENCH_CONNECTIONS:-50}"
SCENARIOS="${BENCH_SCENARIOS:-small large}"
LARGE_CONNS="${BENCH_LARGE_CONNECTIONS:-10}"
SYSCALL_SECONDS="${BENCH_SYSCALL_SECONDS:-3}"
THREADS="${BENCH_THREADS:-1}"
TARGETS="${BENCH_TARGETS:-backend floor sluice sluice_fast nginx haproxy}"
PIN="${BENCH_PIN:-auto}"
PROXY_CPUS="${BENCH_PROXY_CPUS:-1}"
LOAD_CPUS="${BENCH_LOAD_CPUS:-0}"
SLUICE_ARGS="${SLUICE_ARGS:-}"
FOREIGN_MAX="${BENCH_FOREIGN_MAX:-0.10}"
RETRIES="${BENCH_RETRIES:-2}"
case "$FOREIGN_MAX" in ''|*[!0-9.]*) echo "proxy.sh: BENCH_FOREIGN_MAX must be a number of cores" >&2; exit 2 ;; esac
for v in RUNS DURATION WARMUP CONNS THREADS RETRIES LARGE_CONNS SYSCALL_SECONDS; do
    case "${!v}" in ''|*[!0-9]*) echo "proxy.sh: $v must be a whole number, got '${!v}'" >&2; exit 2 ;; esac
done

[ "$RUNS" -ge 1 ] && [ "$DURATION" -ge 1 ] || { echo "proxy.sh: runs and duration must be at least 1" >&2; exit 2; }
for sc in $SCENARIOS; do
    case "$sc" in small|large) ;; *) echo "proxy.sh: unknown scenario '$sc' in BENCH_SCENARIOS (small, large)" >&2; exit 2 ;; esac
done
large=0
[[ " $SCENARIOS " == *" large "* ]] && large=1

need_tools python3 nginx haproxy wrk taskset:util-linux
# The system-call count prefers perf's tracepoints (linux-perf must match the kernel, so it is
# not installed here); strace is the fallback.
[ "$SYSCALL_SECONDS" -gt 0 ] && ! command -v perf >/dev/null && need_tools strace

# --- run directory, process bookkeeping, cleanup --------------------------------------

make_run_dir                       # configs, logs, raw wrk output of this run
md="$out/proxy-$stamp.md"
results="$run/results.jsonl"
meta="$run/meta.tsv"
: >"$results"
: >"$meta"
metaline() { local IFS=$'\t'; printf '%s\n' "$*" >>"$meta"; }

started_pids=()
# alive PID: running and not a zombie (our unreaped children stay visible to kill -0)
alive() {
    local st
    st="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
    st="${st##*) }"
    [ "${st%% *}" != Z ]
}
cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM
    local all=() p
    for p in "${started_pids[@]}"; do
        [ -d "/proc/$p" ] || continue
        # The whole tree: nginx workers would outlive a killed master.
        all+=($(python3 "$lib" tree "$p" 2>/dev/null || echo "$p"))
    done
    if [ ${#all[@]} -gt 0 ]; then
        kill -TERM "${all[@]}" 2>/dev/null
        for _ in $(seq 30); do
            local alive=0
            for p in "${all[@]}"; do alive "$p" && alive=1; done
            [ $alive = 0 ] && break
            sleep 0.1
        done
        for p in "${all[@]}"; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
        wait 2>/dev/null
    fi
    exit $rc
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT
trap 'log "terminated"; exit 143' TERM

PIN_LOAD=()
PIN_PROXY=()
case "$PIN" in
    auto) [ "$(nproc)" -ge 2 ] && PIN=both || PIN=0 ;;
    both|1|0) ;;
    *) echo "proxy.sh: BENCH_PIN must be auto, both, 1 or 0" >&2; exit 2 ;;
esac
# PIN=both: the processes start pinned, and each round of the small scenario runs pinned,
# then again unpinned (`free:` records), the affinities switched in between.
free_rounds=0
if [ "$PIN" = both ]; then
    PIN=1
    free_rounds=1
fi
if [ "$PIN" = 1 ]; then
    PIN_LOAD=(taskset -c "$LOAD_CPUS")
    PIN_PROXY=(taskset -c "$PROXY_CPUS")
    pinning="proxy on CPU $PROXY_CPUS; wrk and backend on CPU $LOAD_CPUS (taskset)"
    [ "$free_rounds" = 1 ] && pinning="$pinning; and unpinned rows (every process on every CPU, switched with taskset -a -p between the two runs of each round)"
else
    pinning="none (scheduler places proxy, wrk and backend)"
fi

# start_bg LOGFILE PIN_KIND CMD... : starts CMD in the background, records its pid in $bg_pid
start_bg() {
    local logf="$1" kind="$2"; shift 2
    if [ "$kind" = proxy ]; then
        "${PIN_PROXY[@]}" "$@" >"$logf" 2>&1 &
    else
        "${PIN_LOAD[@]}" "$@" >"$logf" 2>&1 &
    fi
    bg_pid=$!
    started_pids+=("$bg_pid")
}

# stop_pid PID SECONDS : SIGTERM, wait, then SIGKILL the tree
stop_pid() {
    local pid="$1" secs="$2" tree
    tree=$(python3 "$lib" tree "$pid" 2>/dev/null || echo "$pid")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq $((secs * 10))); do alive "$pid" || break; sleep 0.1; done
    for p in $tree; do alive "$p" && kill -KILL "$p" 2>/dev/null; done
    wait "$pid" 2>/dev/null || true
}

# --- versions and machine --------------------------------------------------------------

nginx_bin="$(command -v nginx)"
haproxy_bin="$(command -v haproxy)"
nginx_version="$(nginx_version)"
haproxy_version="$(haproxy_version)"
wrk_version="$(wrk_version)"
clk_tck="$(getconf CLK_TCK)"
machine_info

# --- build sluice ----------------------------------------------------------------------

sluice_fail=""
sluice_version="?"
if [[ " $TARGETS " == *" sluice "* ]] && build_sluice; then
    sluice_version="$(sluice_version_of "$SLUICE_BIN")"
fi
sluice_fast_fail=""
sluice_fast_bin=""
if [[ " $TARGETS " == *" sluice_fast "* ]]; then
    sluice_fast_bin="$(build_sluice_mode ReleaseFast "$out/zig-out-fast")" || sluice_fast_fail="$sluice_fail"
fi
floor_fail=""
floor_bin="$run/pipe_floor"
if [[ " $TARGETS " == *" floor "* ]]; then
    if ! { command -v gcc >/dev/null && gcc -O2 -o "$floor_bin" "$here/pipe_floor.c"; } 2>"$run/floor-build.log"; then
        floor_fail="could not build bench/pipe_floor.c with gcc -O2 (see $run/floor-build.log)"
    fi
fi

# --- configs ---------------------------------------------------------------------------

# Generated by benchlib.py (`conf`), like the other drivers' configs: everything in $run,
# nothing read from /etc/nginx.
port() { python3 "$lib" freeport; }
bport="$(port)"
nginx_port="$(port)"
haproxy_port="$(port)"
# The large scenario's body: 1 MiB the backend sends with sendfile (benchlib.nginx_large_location).
head -c 1048576 /dev/urandom >"$run/1m.bin"
python3 "$lib" conf backend "$run" "$bport" >"$run/backend.conf"
python3 "$lib" conf nginx "$run" "$nginx_port" "$bport" >"$run/nginx.conf"
python3 "$lib" conf haproxy "$run" "$haproxy_port" "$bport" >"$run/haproxy.cfg"
sluice_port="$(port)"

# --- start everything ------------------------------------------------------------------

declare -A tport tpid tlabel tfail
tlabel[backend]="backend alone (ceiling)"
tlabel[floor]="byte pipe floor (bench/pipe_floor.c)"
tlabel[sluice]="sluice (${sluice_optimize:-?})"
tlabel[sluice_fast]="sluice (ReleaseFast)"
tlabel[sluice_b]="sluice B (${SLUICE_B_BIN:-SLUICE_B_BIN not set}${SLUICE_B_ARGS:+ $SLUICE_B_ARGS})"
tlabel[nginx]="nginx $nginx_version"
tlabel[haproxy]="HAProxy $haproxy_version"
for t in $TARGETS; do
    [ -n "${tlabel[$t]:-}" ] || { echo "proxy.sh: unknown target '$t' in BENCH_TARGETS" >&2; exit 2; }
done

log "backend nginx on 127.0.0.1:$bport"
start_bg "$run/backend.log" load "$nginx_bin" -e "$run/backend.error.log" -p "$run" -c "$run/backend.conf"
backend_pid=$bg_pid
if ! python3 "$lib" wait-port "$bport" 10 "$backend_pid" || ! python3 "$lib" smoke "$bport" ||
   ! python3 "$lib" smoke-large "$bport" "$run/1m.bin"; then
    cat "$run/backend.log" "$run/backend.error.log" 2>/dev/null >&2 || true
    echo "proxy.sh: the backend did not start; nothing to measure" >&2
    exit 1
fi
tport[backend]=$bport
tpid[backend]="-"

# check_started NAME LOGFILE : wait for the port and a correct proxied answer (and, with
# the large scenario, the 1 MiB body byte for byte)
check_started() {
    local name="$1" logf="$2"
    if python3 "$lib" wait-port "${tport[$name]}" 10 "${tpid[$name]}" &&
       python3 "$lib" smoke "${tport[$name]}" &&
       { [ "$large" = 0 ] || python3 "$lib" smoke-large "${tport[$name]}" "$run/1m.bin"; }; then
        return 0
    fi
    local pid="${tpid[$name]}" rc
    if alive "$pid"; then
        log "$name is running but failed the check above; its output:"
        stop_pid "$pid" 2
    else
        rc=0; wait "$pid" 2>/dev/null || rc=$?
        log "$name exited with code $rc before serving; its output:"
    fi
    if [ -s "$logf" ]; then tail -n 40 "$logf" >&2; else echo "    (nothing on stdout/stderr)" >&2; fi
    return 1
}

for t in $TARGETS; do
    case "$t" in
        backend) ;;
        floor)
            if [ -n "$floor_fail" ]; then tfail[floor]="$floor_fail"; continue; fi
            tport[floor]="$(port)"
            log "byte pipe floor on 127.0.0.1:${tport[floor]}"
            start_bg "$run/floor.log" proxy "$floor_bin" "${tport[floor]}" "$bport"
            tpid[floor]=$bg_pid
            check_started floor "$run/floor.log" || tfail[floor]="did not start or did not relay (see $run/floor.log)"
            ;;
        sluice)
            if [ -n "$sluice_fail" ]; then tfail[sluice]="$sluice_fail"; continue; fi
            tport[sluice]=$sluice_port
            log "sluice on 127.0.0.1:$sluice_port"
            # shellcheck disable=SC2086  # SLUICE_ARGS is a flag list
            start_bg "$run/sluice.log" proxy "$SLUICE_BIN" --workers 1 \
                --listen "127.0.0.1:$sluice_port" --backend "127.0.0.1:$bport" $SLUICE_ARGS
            tpid[sluice]=$bg_pid
            check_started sluice "$run/sluice.log" || tfail[sluice]="did not start or did not proxy (see $run/sluice.log)"
            ;;
        sluice_fast)
            if [ -n "$sluice_fast_fail" ]; then tfail[sluice_fast]="$sluice_fast_fail"; continue; fi
            tport[sluice_fast]="$(port)"
            log "sluice (ReleaseFast) on 127.0.0.1:${tport[sluice_fast]}"
            # shellcheck disable=SC2086  # SLUICE_ARGS is a flag list
            start_bg "$run/sluice_fast.log" proxy "$sluice_fast_bin" --workers 1 \
                --listen "127.0.0.1:${tport[sluice_fast]}" --backend "127.0.0.1:$bport" $SLUICE_ARGS
            tpid[sluice_fast]=$bg_pid
            check_started sluice_fast "$run/sluice_fast.log" || tfail[sluice_fast]="did not start or did not proxy (see $run/sluice_fast.log)"
            ;;
        sluice_b)
            if [ ! -x "${SLUICE_B_BIN:-}" ]; then tfail[sluice_b]="SLUICE_B_BIN is not an executable"; continue; fi
            tport[sluice_b]="$(port)"
            log "sluice B ($SLUICE_B_BIN) on 127.0.0.1:${tport[sluice_b]}"
            # shellcheck disable=SC2086  # SLUICE_ARGS is a flag list
            start_bg "$run/sluice_b.log" proxy "$SLUICE_B_BIN" --workers 1 \
                --listen "127.0.0.1:${tport[sluice_b]}" --backend "127.0.0.1:$bport" $SLUICE_ARGS \
                ${SLUICE_B_ARGS:-}
            tpid[sluice_b]=$bg_pid
            check_started sluice_b "$run/sluice_b.log" || tfail[sluice_b]="did not start or did not proxy (see $run/sluice_b.log)"
            ;;
        nginx)
            tport[nginx]=$nginx_port
            log "nginx proxy on 127.0.0.1:$nginx_port"
            start_bg "$run/nginx.log" proxy "$nginx_bin" -e "$run/nginx.error.log" -p "$run" -c "$run/nginx.conf"
            tpid[nginx]=$bg_pid
            check_started nginx "$run/nginx.error.log" || tfail[nginx]="did not start or did not proxy (see $run/nginx.error.log)"
            ;;
        haproxy)
            tport[haproxy]=$haproxy_port
            log "HAProxy on 127.0.0.1:$haproxy_port"
            start_bg "$run/haproxy.log" proxy "$haproxy_bin" -db -f "$run/haproxy.cfg"
            tpid[haproxy]=$bg_pid
            check_started haproxy "$run/haproxy.log" || tfail[haproxy]="did not start or did not proxy (see $run/haproxy.log)"
            ;;
    esac
done

sluice_io=""
if [ -f "$run/sluice.log" ]; then
    sluice_io="$(sed -n "s/.*listening on .*io=\([a-z_]*\).*/\1/p" "$run/sluice.log" | sed -n 1p)"
fi

# --- measure ---------------------------------------------------------------------------

# Per scenario: wrk's connections and the path. A large-scenario run is recorded under
# the target name `1m:TARGET`.
declare -A sconns spath sprefix
sconns[small]=$CONNS;       spath[small]="/";   sprefix[small]=""
sconns[large]=$LARGE_CONNS; spath[large]="/1m"; sprefix[large]="1m:"
wrk_cmd="wrk -t$THREADS -c$CONNS -d${DURATION}s --latency http://127.0.0.1:PORT/"
[ "$PIN" = 1 ] && wrk_cmd="taskset -c $LOAD_CPUS $wrk_cmd"
wrk_large_cmd="wrk -t$THREADS -c$LARGE_CONNS -d${DURATION}s --latency http://127.0.0.1:PORT/1m"
[ "$PIN" = 1 ] && wrk_large_cmd="taskset -c $LOAD_CPUS $wrk_large_cmd"

# run_wrk OUTFILE SECONDS ARGS... : warm-up run; in the background so signals reach our trap
run_wrk() {
    local outf="$1" secs="$2"; shift 2
    "${PIN_LOAD[@]}" timeout -k 5 $((secs + 30)) wrk "$@" >"$outf" 2>&1 &
    local wpid=$!
    started_pids+=("$wpid")
    wait "$wpid"
}

# measure TARGET SCENARIO ROUND ATTEMPT PINNING : one measured run, appends one JSON line to
# $results; an unpinned (`free`) run is recorded as `free:NAME`
measure() {
    local t="$1" sc="$2" r="$3" a="$4" pm="$5" name="${sprefix[$2]}$1" cpus="${load_cpus_arg}"
    if [ "$pm" = free ]; then name="free:$name"; cpus="-"; fi
    local url="http://127.0.0.1:${tport[$1]}${spath[$2]}"
    python3 "$lib" measure "$name" "$r" "$a" "$run/wrk-${name//:/-}-$r-$a.txt" "${tpid[$t]}" \
        "$backend_pid" $((DURATION + 30)) "$cpus" -- \
        wrk -t"$THREADS" -c"${sconns[$sc]}" -d"${DURATION}s" --latency "$url" >"$run/last.json" &
    local mpid=$!
    started_pids+=("$mpid")
    wait "$mpid"
}

load_cpus_arg="-"
[ "$PIN" = 1 ] && load_cpus_arg="$LOAD_CPUS"

# pin_all pinned|free : the affinity of every process tree started (the backend, each
# target), for BENCH_PIN=both's unpinned runs and back; wrk is started with its own.
pin_all() {
    local proxy_cpus="$PROXY_CPUS" load_cpus="$LOAD_CPUS" p t
    if [ "$1" = free ]; then
        proxy_cpus="0-$(($(nproc) - 1))"
        load_cpus="$proxy_cpus"
    fi
    for p in $(python3 "$lib" tree "$backend_pid"); do taskset -a -pc "$load_cpus" "$p" >/dev/null 2>&1 || true; done
    for t in "${active[@]}"; do
        [ "${tpid[$t]}" = "-" ] && continue
        for p in $(python3 "$lib" tree "${tpid[$t]}"); do taskset -a -pc "$proxy_cpus" "$p" >/dev/null 2>&1 || true; done
    done
}

active=()
for t in $TARGETS; do [ -z "${tfail[$t]:-}" ] && active+=("$t"); done
per_run=$((DURATION + WARMUP))
nscen=$(echo $SCENARIOS | wc -w)
log "measuring ${active[*]:-nothing} (scenarios: $SCENARIOS): $RUNS round(s) × ${#active[@]}" \
    "target(s) × $nscen scenario(s) × ~${per_run}s ≈ $((RUNS * ${#active[@]} * nscen * per_run))s"

summarize='import json,sys
r = json.loads(open(sys.argv[1]).read())
if "error" in r:
    print("error|" + r["error"]); sys.exit()
cpu = ", proxy %.2f us/req (%.0f%% busy)" % (r["proxy_cpu_us_per_req"], r["proxy_busy"] * 100) if "proxy_cpu_us_per_req" in r else ""
bad = " SOCKET ERRORS %d" % r["socket_errors"] if r["socket_errors"] else ""
bad += " NON-2XX %d" % r["non2xx"] if r["non2xx"] else ""
print("%s|%.0f req/s, p50 %.0f us, p99 %.0f us%s, other load %.2f cores%s" % (
    "foreign" if r["foreign_cores"] > float(sys.argv[2]) else "ok",
    r["rps"], r["p50_us"], r["p99_us"], cpu, r["foreign_cores"], bad))'

for ((r = 1; r <= RUNS; r++)); do
  for sc in $SCENARIOS; do
   pin_modes=(pinned)
   [ "$free_rounds" = 1 ] && [ "$sc" = small ] && pin_modes=(pinned free)
   for pm in "${pin_modes[@]}"; do
    [ "$free_rounds" = 1 ] && pin_all "$pm"
    pm_label=""
    [ "$pm" = free ] && pm_label=" unpinned"
    # Rotate the order each round so no target always runs first or last.
    n=${#active[@]}
    for ((i = 0; i < n; i++)); do
        t="${active[$(((i + r - 1) % n))]}"
        [ -n "${tfail[$t]:-}" ] && continue
        url="http://127.0.0.1:${tport[$t]}${spath[$sc]}"
        for ((a = 0; a <= RETRIES; a++)); do
            if [ "$WARMUP" -gt 0 ]; then
                if [ "$pm" = free ]; then
                    timeout -k 5 $((WARMUP + 30)) wrk -t"$THREADS" -c"${sconns[$sc]}" -d"${WARMUP}s" "$url" \
                        >"$run/warmup-free-$t-$r.txt" 2>&1 || true
                else
                    run_wrk "$run/warmup-${sprefix[$sc]/:/-}$t-$r.txt" "$WARMUP" -t"$THREADS" \
                        -c"${sconns[$sc]}" -d"${WARMUP}s" "$url" || true
                fi
            fi
            measure "$t" "$sc" "$r" "$a" "$pm" || true
            verdict="$(python3 -c "$summarize" "$run/last.json" "$FOREIGN_MAX" 2>&1 || echo "error|unreadable result")"
            log "round $r/$RUNS $sc$pm_label $t: ${verdict#*|}"
            # Every attempt is recorded; the report keeps, per round, the attempt with the
            # least other load.
            cat "$run/last.json" >>"$results"
            if [ "${verdict%%|*}" = foreign ] && [ "$a" -lt "$RETRIES" ]; then
                log "  other programs used more than $FOREIGN_MAX cores during this run; retrying in 5 s"
                sleep 5
                continue
            fi
            break
        done
        if [ "${tpid[$t]}" != "-" ] && ! alive "${tpid[$t]}"; then
            log "$t died during round $r; dropping it from later rounds"
            tail -n 20 "$run/$t.log" >&2 2>/dev/null || true
            tfail[$t]="died during round $r"
        fi
    done
   done
   [ "$free_rounds" = 1 ] && pin_all pinned
  done
done
rm -f "$run/last.json"

# System calls per response, per scenario: one more short run per proxy, counted (perf's
# tracepoints cost a little CPU, strace a lot: this run is kept apart from the timed ones).
# Recorded under the scenario's target name (`sluice`, `1m:sluice`).
syscalls_out="$run/syscalls.jsonl"
: >"$syscalls_out"
if [ "$SYSCALL_SECONDS" -gt 0 ]; then
  for sc in $SCENARIOS; do
    for t in "${active[@]}"; do
        [ "$t" = backend ] && continue
        [ -n "${tfail[$t]:-}" ] && continue
        name="${sprefix[$sc]}$t"
        pids="$(python3 "$lib" tree "${tpid[$t]}" | paste -sd, -)"
        python3 "$lib" syscalls "$name" "$run/syscalls-${name/:/-}.txt" "$pids" $((SYSCALL_SECONDS + 30)) \
            "$load_cpus_arg" -- wrk -t"$THREADS" -c"${sconns[$sc]}" -d"${SYSCALL_SECONDS}s" \
            --latency "http://127.0.0.1:${tport[$t]}${spath[$sc]}" >>"$syscalls_out" &
        spid=$!
        started_pids+=("$spid")
        wait "$spid" || true
        log "system calls of $name: $(tail -n 1 "$syscalls_out" | python3 -c '
import json, sys
r = json.loads(sys.stdin.read())
if "error" in r:
    print("error: " + r["error"])
else:
    p = r["per_response"]
    print("%.2f per response (%s)" % (p["syscalls"], ", ".join("%s %.2f" % (k, v) for k, v in p.items() if k != "syscalls" and v >= 0.005)))
' 2>&1)"
    done
  done
fi

# sluice's exit line carries its heap-allocation counter: stop it gracefully to read it.
sluice_heap=""
if [ -n "${tpid[sluice]:-}" ] && [ -z "${tfail[sluice]:-}" ]; then
    stop_pid "${tpid[sluice]}" 12
    sluice_heap="$(sed -n 's/.*exit heap_allocations_after_startup=\([0-9]*\).*/\1/p' "$run/sluice.log" | tail -n1)"
fi

# --- report ----------------------------------------------------------------------------

elapsed=$(($(date +%s) - started_at))
metaline date "$(date -u '+%Y-%m-%d %H:%M:%S')"
metaline mode "$mode: $RUNS run(s) × ${DURATION}s per target"
metaline md_path "$md"
metaline nproc "$(nproc)"
metaline cpu_model "$cpu_model"
metaline kernel "$(uname -sr)"
metaline pinning "$pinning"
metaline sluice_version "$sluice_version"
metaline sluice_commit "$commit"
metaline sluice_build "${sluice_optimize:-?}"
metaline zig_version "$zig_version"
metaline sluice_io "$sluice_io"
metaline nginx_version "$nginx_version"
metaline haproxy_version "$haproxy_version"
metaline wrk_version "$wrk_version"
metaline backend_port "$bport"
metaline wrk_cmd "$wrk_cmd"
metaline wrk_large_cmd "$wrk_large_cmd"
metaline scenarios "$SCENARIOS"
metaline syscalls_path "$syscalls_out"
metaline syscall_seconds "$SYSCALL_SECONDS"
metaline runs "$RUNS"
metaline warmup_s "$WARMUP"
metaline clk_tck "$clk_tck"
metaline foreign_max "$FOREIGN_MAX"
for t in $TARGETS; do metaline target "$t" "${tlabel[$t]}" "${tfail[$t]:-}"; done
if [ -n "${tpid[sluice]:-}" ]; then
    metaline note "sluice command: \`sluice --workers 1 --listen 127.0.0.1:PORT --backend 127.0.0.1:BPORT${SLUICE_ARGS:+ $SLUICE_ARGS}\`"
fi
[ -n "$sluice_heap" ] && metaline note "sluice heap_allocations_after_startup at exit: $sluice_heap"
if [ "$large" = 1 ] && [ -f "$run/nginx.error.log" ]; then
    spilled="$(grep -c 'buffered to a temporary file' "$run/nginx.error.log" || true)"
    [ "${spilled:-0}" -gt 0 ] &&
        metaline note "nginx buffered $spilled upstream response(s) to a temporary file (proxy_buffering on, its default: a 1 MiB body outgrew proxy_buffers while the client read slower than the backend sent)"
fi
metaline note "configs, logs and raw wrk output: bench/out/proxy-$stamp/; whole script took ${elapsed}s"

python3 "$lib" report "$results" "$meta"
log "wrote $md"
