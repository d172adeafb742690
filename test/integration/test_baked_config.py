"""`zig build -Dconfig=FILE` compiles a config file into the binary: the binary then serves
with no arguments at all, flags still override it, and a file with a mistake fails the build
naming its line and column."""

import subprocess

import pytest

from client import request
from conftest import REPO

ZIG = REPO / ".zig" / "ziglang" / "zig"


def zig_build(*args, timeout=300):
    return subprocess.run([str(ZIG), "build", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.time_limit(300)
# One I/O backend: the build is what is tested, and it takes 10 s a time (CI's budget).
@pytest.mark.parametrize("io", ["epoll"])
def test_baked_binary_serves_without_arguments(make_sluice, make_backend, tmp_path):
    """The baked pool is the one served; `--listen` given at run time overrides the file."""
    if not ZIG.exists():
        pytest.skip("no pinned zig in .zig/ (run tools/bootstrap.sh)")
    b1, b2 = make_backend(), make_backend()
    path = tmp_path / "prod.zon"
    path.write_text(".{ .listen = \"127.0.0.1:1\", .workers = 1, .pools = .{ .app = .{ "
                    f".backends = .{{ \"127.0.0.1:{b1.port}\", \"127.0.0.1:{b2.port}\" }}, "
                    ".strategy = .round_robin } } }\n")
    prefix = tmp_path / "out"
    done = zig_build(f"-Dconfig={path}", "-p", str(prefix))
    assert done.returncode == 0, done.stderr
    sluice = make_sluice()
    sluice.binary = str(prefix / "bin" / "sluice")
    # No --backend: the pool comes from the binary. --listen and --io are the fixture's.
    sluice.start([], workers=None)
    for i in range(4):
        assert request(sluice.port, "GET", f"/baked/{i}").status == 200
    assert len(b1.requests) == 2 and len(b2.requests) == 2


@pytest.mark.time_limit(120)
def test_a_mistake_fails_the_build_with_its_position(tmp_path):
    """The build runs the same checks as `sluice check` and stops at the first problem list."""
    if not ZIG.exists():
        pytest.skip("no pinned zig in .zig/ (run tools/bootstrap.sh)")
    path = tmp_path / "bad.zon"
    path.write_text(".{\n    .wokers = 2,\n    .pools = .{ .app = .{ .backends = .{\"127.0.0.1:9\"} } },\n}\n")
    done = zig_build(f"-Dconfig={path}", "-p", str(tmp_path / "out"))
    assert done.returncode != 0
    assert f"{path}:2:5: unknown key \"wokers\"" in done.stderr, done.stderr
