"""Command line: help, version, usage errors (exit 2, one line) and runtime errors (exit 1)."""

import datetime
import re
import socket
import subprocess

import pytest

from backends import traffic
from client import request
from conftest import STAMP_RE, unstamped

RUN_TIMEOUT = 5.0


def run(sluice_bin, *args):
    """Run sluice to completion (bounded); returns (code, stdout, stderr)."""
    try:
        p = subprocess.run([sluice_bin, *args], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"sluice {' '.join(args)} did not exit within {RUN_TIMEOUT}s")
    return (p.returncode, p.stdout.decode(errors="replace"),
            unstamped(p.stderr.decode(errors="replace")))


def _one_usage_line(code, err, flag=None):
    assert code == 2, f"expected exit 2 (usage error), got {code}; stderr: {err!r}"
    lines = err.splitlines()
    assert len(lines) == 1, f"a usage error prints exactly one line, got {lines!r}"
    assert lines[0].startswith("sluice: "), lines[0]
    if flag:
        assert flag in lines[0], f"the line should name {flag}: {lines[0]!r}"


def test_help(sluice_bin):
    """`--help` exits 0 and documents --backend."""
    code, out, err = run(sluice_bin, "--help")
    assert code == 0, err
    assert "--backend" in out + err


def test_version(sluice_bin):
    """`--version` exits 0 and prints a version number, and the TLS library's."""
    code, out, err = run(sluice_bin, "--version")
    assert code == 0, err
    assert re.search(r"\d+\.\d+", out + err), f"no version in {out + err!r}"
    assert re.search(r"\(AWS-LC \d+\.\d+\.\d+\)", out), out


def test_no_backend(sluice_bin):
    """No --backend: usage error, exit 2 with one line on stderr."""
    code, out, err = run(sluice_bin, "--listen", "127.0.0.1:0")
    _one_usage_line(code, err)


USAGE_ERRORS = [
    (["--backend", "nonsense"], "--backend"),
    (["--backend=nonsense"], "--backend"),
    (["--backend", "127.0.0.1:99999"], "--backend"),
    (["--backend", "127.0.0.1"], "--backend"),
    (["--backend", "127.0.0.1:8080", "--listen", "999.1.1.1:80"], "--listen"),
    (["--backend", "127.0.0.1:8080", "--listen", "127.0.0.1:notaport"], "--listen"),
    (["--backend", "127.0.0.1:8080", "--workers", "0"], "--workers"),
    (["--backend", "127.0.0.1:8080", "--workers=0"], "--workers"),
    (["--backend", "127.0.0.1:8080", "--workers", "many"], "--workers"),
    (["--backend", "127.0.0.1:8080", "--io", "bogus"], "--io"),
    (["--backend", "127.0.0.1:8080", "--io=bogus"], "--io"),
    (["--backend", "127.0.0.1:8080", "--client-header-timeout", "soon"],
     "--client-header-timeout"),
    (["--backend", "127.0.0.1:8080", "--header-bytes-max", "lots"], "--header-bytes-max"),
    (["--backend", "127.0.0.1:8080", "--trusted-proxy", "not-a-cidr"], "--trusted-proxy"),
    (["--backend", "127.0.0.1:8080", "--backend"], "--backend"),
    (["--backend", "127.0.0.1:8080", "--no-such-flag"], "--no-such-flag"),
    (["--backend", "127.0.0.1:8080", "stray-positional"], None),
]


@pytest.mark.parametrize("args,flag", USAGE_ERRORS,
                         ids=["_".join(a).lstrip("-") for a, _ in USAGE_ERRORS])
def test_usage_errors(sluice_bin, args, flag):
    """Each invalid command line exits 2 with exactly one stderr line naming the flag."""
    if not any(a.startswith("--listen") for a in args):
        args = ["--listen", "127.0.0.1:0", *args]  # never bind a public port by mistake
    code, out, err = run(sluice_bin, *args)
    _one_usage_line(code, err, flag)


def _refused_in_use(sluice, port):
    """sluice exits 1 with an error line naming the address and saying it is in use."""
    rc = sluice.wait(5.0)
    assert rc is not None, "sluice kept running on a port that is in use"
    text = sluice.stderr_text()
    if sluice.io == "uring" and "io_uring" in text and str(port) not in text:
        pytest.skip(f"io_uring unavailable: {text.strip()}")
    assert rc == 1, f"expected exit 1, got {rc}; stderr:\n{text}"
    wanted = f"sluice: error: cannot listen on 127.0.0.1:{port}: address already in use"
    assert any(ln.endswith(wanted) for ln in sluice.lines), text
    assert not any("listening on" in ln for ln in sluice.lines), text


def test_listen_port_in_use(sluice, backend):
    """`--listen` on a port that a plain socket (no SO_REUSEPORT) is listening on: exit 1
    (runtime failure) with a line that names the address and says it is in use."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        sluice.spawn(sluice.build_cmd([backend], listen=f"127.0.0.1:{port}"))
        _refused_in_use(sluice, port)
    finally:
        holder.close()


def test_second_sluice_on_a_port_sluice_listens_on(make_sluice, make_backend):
    """A second sluice asking for the port a first one (2 workers, each with its own
    SO_REUSEPORT socket) listens on is refused with exit 1 instead of joining the reuseport
    group and taking part of the traffic; the first keeps every request. (The same port on
    every interface is refused too: a unit test in runtime/generations.zig, so that a
    regression never opens a public port here.)"""
    first_backend, second_backend = make_backend(name="first"), make_backend(name="second")
    first = make_sluice().start([first_backend], workers=2)
    second = make_sluice()
    second.spawn(second.build_cmd([second_backend], workers=2,
                                  listen=f"127.0.0.1:{first.port}"))
    _refused_in_use(second, first.port)
    for i in range(20):
        r = request(first.port, "GET", f"/n/{i}")
        assert r.status == 200, r
    assert len(traffic(second_backend)) == 0
    assert len(traffic(first_backend)) == 20


def test_stderr_lines_start_with_a_utc_timestamp(sluice, backend):
    """Every stderr line starts with an RFC 3339 timestamp in UTC with milliseconds
    (`2026-11-23T14:48:03.123Z sluice: ...`), taken from the wall clock when the line is
    written: within the test's own window, and never going backwards."""
    before = datetime.datetime.now(datetime.timezone.utc)
    sluice.start([backend])
    request(sluice.port, "GET", "/")
    sluice.stats()
    assert sluice.stop() == 0
    after = datetime.datetime.now(datetime.timezone.utc)
    stamps = []
    for line in sluice.raw_lines:
        m = STAMP_RE.match(line)
        assert m, f"no timestamp: {line!r}"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", m["stamp"]), line
        stamps.append(datetime.datetime.fromisoformat(m["stamp"].replace("Z", "+00:00")))
    assert len(stamps) >= 4, sluice.raw_lines  # listening, stats, draining, exit
    slack = datetime.timedelta(milliseconds=5)
    assert before - slack <= stamps[0] and stamps[-1] <= after + slack, (before, stamps, after)
    assert stamps == sorted(stamps), stamps


INIT_RE = re.compile(r"^sluice: init (?P<phase>.+?)\s+(?P<own>\d+) ns  total\s+(?P<total>\d+) ns$")


def test_trace_init_prints_every_phase_in_order(sluice, backend):
    """`--trace-init`: one line per start-up phase, in order, each with its own cost and a
    running total that adds up, the first accepted connection included."""
    sluice.start([backend], args=["--trace-init"])
    request(sluice.port, "GET", "/")
    sluice.wait_for_line(re.compile(r"^sluice: init first accept"), 5.0)
    # The control loop's line may come after the first accept's (another thread writes it).
    sluice.wait_for_line(re.compile(r"^sluice: init control loop"), 5.0)
    phases = [m for m in (INIT_RE.match(ln) for ln in sluice.lines) if m]
    names = [m["phase"].strip() for m in phases]
    # Workers accept as soon as they are ready, so the first accept may come before the
    # control loop's set-up is marked.
    assert names[:4] == ["config", "validate", "listen+allocate", "workers ready"], names
    assert sorted(names[4:]) == ["control loop", "first accept"], names
    total = 0
    for m in phases:
        total += int(m["own"])
        assert int(m["total"]) == total, (m.group(0), total)


def test_no_trace_without_the_flag(sluice, backend):
    """Start-up prints no phase lines unless asked to."""
    sluice.start([backend])
    request(sluice.port, "GET", "/")
    assert not any(INIT_RE.match(ln) for ln in sluice.lines), sluice.stderr_text()
