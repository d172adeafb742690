# Sourced by the bench scripts (proxy.sh, chaos.sh, coldstart.sh, memory.sh, js.sh, tls.sh):
# what they share in shell. Set `bench` (the script's name without .sh) first, and `log_tag`
# when the log lines should be tagged otherwise. Defines here, root, out and started_at, puts
# /usr/sbin on PATH (Debian's nginx and haproxy live there), and the functions below: argument
# help, log lines, Debian packages installed when missing, the run folder, self-signed
# certificates, the pinned Zig and the sluice builds, versions and the machine, and the --info
# lines the Python drivers print.

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"   # bench/
root="$(cd "$here/.." && pwd)"
out="$here/out"
started_at=$(date +%s)
export PATH="$PATH:/usr/sbin:/sbin"
log_tag="${log_tag:-$bench}"

log() { printf '[%s %s] %s\n' "$log_tag" "$(date +%H:%M:%S)" "$*" >&2; }
die() { echo "$bench.sh: $*" >&2; exit 1; }

# The script's header comment, from line 2 to `set -euo pipefail`, as its --help.
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
bad_arg() { echo "$bench.sh: unknown argument '$1' (try --help)" >&2; exit 2; }
# no_args "$@": for a script whose only argument is --help.
no_args() {
    while [ $# -gt 0 ]; do
        case "$1" in
            -h|--help) usage; exit 0 ;;
            *) bad_arg "$1" ;;
        esac
    done
}

# --- tools: Debian packages, installed when missing ------------------------------------

# apt_install PACKAGE...: as root or through passwordless sudo, quietly, printing the tail of
# apt's log if it fails.
apt_install() {
    [ $# -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || die "need $* and neither root nor sudo"
        sudo="sudo -n"
    fi
    command -v apt-get >/dev/null || die "need $*; no apt-get here, install them yourself"
    log "installing $* with apt-get"
    local alog
    alog="$(mktemp)"
    if ! { timeout 600 $sudo apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive timeout 900 $sudo apt-get install -y -qq \
               --no-install-recommends "$@"; } >"$alog" 2>&1; then
        tail -n 30 "$alog" >&2
        die "apt-get failed"
    fi
    rm -f "$alog"
}

# need_tools COMMAND[:PACKAGE]...: installs the packages of the commands that are missing
# (PACKAGE defaults to the command's name).
need_tools() {
    local missing=() c
    for c in "$@"; do
        command -v "${c%%:*}" >/dev/null || missing+=("${c#*:}")
    done
    apt_install "${missing[@]}"
}

# make_run_dir: stamp (UTC) and run=bench/out/BENCH-STAMP, made.
make_run_dir() {
    stamp="$(date -u +%Y%m%dT%H%M%SZ)"
    run="$out/$bench-$stamp"
    mkdir -p "$run"
}

# --- certificates ---------------------------------------------------------------------

# make_certs DIR: self-signed ecdsa.pem/.key (P-256) and rsa.pem/.key (2048 bits) for
# localhost, unencrypted PEM: what every proxy loads.
make_certs() {
    local d="$1"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$d/ecdsa.key" -out "$d/ecdsa.pem" 2>>"$d/certs.log"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 \
        -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$d/rsa.key" -out "$d/rsa.pem" 2>>"$d/certs.log"
}

# --- Zig and sluice --------------------------------------------------------------------

zig=""
zig_version="?"
# get_zig: the pinned Zig (tools/bootstrap.sh, log in the run folder) in $zig and its
# version in $zig_version; fetched once.
get_zig() {
    [ -n "$zig" ] && return 0
    if ! zig="$(timeout 900 "$root/tools/bootstrap.sh" 2>"$run/bootstrap.log")"; then
        tail -n 20 "$run/bootstrap.log" >&2
        zig=""
        return 1
    fi
    zig_version="$("$zig" version)"
}

# build_sluice: SLUICE_BIN when set, else a build with the pinned Zig in BENCH_OPTIMIZE mode
# (default ReleaseSafe, what `make release` ships) into bench/out/zig-out: its own prefix, so a
# concurrent debug build in zig-out/ cannot swap the binary under us. Sets SLUICE_BIN,
# sluice_optimize and build (how it was made); returns 1 with the reason in sluice_fail when
# there is no binary.
build_sluice() {
    sluice_fail=""
    sluice_optimize="${BENCH_OPTIMIZE:-ReleaseSafe}"
    if [ -n "${SLUICE_BIN:-}" ]; then
        log "using SLUICE_BIN=$SLUICE_BIN"
        build="given as SLUICE_BIN"
        sluice_optimize="as given"
        [ -x "$SLUICE_BIN" ] || { sluice_fail="SLUICE_BIN $SLUICE_BIN is not executable"; return 1; }
        return 0
    fi
    get_zig || { sluice_fail="zig bootstrap failed"; return 1; }
    SLUICE_BIN="$(build_sluice_mode "$sluice_optimize" "$out/zig-out")" || return 1
    build="zig $zig_version, $sluice_optimize"
}

# build_sluice_mode MODE PREFIX [FLAG...]: builds sluice with -Doptimize=MODE and the other
# `zig build` FLAGs (-Dhandler=..., -Dstrip=true) into PREFIX, logging to
# build-<PREFIX's name>.log in the run folder, and prints the binary's path; returns 1 with
# the reason in sluice_fail on failure.
build_sluice_mode() {
    local mode="$1" prefix="$2"
    shift 2
    local blog="$run/build-$(basename "$prefix").log"
    log "building sluice (zig build -Doptimize=$mode $* --prefix ${prefix#"$root"/})"
    get_zig || { sluice_fail="zig bootstrap failed"; return 1; }
    if ! (cd "$root" && timeout 1200 "$zig" build -Doptimize="$mode" "$@" \
            --prefix "$prefix") >"$blog" 2>&1; then
        tail -n 30 "$blog" >&2
        sluice_fail="build failed (see $blog)"
        return 1
    fi
    echo "$prefix/bin/sluice"
}

# --- versions and the machine ----------------------------------------------------------

sluice_version_of() {
    local v
    v="$( (timeout 5 "$1" --version 2>&1 || true) | sed -n 1p)"
    echo "${v:-(--version printed nothing)}"
}
nginx_version() { nginx -v 2>&1 | sed 's/^nginx version: nginx\///'; }
haproxy_version() { haproxy -v 2>/dev/null | awk 'NR == 1 {print $3}'; }
wrk_version() {
    if command -v wrk >/dev/null; then (wrk -v 2>&1 || true) | awk 'NR == 1 {print $2}'; else echo "not installed"; fi
}

# machine_info: cpu_model, and commit (the tree's, +dirty when tracked files have changes).
machine_info() {
    cpu_model="$(grep -m1 -E '^(model name|Model|cpu model)' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
    [ -n "$cpu_model" ] || cpu_model="$(uname -m)"
    if commit="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null)"; then
        # An `if`, not `&&`: a clean tree must not make the function fail under `set -e`.
        if [ -n "$(git --no-optional-locks -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
            commit="$commit+dirty"
        fi
    else
        commit="none (no commits yet)"
    fi
}

# command_line PREFIX: the exact command, for the report: the knobs that were set (PREFIX*,
# SLUICE_ARGS, SLUICE_BIN), then the script.
command_line() {
    local v line=""
    for v in $(compgen -e | grep -E "^($1|SLUICE_ARGS\$|SLUICE_BIN\$)" || true); do
        line+="$v=$(printf '%q' "${!v}") "
    done
    echo "${line}bench/$bench.sh"
}

# harness_info [CPU_EXTRA]: the first --info lines of a driver's machine section in `info`
# (date, CPU + CPU_EXTRA, sluice); the script adds its own, and setup_took last.
harness_info() {
    machine_info
    info=(--info "date (UTC): $(date -u '+%Y-%m-%d %H:%M:%S')"
          --info "CPU: $cpu_model, nproc=$(nproc); kernel $(uname -sr)${1:-}"
          --info "sluice: $(sluice_version_of "$SLUICE_BIN") (tree at commit $commit; binary $SLUICE_BIN, $build)")
}
# setup_took WHAT: the last --info line.
setup_took() { echo "set-up ($1) took $(($(date +%s) - started_at)) s before the harness started"; }
