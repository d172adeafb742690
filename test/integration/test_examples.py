"""examples/ stays true: every config there passes `sluice check`, and really serves when it is
started with its addresses made local (listeners and the admin listener on 127.0.0.1 port 0,
each backend replaced by a test backend, the access log file by one in a temporary folder);
site.zon and site.json describe the same site, so they route the same requests the same way;
the systemd unit has what an operator expects of one (a user of its own, only the capability
to bind port 80, a reload through `sluice reload --pid-file`, a file limit, a restart policy)
and its config passes `sluice check`. `systemd-analyze verify` runs on the unit only where it
is installed."""

import re
import shutil
import socket
import ssl
import subprocess

import pytest

from client import request, wait_until
from conftest import REPO

EXAMPLES = REPO / "examples"
CONFIGS = ["site.zon", "site.json", "systemd/sluice.zon"]
# Where the unit's LoadCredential= puts the certificate and key; the tests put the test
# certificate there instead (src/tls/testdata, made for `ecdsa.test`).
CREDENTIALS = "/run/credentials/sluice.service/"
TESTDATA = REPO / "src" / "tls" / "testdata"
SITES = ["site.zon", "site.json"]
UNIT = EXAMPLES / "systemd" / "sluice.service"
ADDRESS_RE = re.compile(r'"(\d+\.\d+\.\d+\.\d+):(\d+)"')
ADMIN_RE = re.compile(r"^sluice: admin listening on 127\.0\.0\.1:(?P<port>\d+)$")


def check(sluice_bin, path):
    done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                          timeout=10)
    return done.returncode, done.stdout, done.stderr


def localized(name, make_backend, tmp_path):
    """The example's text with every address made local, and the backends that now stand in
    for the example's, by the address they replace."""
    text = (EXAMPLES / name).read_text()
    listen_keys = re.compile(r'(\.listen\s*=\s*|"listen"\s*:\s*)"[^"]*"')
    text = listen_keys.sub(lambda m: m.group(1) + '"127.0.0.1:0"', text)
    backends = {}

    def backend_for(m):
        address = m.group(0).strip('"')
        if address == "127.0.0.1:0":
            return m.group(0)
        if address not in backends:
            backends[address] = make_backend()
        return f'"{backends[address].address}"'

    text = ADDRESS_RE.sub(backend_for, text)
    text = text.replace("/var/log/sluice/access.log", str(tmp_path / "access.log"))
    return with_test_credentials(text), backends


def with_test_credentials(text):
    """The systemd config with the test certificate where the unit's credentials would be."""
    text = text.replace(CREDENTIALS + "site.pem", str(TESTDATA / "ecdsa.pem"))
    return text.replace(CREDENTIALS + "site.key", str(TESTDATA / "ecdsa.key"))


def which(backends, request_path):
    """The example addresses whose stand-in received a request for `request_path`."""
    return {address for address, b in backends.items()
            if any(r.target == request_path for r in b.requests)}


@pytest.mark.parametrize("name", CONFIGS)
def test_every_example_config_checks(sluice_bin, name, tmp_path):
    """Each config in examples/ passes `sluice check` as it is shipped (the systemd one with a
    test certificate in place of the credentials only systemd provides)."""
    path = EXAMPLES / name
    text = path.read_text()
    if CREDENTIALS in text:
        path = tmp_path / name.replace("/", "-")
        path.write_text(with_test_credentials(text))
    code, out, err = check(sluice_bin, path)
    assert code == 0, err
    assert out.endswith(f"{path}: ok\n"), out


@pytest.mark.parametrize("name", SITES)
def test_example_site_serves_its_routes(sluice, make_backend, tmp_path, name):
    """The example site, started with local addresses: /ping is answered by sluice itself,
    the API (by host or under /api/) goes to the api pool, the old name is redirected with
    its path and query, everything else goes to the web pool; the admin listener answers."""
    text, backends = localized(name, make_backend, tmp_path)
    path = tmp_path / name.replace("/", "-")
    path.write_text(text)
    assert check(sluice.binary, path)[0] == 0
    sluice.start_config(path)
    web = {"10.0.0.5:9000", "10.0.0.6:9000"}
    api = {"10.0.1.5:8000", "10.0.1.6:8000", "10.0.1.7:8000"}
    assert set(backends) == web | api, backends

    r = request(sluice.port, "GET", "/ping")
    assert (r.status, r.body, r.header("Cache-Control")) == (200, b"pong\n", "no-store"), r
    r = request(sluice.port, "GET", "/home")
    assert r.status == 200, r
    r = request(sluice.port, "GET", "/api/users/1")
    assert r.status == 200, r
    r = request(sluice.port, "GET", "/v2/orders", host="api.example.com")
    assert r.status == 200, r
    r = request(sluice.port, "GET", "/shop?page=2", host="www.example.org")
    assert r.status == 301, r
    assert r.header("Location") == "https://www.example.com/shop?page=2", r

    assert len(which(backends, "/home")) == 1 and which(backends, "/home") <= web
    assert len(which(backends, "/api/users/1")) == 1 and which(backends, "/api/users/1") <= api
    assert len(which(backends, "/v2/orders")) == 1 and which(backends, "/v2/orders") <= api
    assert not which(backends, "/ping") and not which(backends, "/shop?page=2")

    admin = sluice.wait_for_line(ADMIN_RE, 5.0)
    admin_port = int(admin.group("port"))
    r = request(admin_port, "GET", "/healthz", host=f"127.0.0.1:{admin_port}")
    assert r.status == 200, r


def test_systemd_example_config_serves(sluice, make_backend, tmp_path):
    """The systemd example's config, with local addresses and the test certificate as its
    credentials, proxies to its pool on both listeners (plain and HTTPS) and writes its access
    log to the file it names."""
    text, backends = localized("systemd/sluice.zon", make_backend, tmp_path)
    path = tmp_path / "sluice.zon"
    path.write_text(text)
    assert check(sluice.binary, path)[0] == 0
    sluice.start_config(path)
    r = request(sluice.port, "GET", "/orders")
    assert r.status == 200, r
    assert len(which(backends, "/orders")) == 1
    https_port = sluice.listen_ports(2)[1]
    context = ssl.create_default_context(cafile=str(TESTDATA / "ca.pem"))
    with socket.create_connection(("127.0.0.1", https_port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="ecdsa.test") as tls:
            tls.sendall(b"GET /secure HTTP/1.1\r\nHost: ecdsa.test\r\nConnection: close\r\n\r\n")
            assert tls.recv(64).startswith(b"HTTP/1.1 200 ")
    assert len(which(backends, "/secure")) == 1
    log = tmp_path / "access.log"
    assert wait_until(lambda: log.exists() and "/orders" in log.read_text(), 5.0,
                      what="the access log line")


def unit_directives():
    """(section, key, value) for every line of the unit, in order (keys may repeat)."""
    section, out = None, []
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        out.append((section, key.strip(), value.strip()))
    return out


def test_systemd_unit_has_what_an_operator_expects(sluice_bin):
    """A user of its own and no root, the one capability that binds port 80 (the config
    listens there), a reload through `sluice reload --pid-file` with the pid file sluice is
    told to write, the config checked before start and before reload, a file limit above two
    descriptors per connection, a restart policy and a stop timeout above the drain."""
    d = unit_directives()
    service = {}
    for section, key, value in d:
        if section == "Service":
            service.setdefault(key, []).append(value)

    def one(key):
        assert key in service, f"no {key}= in [Service]"
        return service[key][-1]

    assert one("DynamicUser") == "yes" or "User" in service
    # sluice tells systemd when it is ready, reloading and stopping (sd_notify).
    assert one("Type") == "notify"
    # The key is not readable by the dynamic user: systemd hands it over as a credential, in
    # the directory the config names.
    credentials = {v.split(":", 1)[0] for v in service["LoadCredential"]}
    assert credentials == {"site.pem", "site.key"}, credentials
    for name in credentials:
        assert CREDENTIALS + name in (EXAMPLES / "systemd" / "sluice.zon").read_text()
    config_text = (EXAMPLES / "systemd" / "sluice.zon").read_text()
    assert '.listen = "0.0.0.0:80"' in config_text
    assert "CAP_NET_BIND_SERVICE" in one("AmbientCapabilities").split()
    assert one("CapabilityBoundingSet").split() == ["CAP_NET_BIND_SERVICE"]
    assert one("NoNewPrivileges") == "yes"

    start = one("ExecStart").split()
    assert start[0].endswith("/sluice")
    assert start[start.index("--config") + 1] == "/etc/sluice/sluice.zon"
    pid_file = start[start.index("--pid-file") + 1]
    assert pid_file.startswith("/run/" + one("RuntimeDirectory") + "/"), pid_file
    reloads = [v.split() for v in service["ExecReload"]]
    assert reloads[-1][1:] == ["reload", "--pid-file", pid_file], reloads
    assert ["check", "/etc/sluice/sluice.zon"] in [r[1:] for r in reloads[:-1]], reloads
    assert one("ExecStartPre").split()[1:] == ["check", "/etc/sluice/sluice.zon"]

    max_connections = int(re.search(r"\.max_connections = (\d+)", config_text).group(1))
    assert int(one("LimitNOFILE")) >= 2 * max_connections
    assert one("Restart") in ("on-failure", "always")
    drain_s = int(re.search(r'\.drain = "(\d+)s"', config_text).group(1))
    assert int(one("TimeoutStopSec").rstrip("s")) > drain_s
    assert "/var/log/sluice/" in config_text and one("LogsDirectory") == "sluice"
    assert ("Install", "WantedBy", "multi-user.target") in d


def test_systemd_unit_documentation_is_what_its_header_installs():
    """Each `Documentation=` file is installed by the unit's header, from a file in the repo."""
    header = UNIT.read_text()
    docs = [v for section, key, value in unit_directives() if key == "Documentation"
            for v in value.split()]
    assert docs
    for url in docs:
        assert url.startswith("file://"), url
        target = url[len("file://"):]
        m = re.search(r"^#\s+install -D -m 0644 (\S+) " + re.escape(target) + "$", header, re.M)
        assert m, f"{target} is not installed by the unit's header"
        assert (REPO / m.group(1)).is_file(), m.group(1)


def test_systemd_unit_verifies(sluice_bin, tmp_path):
    """`systemd-analyze verify` accepts the unit, with the binary and config paths pointed at
    this build and the example config. Skipped where systemd-analyze is not installed."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    text = UNIT.read_text().replace("/usr/local/bin/sluice", sluice_bin)
    text = text.replace("/etc/sluice/sluice.zon", str(EXAMPLES / "systemd" / "sluice.zon"))
    unit = tmp_path / "sluice.service"
    unit.write_text(text)
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0 and "Failed to" in done.stderr and "bus" in done.stderr.lower():
        pytest.skip(f"systemd-analyze cannot run here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert not [ln for ln in done.stderr.splitlines() if "sluice.service" in ln], done.stderr
