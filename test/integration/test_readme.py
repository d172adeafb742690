"""The README's examples stay true: every console example is run and its output compared,
every config example passes `sluice check`, and every flag in the README's table is one
that `sluice --help` documents."""

import re
import shutil
import subprocess
import urllib.parse

from client import request
from conftest import REPO, STAMP_RE, unstamped

README = (REPO / "README.md").read_text()


def console_blocks():
    """Each ```console block as a list of (command, expected output lines)."""
    blocks = []
    for body in re.findall(r"```console\n(.*?)```", README, re.S):
        steps = []
        for line in body.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
        blocks.append(steps)
    return blocks


def test_readme_usage_error_example_is_exact(sluice_bin):
    """`$ sluice ...` examples print exactly what the README shows and exit 2."""
    steps = [s for block in console_blocks() for s in block if s[0].startswith("sluice ")]
    assert steps, "the README has no `$ sluice` console example"
    for command, expected in steps:
        args = command.split()[1:]
        done = subprocess.run([sluice_bin, *args], capture_output=True, text=True, timeout=10)
        assert done.returncode == 2, (command, done.returncode, done.stderr)
        # The README shows one timestamp as an example; the line after it is exact.
        shown = [STAMP_RE.sub("", line, count=1) for line in expected]
        assert all(STAMP_RE.match(line) for line in expected), expected
        assert unstamped(done.stderr).splitlines() == shown, (command, done.stderr)
        assert all(STAMP_RE.match(line) for line in done.stderr.splitlines()), done.stderr


def test_readme_demo_session_is_what_the_demo_answers(sluice):
    """The README's curl session against `make run` (the demo) is reproduced against a
    real demo: same paths, same answers in the same order."""
    steps = [s for block in console_blocks() for s in block if s[0].startswith("curl ")]
    assert steps, "the README has no curl example"
    sluice.start(demo=True)
    for command, expected in steps:
        url = urllib.parse.urlsplit(command.split()[1])
        assert (url.hostname, url.port) == ("127.0.0.1", 8080), command
        r = request(sluice.port, "GET", url.path or "/")
        assert r.status == 200, r
        assert r.body.decode().splitlines() == expected, (command, r.body)


def test_readme_flags_are_the_help_flags(sluice_bin):
    """The README's flag tables and `sluice --help` document the same flags: none missing
    from either side."""
    table_flags = set(re.findall(r"^\| `(--[a-z0-9-]+)", README, re.M))
    assert len(table_flags) >= 30, table_flags
    done = subprocess.run([sluice_bin, "--help"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0
    help_flags = set(re.findall(r"(--[a-z0-9-]+)", done.stdout)) - {"--help", "--version"}
    assert table_flags == help_flags, (table_flags - help_flags, help_flags - table_flags)


def help_descriptions(help_text):
    """`sluice --help` as {flag: its description, continuation lines joined}."""
    found, flag = {}, None
    for line in help_text.splitlines():
        m = re.match(r"^  (--[a-z0-9-]+)(.*)$", line)
        if m:
            flag = m.group(1)
            found[flag] = m.group(2).strip()
        elif flag and line.startswith("    "):
            found[flag] += " " + line.strip()
        else:
            flag = None
    return found


def test_help_promises_no_status_the_readme_does_not(sluice_bin):
    """Every error status `--help` says a flag leads to is in that flag's README row too; and
    the upstream body timeout, which fires after the status line was relayed, is described as
    closing the client connection, not as a 504 (as --help once said)."""
    done = subprocess.run([sluice_bin, "--help"], capture_output=True, text=True, timeout=10)
    described = help_descriptions(done.stdout)
    rows = {m.group(1): m.group(0)
            for m in re.finditer(r"^\| `(--[a-z0-9-]+)[^|]*\|.*$", README, re.M)}
    status = re.compile(r"\b[45]\d\d\b")
    for flag, text in described.items():
        if flag in ("--help", "--version"):
            continue
        missing = set(status.findall(text)) - set(status.findall(rows[flag]))
        assert not missing, (flag, text, rows[flag])
    body = described["--upstream-body-timeout"]
    assert "504" not in body and "connection is closed" in body, body
    assert "504" not in rows["--upstream-body-timeout"], rows["--upstream-body-timeout"]
    assert "connection is closed" in rows["--upstream-body-timeout"]


def readme_handlers():
    """Each ```js block that opens with `// NAME.js`, as {NAME.js: source}."""
    return {m.group(1): m.group(0)[len("```js\n"):-3]
            for m in re.finditer(r"```js\n// (\w+\.js)\n.*?```", README, re.S)}


def write_tls_files(blocks, directory):
    """The certificate, key and CA files the examples name (check reads them), made here: the
    test pair (src/tls/testdata/ecdsa.*) under every `.pem` and `.key` name a listener's
    `.tls` gives; for a pool's `.tls`, a CA, and a client certificate and key it signed."""
    testdata = REPO / "src" / "tls" / "testdata"
    for name in set(re.findall(r'"([\w.-]+\.(?:pem|key))"', "".join(blocks))):
        shutil.copy(testdata / ("ecdsa" + name[name.rindex("."):]), directory / name)
    from test_backend_tls import make_pki
    pki = make_pki(directory / "pki")
    sources = {"ca": pki["ca"], "client_cert": pki["client"][0], "client_key": pki["client"][1]}
    for body in blocks:
        code = "\n".join(line.split("//", 1)[0] for line in body.splitlines())
        for key, name in re.findall(r"\.(ca|client_cert|client_key) = \"([^\"]+)\"", code):
            (directory / name).write_bytes(open(sources[key], "rb").read())


def test_readme_config_examples_pass_check(sluice_bin, tmp_path):
    """Every ```zon block in the README is a valid config: `sluice check` says ok (with the
    README's handlers beside it, which check compiles, and the test certificate and key
    under each certificate and key name the examples give, which check reads)."""
    blocks = re.findall(r"```zon\n(.*?)```", README, re.S)
    assert blocks, "the README has no zon example"
    for name, source in readme_handlers().items():
        (tmp_path / name).write_text(source)
    write_tls_files(blocks, tmp_path)
    for i, body in enumerate(blocks):
        path = tmp_path / f"readme{i}.zon"
        path.write_text(body)
        done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                              timeout=10)
        assert done.returncode == 0, (body, done.stdout, done.stderr)
        assert done.stdout.strip() == f"{path}: ok"


def test_readme_flag_defaults_are_the_settings_table(sluice_bin):
    """Every flag of the settings table (`sluice settings`, the table --help and the parsers
    read) has a row in the README's flag tables whose default is the table's: the same text,
    or the same text followed by a note in parentheses. A backend's options are in the
    `--backend` row, each with its default."""
    from settings_table import read, readme_flag_rows
    rows = readme_flag_rows(README)
    checked = 0
    for setting in read(sluice_bin):
        if setting.backend_option:
            meaning = rows["--backend"][1]
            pattern = rf"`{re.escape(setting.backend_option)}` \([^)]*default {re.escape(setting.default)}\b"
            assert re.search(pattern, meaning), (setting, meaning)
            checked += 1
            continue
        flag = setting.flag_name
        if flag is None:
            continue
        assert flag in rows, f"{flag} has no row in the README's flag tables"
        shown = rows[flag][0].replace("`", "")
        assert shown == setting.default or shown.startswith(setting.default + " ("), \
            (flag, shown, setting.default)
        checked += 1
    assert checked >= 50, checked
