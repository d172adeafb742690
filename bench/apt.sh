# Sourced by the bench scripts: installs the Debian packages a benchmark needs when they are
# missing (as root, or through passwordless sudo), quietly, printing the tail of apt's log if
# it fails. Usage: apt_install SCRIPT_NAME PACKAGE...
apt_install() {
    local name="$1"
    shift
    [ $# -eq 0 ] && return 0
    local sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null || { echo "$name: need $* and neither root nor sudo" >&2; exit 1; }
        sudo="sudo -n"
    fi
    command -v apt-get >/dev/null || { echo "$name: need $*; no apt-get here, install them yourself" >&2; exit 1; }
    log "installing $* with apt-get"
    local alog
    alog="$(mktemp)"
    if ! { timeout 600 $sudo apt-get update -qq &&
           DEBIAN_FRONTEND=noninteractive timeout 900 $sudo apt-get install -y -qq \
               --no-install-recommends "$@"; } >"$alog" 2>&1; then
        tail -n 30 "$alog" >&2
        echo "$name: apt-get failed" >&2
        exit 1
    fi
    rm -f "$alog"
}
