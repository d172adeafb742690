"""`--io=auto` falls back to epoll when io_uring cannot be set up, and says why; `--io=uring`
refuses to start instead. io_uring is made unavailable for real, with the kernel's own switch
(`kernel.io_uring_disabled`, Linux 6.6+), as a seccomp profile or an old kernel would."""

import contextlib
import re
import subprocess

import pytest

from client import request
from conftest import Sluice

SWITCH = "/proc/sys/kernel/io_uring_disabled"


@contextlib.contextmanager
def io_uring_disabled():
    """Disables io_uring machine-wide for the duration; always restores the old value."""
    try:
        with open(SWITCH) as f:
            old = f.read().strip()
        with open(SWITCH, "w") as f:
            f.write("2")
    except OSError as e:
        pytest.skip(f"cannot switch io_uring off here ({SWITCH}: {e})")
    try:
        yield
    finally:
        with open(SWITCH, "w") as f:
            f.write(old)


def test_auto_falls_back_to_epoll_and_logs_why(sluice_bin, backend):
    """With io_uring disabled, `--io=auto` logs the reason, reports io=epoll, and proxies."""
    s = Sluice("auto", sluice_bin)
    try:
        with io_uring_disabled():
            s.spawn([sluice_bin, "--listen", "127.0.0.1:0", "--backend", backend.address,
                     "--io=auto", "--workers", "1"])
            line = s.wait_for_line(r"^sluice: listening on 127\.0\.0\.1:(\d+) \(.*io=(\w+)\)",
                                   5.0)
        assert line.group(2) == "epoll", line.group(0)
        assert any(re.match(r"^sluice: warn: io_uring unavailable \(.+\), using epoll$", l)
                   for l in s.lines), s.lines
        r = request(int(line.group(1)), "GET", "/after-fallback")
        assert r.status == 200, r
        assert s.stop(timeout=5.0) == 0
    finally:
        s.kill()


def test_forced_uring_refuses_to_start_when_unavailable(sluice_bin, backend):
    """`--io=uring` with io_uring disabled exits 1 with one line that names io_uring."""
    with io_uring_disabled():
        done = subprocess.run([sluice_bin, "--listen", "127.0.0.1:0", "--backend",
                               backend.address, "--io=uring", "--workers", "1"],
                              capture_output=True, text=True, timeout=10)
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "io_uring" in done.stderr, done.stderr
