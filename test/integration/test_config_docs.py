"""docs/CONFIG.md stays true: every ZON and JSON example passes `sluice check`, except the
one shown as a mistake, whose `sluice check` output is exactly the console block after it;
and a checked file really runs (`--config`), with flags overriding it."""

import re
import shutil
import subprocess

from client import request
from conftest import REPO

DOC = (REPO / "docs" / "CONFIG.md").read_text()
BLOCK_RE = re.compile(r"```(zon|json|console)\n(.*?)```", re.S)


def blocks():
    return [(m.group(1), m.group(2)) for m in BLOCK_RE.finditer(DOC)]


def check(sluice_bin, path):
    done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                          timeout=10)
    return done.returncode, done.stdout, done.stderr


def test_every_config_example_checks(sluice_bin, tmp_path):
    """Each example is valid, except the one followed by a `$ sluice check` console block,
    which prints exactly the lines shown and exits 1."""
    found = blocks()
    examples = [(i, kind, text) for i, (kind, text) in enumerate(found) if kind != "console"]
    assert len(examples) >= 6, examples
    from test_readme import write_tls_files
    write_tls_files([text for kind, text in found if kind != "console"], tmp_path)
    # The full example declares a handler, found beside the file.
    (tmp_path / "app.js").write_text('export default function app(request) { return Response.text("ok"); }\n')
    for i, kind, text in examples:
        follower = found[i + 1] if i + 1 < len(found) else None
        shown_as_mistake = follower is not None and follower[0] == "console"
        name = "broken" if shown_as_mistake else f"example{i}"
        path = tmp_path / f"{name}.{kind}"
        path.write_text(text)
        code, out, err = check(sluice_bin, path)
        if not shown_as_mistake:
            assert code == 0, (text, err)
            assert out == f"{path}: ok\n"
            continue
        lines = follower[1].splitlines()
        assert lines[0].startswith("$ sluice check "), lines[0]
        expected = [ln.replace(f"{name}.{kind}", str(path), 1) for ln in lines[1:]]
        assert code == 1, (code, err)
        assert err.splitlines() == expected, err


def test_config_file_runs_and_flags_override(sluice, make_backend, tmp_path):
    """`sluice --config FILE` serves with the file's pool; a flag given with it wins over the
    file (here the listen address, as the fixture passes --listen and --io)."""
    b1 = make_backend()
    b2 = make_backend()
    path = tmp_path / "run.zon"
    path.write_text(
        ".{ .listen = \"127.0.0.1:1\", .pools = .{ .app = .{ .backends = .{ "
        f"\"127.0.0.1:{b1.port}\", \"127.0.0.1:{b2.port}\" }} }} }} }}\n")
    assert check(sluice.binary, path)[0] == 0
    sluice.start([], args=["--config", str(path)])
    for i in range(4):
        r = request(sluice.port, "GET", f"/c/{i}")
        assert r.status == 200, r
    assert len(b1.requests) == 2 and len(b2.requests) == 2, "the file's pool, round robin"


def test_invalid_config_file_does_not_start(sluice_bin, tmp_path):
    """A file with a mistake: sluice does not start, prints the position, exits 2."""
    path = tmp_path / "bad.json"
    path.write_text('{"pools": {"app": {"backends": ["127.0.0.1:9"], "strategy": 7}}}')
    done = subprocess.run([sluice_bin, "--config", str(path)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 2, done
    assert done.stderr.startswith(f"{path}:1:"), done.stderr


def test_mistakes_across_settings_are_positioned_in_one_run(sluice_bin, tmp_path):
    """A duration without a unit, a health path without its `/`, a hash without its name and
    a pool without backends are each reported at their own line and column, in the same run
    as an ordinary mistake (they used to be found only once everything else was right, at
    1:1, and a bare "90" used to pass as 90 ms). `sluice --config` refuses the same file with
    the same lines and exit 2."""
    path = tmp_path / "cross.json"
    path.write_text(
        '{"workers": "two",\n'
        ' "pools": {"app": {"backends": ["127.0.0.1:9"], "strategy": "hash",\n'
        '                   "hash": {"on": "header"},\n'
        '                   "health": {"path": "healthz", "interval": "90"}},\n'
        '           "empty": {"backends": []}},\n'
        ' "routes": [{"pool": "app"}]}\n')
    code, out, err = check(sluice_bin, path)
    assert code == 1, (code, out, err)
    assert err.splitlines() == [
        f"{path}:1:13: expected a whole number from 1 to 256",
        f"{path}:3:28: hash on a header or a cookie needs its .name",
        f"{path}:4:39: a health path starts with /, such as \"/healthz\"",
        f"{path}:4:62: a duration needs its unit: \"90ms\", \"90s\" or \"90m\"",
        f"{path}:5:34: no backends: a pool needs at least one",
    ], err
    done = subprocess.run([sluice_bin, "--config", str(path), "--listen", "127.0.0.1:0"],
                          capture_output=True, text=True, timeout=10)
    assert done.returncode == 2, done
    assert done.stderr == err, done.stderr


def full_example():
    """The ZON block under "Everything, with the defaults"."""
    section = DOC.split("## Everything, with the defaults", 1)[1]
    return re.search(r"```zon\n(.*?)```", section, re.S).group(1)


def test_full_example_gives_every_setting_its_default(sluice_bin):
    """Every setting with a key (`sluice settings`) is in CONFIG.md's full example: with its
    default, as a file writes it, on a line of its own; or, when it is off by default, at least
    mentioned (commented out, with an example). A commented-out key must be a setting too, so
    the example cannot show a key sluice does not have."""
    from settings_table import key_pattern, read, zon_keys
    found = zon_keys(full_example())
    table = [s for s in read(sluice_bin) if s.key != "-"]
    for setting in table:
        pattern = key_pattern(setting.key)
        values = [v for path, vs in found.items() if pattern.match(path) for v in vs]
        assert values, f"{setting.key} is not in docs/CONFIG.md's full example"
        if setting.file_default != "-":
            assert (setting.file_default, False) in values, (setting.key, setting.file_default, values)
    patterns = [key_pattern(s.key) for s in table]
    for path, values in found.items():
        parent = re.sub(r"(\.[^.\[\]]+|\[\])$", "", path)
        inside_commented = any(commented for _, commented in found.get(parent, []))
        if any(commented for _, commented in values) and not inside_commented:
            assert any(p.match(path) for p in patterns), f"{path} is commented out but no setting"


def test_restart_only_settings_are_the_tables(sluice_bin):
    """The Reload section names exactly the settings the table marks `restart`."""
    from settings_table import read
    section = DOC.split("- Settings that need a restart:", 1)[1].split("A reload that changes one", 1)[0]
    named = set(re.findall(r"`([a-zA-Z0-9_.]+|--[a-z0-9-]+)`", section)) - {"restart"}
    # A setting that is only a flag is named by its flag.
    restart = {s.key if s.key != "-" else s.flag_name for s in read(sluice_bin) if s.reload == "restart"}
    assert named == restart, (named - restart, restart - named)
