"""Fixtures for the sluice black-box integration suite.

The suite runs the real binary (env SLUICE_BIN, default <repo>/zig-out/bin/sluice) over
real loopback sockets against the real backends in backends.py. It is skipped as a whole,
with the reason, when the binary does not exist.

Fixtures
    io           "uring" or "epoll"; every test that starts sluice runs once per mode.
                 SLUICE_IO=epoll (or uring, or "uring,epoll") restricts the modes. When
                 `--io=uring` fails at start-up because io_uring is unavailable, the uring
                 variants are skipped with sluice's reason.
    sluice       an unstarted Sluice bound to `io`; killed at teardown.
    make_sluice  factory for more Sluice instances: make_sluice() -> Sluice.
    make_backend factory: make_backend(behaviour=None, **kw) -> Backend; stopped at teardown.
    backend      one echo Backend.
    sluice_bin   the binary's path.

Every test also gets a wall-clock guard (SIGALRM, default 45 s, override with
@pytest.mark.time_limit(seconds)) so nothing can hang the run; every socket operation in
the helpers has its own timeout as well. On failure, sluice's stderr and the backends'
records are attached to the report.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from backends import Backend  # noqa: E402
from client import Deadline  # noqa: E402

REPO = HERE.parents[1]
SLUICE_BIN = os.environ.get("SLUICE_BIN") or str(REPO / "zig-out" / "bin" / "sluice")
DEFAULT_TEST_TIME_LIMIT = 45.0
START_TIMEOUT = 5.0
IO_NAMES = {"uring": "io_uring", "epoll": "epoll"}

# Every line sluice logs on stderr starts with an RFC 3339 timestamp, UTC, milliseconds:
# `2026-11-23T14:48:03.123Z sluice: ...`. `Sluice.lines` holds the lines without it (so the
# regexes below, and every test's, read from `sluice:` on) and `Sluice.raw_lines` as written;
# a `sluice:` line without a timestamp fails the test at teardown. Lines of their own form
# (`FILE:LINE:COL: ...`, for editors) have none.
STAMP_RE = re.compile(r"^(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (?=sluice: )")


def unstamped(text: str) -> str:
    """`text` (one line or several) without the timestamps in front of `sluice:`."""
    return "\n".join(STAMP_RE.sub("", line, count=1) for line in text.split("\n"))


LISTEN_RE = re.compile(
    r"^sluice: listening on (?P<host>\S+):(?P<port>\d+) \(workers=(?P<workers>\d+), "
    r"io=(?P<io>[\w_]+)\)")
STATS_RE = re.compile(r"^sluice: stats (?P<rest>.*)$")
EXIT_RE = re.compile(r"^sluice: exit heap_allocations_after_startup=(?P<n>\d+)")
# One line per listener, in config order; a named listener's line ends with its name.
LISTENER_RE = re.compile(
    r"^sluice: listening on (?P<host>\S+):(?P<port>\d+) \(workers=(?P<workers>\d+), "
    r"io=(?P<io>[\w_]+)\)(?: listener=(?P<name>\S+))?")
URING_UNAVAILABLE_RE = re.compile(r"io_uring", re.IGNORECASE)

_uring_unavailable: str | None = None  # sluice's reason, once seen
_SIGTERM = signal.SIGTERM  # the Sluice.signal method shadows the module in the class body


def binary_available() -> bool:
    return os.path.isfile(SLUICE_BIN) and os.access(SLUICE_BIN, os.X_OK)


def io_modes() -> list[str]:
    env = os.environ.get("SLUICE_IO", "").strip()
    if not env:
        return ["uring", "epoll"]
    modes = [m.strip() for m in env.split(",") if m.strip()]
    for m in modes:
        if m not in ("uring", "epoll", "auto"):
            raise pytest.UsageError(f"SLUICE_IO: unknown mode {m!r} (uring, epoll, auto)")
    return modes


# ---------------------------------------------------------------------------------------
# Sluice process helper


class SluiceStartError(AssertionError):
    pass


class Sluice:
    """One sluice process. start() spawns it and waits for the listening line; stderr
    (and stdout) are read by background threads and kept in `.lines` / `.stdout_lines`."""

    def __init__(self, io: str = "epoll", binary: str = SLUICE_BIN):
        self.io = io
        self.binary = binary
        self.proc: subprocess.Popen | None = None
        self.lines: list[str] = []
        self.raw_lines: list[str] = []
        self.unstamped_lines: list[str] = []
        self.stdout_lines: list[str] = []
        self.cmd: list[str] = []
        self.port: int | None = None
        self.listen_match: re.Match | None = None
        self.returncode: int | None = None
        self._cond = threading.Condition()
        self._readers: list[threading.Thread] = []

    # -- lifecycle --

    def build_cmd(self, backends=(), args=(), workers=1, listen="127.0.0.1:0", demo=False,
                  io=True) -> list[str]:
        cmd = [self.binary]
        if demo:
            cmd.append("demo")
        if listen is not None:
            cmd += ["--listen", listen]
        for b in backends:
            cmd += ["--backend", b.address if hasattr(b, "address") else str(b)]
        if io:
            cmd.append(f"--io={self.io}")
        if workers is not None:
            cmd += ["--workers", str(workers)]
        cmd += [str(a) for a in args]
        return cmd

    def spawn(self, cmd: list[str]):
        assert self.proc is None, "a Sluice instance runs one process"
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        for stream, sink in ((self.proc.stderr, self.lines), (self.proc.stdout,
                                                              self.stdout_lines)):
            t = threading.Thread(target=self._read_lines, args=(stream, sink), daemon=True)
            t.start()
            self._readers.append(t)

    def start(self, backends=(), args=(), workers=1, listen="127.0.0.1:0", demo=False,
              timeout: float = START_TIMEOUT) -> "Sluice":
        """Spawn `sluice [demo] --listen L --backend B... --io=X --workers N ARGS` and wait
        (bounded) for `sluice: listening on HOST:PORT (...)`. Sets `.port`."""
        global _uring_unavailable
        if self.io == "uring" and _uring_unavailable:
            pytest.skip(f"io_uring unavailable: {_uring_unavailable}")
        self.spawn(self.build_cmd(backends, args, workers, listen, demo))
        m = self.wait_for_line(LISTEN_RE, timeout, raise_on_timeout=False)
        if m is None:
            rc = self.wait(0.3)
            text = self.stderr_text()
            if rc is not None and self.io == "uring" and URING_UNAVAILABLE_RE.search(text):
                _uring_unavailable = next(
                    (ln for ln in self.lines if URING_UNAVAILABLE_RE.search(ln)), text.strip())
                pytest.skip(f"io_uring unavailable: {_uring_unavailable}")
            state = (f"exited with code {rc}" if rc is not None
                     else f"still running after {timeout}s")
            raise SluiceStartError(
                f"sluice never printed its listening line ({state})\n"
                f"command: {' '.join(self.cmd)}\nstderr:\n{text}")
        self.listen_match = m
        self.port = int(m.group("port"))
        if self.io == "uring" and m.group("io") != "io_uring":
            fallback = next((ln for ln in self.lines if URING_UNAVAILABLE_RE.search(ln)
                             and "unavailable" in ln), None)
            if fallback:
                _uring_unavailable = fallback
                self.kill()
                pytest.skip(f"io_uring unavailable: {fallback}")
        if self.io in IO_NAMES:
            assert m.group("io") == IO_NAMES[self.io], (
                f"asked for --io={self.io}, sluice reports io={m.group('io')}: {m.group(0)}")
        return self

    def _read_lines(self, stream, sink: list[str]):
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                with self._cond:
                    if sink is self.lines:
                        self.raw_lines.append(line)
                        if line.startswith("sluice:"):
                            self.unstamped_lines.append(line)
                        line = unstamped(line)
                    sink.append(line)
                    self._cond.notify_all()
        except (OSError, ValueError):
            pass
        finally:
            with self._cond:
                self._cond.notify_all()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int):
        if self.running():
            self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int | None:
        """Exit code, or None if still running after `timeout`."""
        if self.proc is None:
            return None
        try:
            self.returncode = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._join_readers(1.0)
        return self.returncode

    def stop(self, timeout: float = 10.0, sig: int = _SIGTERM) -> int:
        """Send SIGTERM and wait for the exit code (fails the test if it does not exit)."""
        assert self.proc is not None, "sluice was never started"
        self.signal(sig)
        rc = self.wait(timeout)
        if rc is None:
            self.kill()
            raise AssertionError(f"sluice did not exit within {timeout}s of {sig!r}")
        return rc

    def kill(self):
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.returncode = self.proc.poll()
        self._join_readers(1.0)
        if all(not t.is_alive() for t in self._readers):
            # Only now: closing a pipe a reader thread is blocked on would block us too
            # (a child that outlived sluice could hold its write end open).
            for s in (self.proc.stdout, self.proc.stderr):
                try:
                    s.close()
                except (OSError, ValueError):
                    pass

    def _join_readers(self, timeout: float):
        end = time.monotonic() + timeout
        for t in self._readers:
            t.join(max(0.0, end - time.monotonic()))

    # -- output --

    def wait_for_line(self, pattern, timeout: float = 5.0, start: int = 0,
                      raise_on_timeout: bool = True):
        """First stderr line at index >= start matching `pattern` (a regex); waits
        (bounded) for it. Returns the match, or None/raises on timeout or exit."""
        found = self._wait_for_line(pattern, timeout, start, raise_on_timeout)
        return found[1] if found else None

    def _wait_for_line(self, pattern, timeout: float, start: int, raise_on_timeout: bool
                       ) -> tuple[int, re.Match] | None:
        """(index in `.lines`, match) of the first line at or after `start` matching."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = Deadline(timeout)
        idx = start
        with self._cond:
            while True:
                while idx < len(self.lines):
                    m = rx.search(self.lines[idx])
                    idx += 1
                    if m:
                        return idx - 1, m
                exited = self.proc is None or self.proc.poll() is not None
                readers_done = all(not t.is_alive() for t in self._readers)
                if deadline.expired() or (exited and readers_done):
                    break
                self._cond.wait(min(0.05, max(0.001, deadline.remaining())))
        if raise_on_timeout:
            raise AssertionError(
                f"no stderr line matching {rx.pattern!r} (from line {start}) within {timeout}s\n"
                f"stderr:\n{self.stderr_text()}")
        return None

    def stderr_text(self) -> str:
        with self._cond:
            return "\n".join(self.lines)

    def stats(self, timeout: float = 5.0) -> dict[str, int]:
        """SIGUSR2, then parse the next `sluice: stats k=v ...` line into a dict."""
        with self._cond:
            start = len(self.lines)
        self.signal(signal.SIGUSR2)
        m = self.wait_for_line(STATS_RE, timeout, start=start)
        out = {}
        for pair in m.group("rest").split():
            k, _, v = pair.partition("=")
            out[k] = int(v) if v.lstrip("-").isdigit() else v
        return out

    def exit_allocations(self) -> int | None:
        """N from `sluice: exit heap_allocations_after_startup=N`, if printed."""
        for line in self.lines:
            m = EXIT_RE.search(line)
            if m:
                return int(m.group("n"))
        return None

    def describe(self) -> str:
        rc = self.proc.poll() if self.proc else None
        return f"io={self.io} port={self.port} rc={rc} cmd={' '.join(self.cmd)}"

    # -- config files, several listeners, reloads --

    def start_config(self, config_path, args=(), workers=1, io_flag: bool = True,
                     timeout: float = START_TIMEOUT) -> "Sluice":
        """Start `sluice --config FILE [--io=X] [--workers N] ARGS` with no --listen, so the
        file's listeners serve, and wait for the first listening line (`.port` is the first
        listener's port; see listen_ports for the others). io_flag=False leaves the I/O mode
        to the file (a flag would override it, on a reload too), workers=None the worker
        count."""
        if io_flag:
            return self.start(args=["--config", str(config_path), *args], workers=workers,
                              listen=None, timeout=timeout)
        self.build_cmd = lambda *a, **kw: Sluice.build_cmd(self, *a, **{**kw, "io": False})
        try:
            return self.start(args=["--config", str(config_path), *args], workers=workers,
                              listen=None, timeout=timeout)
        finally:
            del self.build_cmd

    def mark(self) -> int:
        """The number of stderr lines so far: pass it as `start=` to look only at lines
        printed after this point (say, before sending a signal)."""
        with self._cond:
            return len(self.lines)

    def wait_for_line_index(self, pattern, timeout: float = 5.0, start: int = 0
                            ) -> tuple[int, re.Match]:
        """Like wait_for_line (and raising on timeout), but also returns the index of the
        matching line in `.lines`."""
        return self._wait_for_line(pattern, timeout, start, raise_on_timeout=True)

    def listen_matches(self, count: int, timeout: float = 5.0, start: int = 0
                       ) -> list[re.Match]:
        """The first `count` listening lines (LISTENER_RE) from line `start` on, in order,
        waiting (bounded) until that many have been printed. Each match has `host`, `port`,
        `workers`, `io` and `name` (None for an unnamed listener)."""
        deadline = Deadline(timeout)
        out, idx = [], start
        for _ in range(count):
            i, m = self.wait_for_line_index(LISTENER_RE, max(0.001, deadline.remaining()), idx)
            out.append(m)
            idx = i + 1
        return out

    def listen_ports(self, count: int, timeout: float = 5.0, start: int = 0) -> list[int]:
        """The ports of the first `count` listening lines, in config order (see
        listen_matches)."""
        return [int(m.group("port")) for m in self.listen_matches(count, timeout, start)]

    def log_lines(self, pattern, start: int = 0) -> list[str]:
        """stderr lines from index `start` on that match the regex `pattern`."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        with self._cond:
            return [ln for ln in self.lines[start:] if rx.search(ln)]


# ---------------------------------------------------------------------------------------
# pytest plumbing


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "time_limit(seconds): wall-clock limit for one test (default 45 s)")


def pytest_report_header(config):
    state = "found" if binary_available() else "MISSING, suite skipped"
    return [f"sluice binary: {SLUICE_BIN} ({state}); io modes: {', '.join(io_modes())}"]


def pytest_collection_modifyitems(config, items):
    if binary_available():
        return
    skip = pytest.mark.skip(
        reason=f"sluice binary not found at {SLUICE_BIN} (build it with `zig build`, or set "
               f"SLUICE_BIN)")
    for item in items:
        if Path(str(item.path)).resolve().parent == HERE:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    for s in getattr(item, "_sluices", []):
        if s.proc is not None:
            with s._cond:
                out = "\n".join(s.raw_lines) or "(no stderr)"  # As written, timestamps too.
            if s.stdout_lines:
                out += "\n--- stdout (last 50 lines) ---\n" + "\n".join(s.stdout_lines[-50:])
            rep.sections.append((f"sluice stderr [{s.describe()}]", out))
    for b in getattr(item, "_backends", []):
        lines = [repr(b)]
        for r in b.requests[-10:]:
            lines.append(f"  conn{r.conn_index}#{r.seq} {r.method} {r.target} {r.version} "
                         f"framing={r.framing} body={len(r.body)}B headers={r.headers}")
        lines += [f"  exception: {e}" for e in b.exceptions]
        rep.sections.append((f"backend {b.name}", "\n".join(lines)))


class TimeLimitExceeded(Exception):
    pass


@pytest.fixture(autouse=True)
def _time_guard(request):
    """SIGALRM-based wall-clock guard: the test raises TestTimeLimit instead of hanging."""
    marker = request.node.get_closest_marker("time_limit")
    limit = float(marker.args[0]) if marker else DEFAULT_TEST_TIME_LIMIT

    def on_alarm(signum, frame):
        raise TimeLimitExceeded(f"test exceeded its {limit:.0f}s time limit")

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="session")
def sluice_bin() -> str:
    if not binary_available():
        pytest.skip(f"sluice binary not found at {SLUICE_BIN}")
    return SLUICE_BIN


@pytest.fixture(params=io_modes())
def io(request) -> str:
    if request.param == "uring" and _uring_unavailable:
        pytest.skip(f"io_uring unavailable: {_uring_unavailable}")
    return request.param


@pytest.fixture
def make_sluice(io, sluice_bin, request):
    made: list[Sluice] = []
    request.node._sluices = made

    def factory() -> Sluice:
        s = Sluice(io, sluice_bin)
        made.append(s)
        return s

    yield factory
    for s in made:
        s.kill()
    for s in made:
        assert not s.unstamped_lines, f"stderr lines without a timestamp: {s.unstamped_lines}"


@pytest.fixture
def sluice(make_sluice) -> Sluice:
    return make_sluice()


@pytest.fixture
def make_backend(request):
    made: list[Backend] = []
    request.node._backends = made

    def factory(behaviour=None, **kw) -> Backend:
        b = Backend(behaviour, **kw)
        made.append(b)
        return b

    yield factory
    for b in made:
        b.stop(timeout=1.0)


@pytest.fixture
def backend(make_backend) -> Backend:
    return make_backend()


def assert_quiescent(sluice, timeout=5.0):
    """The stats line shows nothing left over: no client connection, no request in flight
    upstream, and no heap allocation since start-up."""
    deadline = Deadline(timeout)
    while True:
        st = sluice.stats()
        if st["connections_active"] == 0 and st["upstream_requests_in_flight"] == 0:
            break
        deadline.check(f"sluice still has connections or requests in flight: {st}")
        time.sleep(0.05)
    assert st["heap_allocations_after_startup"] == 0, st
    return st


# ---------------------------------------------------------------------------------------
# Config files


class ZonEnum(str):
    """An enum literal in a ZON file: zon(ZonEnum("epoll")) is `.epoll`."""


_ZIG_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ZIG_KEYWORDS = frozenset(
    "addrspace align allowzero and anyframe anytype asm async await break callconv catch "
    "comptime const continue defer else enum errdefer error export extern fn for if inline "
    "linksection noalias noinline nosuspend opaque or orelse packed pub resume return struct "
    "suspend switch test threadlocal try union unreachable usingnamespace var volatile while "
    "true false null undefined".split())


def zon_string(text: str) -> str:
    """A Zig string literal for `text` (UTF-8; quotes, backslashes and control bytes
    escaped)."""
    out = ['"']
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 0x20 <= byte < 0x7F:
            out.append(ch)
        else:
            out.append(f"\\x{byte:02x}")
    out.append('"')
    return "".join(out)


def _zon_name(name: str) -> str:
    if _ZIG_IDENT_RE.fullmatch(name) and name not in _ZIG_KEYWORDS:
        return "." + name
    return ".@" + zon_string(name)


def zon(value, indent: int = 0) -> str:
    """Python values as ZON text: dict -> `.{ .key = value }` (insertion order, one field
    per line), list/tuple -> `.{ a, b }` (on one line when every item is a scalar), str ->
    a string literal, ZonEnum -> an enum literal, bool, int. Keys that are not plain
    identifiers are written `.@"Cache-Control"`."""
    pad, inner = "    " * indent, "    " * (indent + 1)
    if isinstance(value, ZonEnum):
        return _zon_name(str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return zon_string(value)
    if isinstance(value, dict):
        if not value:
            return ".{}"
        fields = [f"{inner}{_zon_name(k)} = {zon(v, indent + 1)}," for k, v in value.items()]
        return ".{\n" + "\n".join(fields) + "\n" + pad + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return ".{}"
        if all(isinstance(v, (str, int)) for v in value):
            return ".{ " + ", ".join(zon(v) for v in value) + " }"
        items = [f"{inner}{zon(v, indent + 1)}," for v in value]
        return ".{\n" + "\n".join(items) + "\n" + pad + "}"
    raise TypeError(f"no ZON for {value!r}")


def write_zon(path: Path, config: dict) -> Path:
    """Write `config` (see zon) to `path` and return the path."""
    path.write_text(zon(config) + "\n")
    return path


def free_port() -> int:
    """A 127.0.0.1 port nothing listens on right now (bound once and released), for config
    files that must name a fixed port: a reload compares listeners by address, and port 0
    would be a new port each time."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
