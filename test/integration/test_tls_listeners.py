"""HTTPS listeners from config files and the command line: per-listener TLS beside plain
listeners, several certificates chosen by SNI, `min_version`, certificates reloaded on SIGHUP
(under a loop of new connections), `sluice check` of certificate files, and the README's
HTTPS file example with its redirect from the plain listener.

Certificates are src/tls/testdata/'s (ecdsa.pem: `ecdsa.test` and `*.wild.test`; rsa.pem:
`rsa.test`; both signed by ca.pem through an intermediate; expired.pem has expired), copied
beside the config file where a test needs to change them. Every test runs once per I/O
backend.
"""

import json
import re
import shutil
import signal
import ssl
import subprocess
import threading
import time

from client import Echoed, request
from conftest import REPO, assert_quiescent, free_port, write_zon
from test_admin import ADMIN_RE, scrape, value
from test_tls import TESTDATA, client_context, tls_client

RELOAD_WAIT = 10.0


def leaf_der(name):
    """The DER of the first certificate in testdata's NAME.pem (the one a server sends)."""
    text = (TESTDATA / f"{name}.pem").read_text()
    end = "-----END CERTIFICATE-----"
    return ssl.PEM_cert_to_DER_cert(text[:text.index(end) + len(end)])


def served(port, server_name=None, **kw):
    """The DER leaf certificate the listener sends for `server_name` (None: no SNI), and the
    negotiated version; the chain is verified against ca.pem, the host name is not."""
    ctx = client_context(check_hostname=False, **kw)
    c = tls_client(port, ctx, server_name=server_name)
    try:
        return c.sock.getpeercert(binary_form=True), c.sock.version()
    finally:
        c.close()


def copy_pair(tmp_path, name, as_name):
    shutil.copy(TESTDATA / f"{name}.pem", tmp_path / f"{as_name}.pem")
    shutil.copy(TESTDATA / f"{name}.key", tmp_path / f"{as_name}.key")


def tls_listener(name, port, *pairs, **extra):
    """A listener entry with `.tls` naming each (cert, key) pair."""
    certificates = [{"cert": cert, "key": key} for cert, key in pairs]
    return {"name": name, "listen": f"127.0.0.1:{port}",
            "tls": {"certificates": certificates, **extra}}


def test_a_file_mixes_plain_and_https_listeners_with_sni(sluice, backend, tmp_path):
    """One file: a plain listener and an HTTPS one with two certificates (relative paths,
    found beside the file). SNI picks the certificate by its names (exact and wildcard); no
    SNI and an unknown name get the first; the plain listener stays plain."""
    copy_pair(tmp_path, "ecdsa", "site")
    copy_pair(tmp_path, "rsa", "other")
    plain, https = free_port(), free_port()
    cfg = {"listeners": [{"name": "plain", "listen": f"127.0.0.1:{plain}"},
                         tls_listener("https", https, ("site.pem", "site.key"),
                                      ("other.pem", "other.key"))],
           "pools": {"app": {"backends": [backend.address]}}}
    sluice.start_config(write_zon(tmp_path / "sluice.zon", cfg))
    sluice.listen_ports(2)
    assert request(plain, "GET", "/plain").status == 200
    assert served(https, "rsa.test")[0] == leaf_der("rsa")
    assert served(https, "RSA.TEST")[0] == leaf_der("rsa")
    assert served(https, "ecdsa.test")[0] == leaf_der("ecdsa")
    assert served(https, "a.wild.test")[0] == leaf_der("ecdsa")
    assert served(https, "unknown.test")[0] == leaf_der("ecdsa")
    assert served(https, None)[0] == leaf_der("ecdsa")
    c = tls_client(https, server_name="rsa.test")
    try:
        assert c.sock.selected_alpn_protocol() == "http/1.1"
        e = Echoed(c.request("GET", "/over-tls"))
        assert e.header("X-Forwarded-Proto") == "https"
    finally:
        c.close()


def test_readme_https_file_example_redirects_and_serves(sluice, backend, tmp_path):
    """The README's HTTPS file example, served with this test's ports, backend and
    certificates: the plain listener answers 301 to https:// and the host the client asked
    for (its port dropped) with the path and query; the HTTPS listener reaches the pool."""
    readme = (REPO / "README.md").read_text()
    section = readme.split("## HTTPS", 1)[1]
    block = section.split("```zon\n", 1)[1].split("```", 1)[0]
    assert '.redirect = .{ .scheme = "https", .status = 301 }' in block, block
    plain, https = free_port(), free_port()
    text = (block.replace("0.0.0.0:80\"", f"127.0.0.1:{plain}\"")
            .replace("0.0.0.0:443\"", f"127.0.0.1:{https}\"")
            .replace("10.0.0.7:8000", backend.address))
    for name in re.findall(r'"([\w.]+\.(?:pem|key))"', block):
        shutil.copy(TESTDATA / ("ecdsa" + name[name.rindex("."):]), tmp_path / name)
    config = tmp_path / "https.zon"
    config.write_text(text)
    sluice.start_config(config)
    sluice.listen_ports(2)
    r = request(plain, "GET", "/shop?page=2", host="www.example.com:80")
    assert (r.status, r.header("Location")) == (301, "https://www.example.com/shop?page=2"), r
    assert backend.requests == []
    c = tls_client(https, server_name="ecdsa.test")
    try:
        e = Echoed(c.request("GET", "/shop?page=2"))
        assert (e.target, e.header("X-Forwarded-Proto")) == ("/shop?page=2", "https")
    finally:
        c.close()


def test_a_json_file_with_min_version_1_3_refuses_tls_1_2(sluice, backend, tmp_path):
    """The same `.tls` in JSON; `min_version: "1.3"` refuses a TLS 1.2 client and serves 1.3."""
    port = free_port()
    cfg = {"listeners": [tls_listener("https", port, (str(TESTDATA / "ecdsa.pem"),
                                                      str(TESTDATA / "ecdsa.key")),
                                      min_version="1.3")],
           "pools": {"app": {"backends": [backend.address]}}}
    path = tmp_path / "sluice.json"
    path.write_text(json.dumps(cfg))
    sluice.start_config(path)
    assert served(port, "ecdsa.test")[1] == "TLSv1.3"
    try:
        served(port, "ecdsa.test", maximum_version=ssl.TLSVersion.TLSv1_2)
    except (ssl.SSLError, ConnectionError):
        pass
    else:
        raise AssertionError("a TLS 1.2 client was served by a min_version 1.3 listener")


def test_repeated_cli_pairs_are_chosen_by_sni(sluice, backend):
    """`--tls-cert A --tls-key A --tls-cert B --tls-key B`: two certificates on the --listen
    listener, the first the default."""
    sluice.start([backend], args=["--tls-cert", str(TESTDATA / "ecdsa.pem"),
                                  "--tls-key", str(TESTDATA / "ecdsa.key"),
                                  "--tls-cert", str(TESTDATA / "rsa.pem"),
                                  "--tls-key", str(TESTDATA / "rsa.key")])
    assert served(sluice.port, "rsa.test")[0] == leaf_der("rsa")
    assert served(sluice.port, "ecdsa.test")[0] == leaf_der("ecdsa")
    assert served(sluice.port, None)[0] == leaf_der("ecdsa")


def test_a_key_without_its_certificate_is_a_usage_error(sluice_bin):
    out = subprocess.run([sluice_bin, "--backend", "127.0.0.1:9", "--tls-key",
                          str(TESTDATA / "ecdsa.key")], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2, out
    assert "has no --tls-cert before it" in out.stderr, out.stderr


def test_a_file_mistake_in_tls_names_its_line_and_column(sluice_bin, tmp_path):
    """A certificate without `.key`, `h2` in `.alpn` (HTTP/2 is the listener's `.http2`), and
    an ALPN protocol sluice does not serve, are refused by `sluice check` with
    FILE:LINE:COLUMN."""
    path = tmp_path / "bad.zon"
    path.write_text('.{\n    .listeners = .{ .{ .listen = "127.0.0.1:0", .tls = .{\n'
                    '        .certificates = .{ .{ .cert = "a.pem" } },\n'
                    '        .alpn = .{ "h2" },\n    } },\n'
                    '    .{ .listen = "127.0.0.1:0", .tls = .{ .certificates = .{ .{ .cert = "a.pem", .key = "a.key" } },\n'
                    '        .alpn = .{ "spdy/3" } } } },\n'
                    '    .pools = .{ .app = .{ .backends = .{ "127.0.0.1:9" } } },\n}\n')
    out = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                         timeout=10)
    assert out.returncode == 1, out
    assert f"{path}:3:28: a certificate needs .cert" in out.stderr, out.stderr
    assert f"{path}:4:20: h2 is offered by the listener's .http2" in out.stderr, out.stderr
    assert f"{path}:7:20: unknown ALPN protocol \"spdy/3\"" in out.stderr, out.stderr


def check_file(sluice_bin, tmp_path, cert, key):
    path = tmp_path / "check.zon"
    write_zon(path, {"listeners": [tls_listener("https", 8443, (cert, key))],
                     "pools": {"app": {"backends": ["127.0.0.1:9"]}}})
    out = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                         timeout=10)
    return out.returncode, out.stdout + out.stderr


def test_check_validates_certificates_and_names_each_file(sluice_bin, tmp_path):
    """`sluice check`: a good pair passes with its days left; an expired certificate, a key of
    another certificate, a chain out of order and a missing file each fail, naming the file."""
    good = check_file(sluice_bin, tmp_path, str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    assert good[0] == 0, good
    assert "ecdsa.pem:" in good[1] and "days left" in good[1], good
    expired = check_file(sluice_bin, tmp_path, str(TESTDATA / "expired.pem"),
                         str(TESTDATA / "expired.key"))
    assert expired[0] == 1 and "expired.pem" in expired[1] and "expired" in expired[1], expired
    mismatched = check_file(sluice_bin, tmp_path, str(TESTDATA / "rsa.pem"),
                            str(TESTDATA / "ecdsa.key"))
    assert mismatched[0] == 1 and "ecdsa.key" in mismatched[1], mismatched
    assert "does not match" in mismatched[1], mismatched
    order = check_file(sluice_bin, tmp_path, str(TESTDATA / "wrong-order.pem"),
                       str(TESTDATA / "ecdsa.key"))
    assert order[0] == 1 and "wrong-order.pem" in order[1], order
    missing = check_file(sluice_bin, tmp_path, str(tmp_path / "none.pem"),
                         str(TESTDATA / "ecdsa.key"))
    assert missing[0] == 1 and "none.pem" in missing[1], missing


def reload_and_wait(sluice, generation):
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    return sluice.wait_for_line(rf"(?=.*\breloaded\b)(?=.*\bgeneration {generation}\b)",
                                RELOAD_WAIT, start=mark)


def test_check_warns_of_a_certificate_close_to_expiry(sluice_bin, tmp_path):
    """A certificate made now for 5 days (openssl, at test time) passes `check` with a
    warning that names the file and the days left."""
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command is needed (Debian's openssl package)"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(tmp_path / "soon.key"),
                    "-out", str(tmp_path / "soon.pem"), "-days", "5", "-subj", "/CN=soon.test",
                    "-addext", "subjectAltName=DNS:soon.test"], check=True, capture_output=True,
                   timeout=30)
    code, out = check_file(sluice_bin, tmp_path, "soon.pem", "soon.key")
    assert code == 0, out
    assert "warning: " in out and "soon.pem" in out and "expires in" in out, out


def test_sighup_swaps_a_certificate_under_a_loop_of_new_connections(sluice, backend, tmp_path):
    """A client loop opens a new HTTPS connection per request throughout; the certificate
    files are replaced and SIGHUP sent: not one request fails, a connection opened before the
    reload carries on, and new handshakes get the new certificate. Then a reload with a key
    that does not match is refused naming the file, and the new certificate keeps serving."""
    copy_pair(tmp_path, "ecdsa", "site")
    port = free_port()
    cfg = {"listeners": [tls_listener("https", port, ("site.pem", "site.key"))],
           "pools": {"app": {"backends": [backend.address]}}}
    sluice.start_config(write_zon(tmp_path / "sluice.zon", cfg), workers=2)
    assert served(port, None)[0] == leaf_der("ecdsa")
    before = tls_client(port, client_context(check_hostname=False), server_name=None)
    stop = threading.Event()
    results = {"ok": 0, "failed": []}

    def loop():
        ctx = client_context(check_hostname=False)
        deadline = time.monotonic() + 30
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                c = tls_client(port, ctx, server_name=None)
                try:
                    assert c.request("GET", "/loop").status == 200
                finally:
                    c.close()
                results["ok"] += 1
            except Exception as err:  # noqa: BLE001 - every failure is the finding
                results["failed"].append(repr(err))

    worker = threading.Thread(target=loop, daemon=True)
    worker.start()
    try:
        time.sleep(0.3)
        copy_pair(tmp_path, "rsa", "site")
        reload_and_wait(sluice, 2)
        time.sleep(0.3)
        assert Echoed(before.request("GET", "/before")).target == "/before"
        assert served(port, None)[0] == leaf_der("rsa")
        shutil.copy(TESTDATA / "ecdsa.key", tmp_path / "site.key")  # rsa.pem, ecdsa's key
        mark = sluice.mark()
        sluice.signal(signal.SIGHUP)
        line = sluice.wait_for_line("reload failed", RELOAD_WAIT, start=mark)
        assert line is not None
        assert any("site.key" in ln and "does not match" in ln for ln in sluice.lines[mark:]), \
            sluice.lines[mark:]
        time.sleep(0.3)
        assert served(port, None)[0] == leaf_der("rsa")
    finally:
        stop.set()
        worker.join(10)
        before.close()
    assert results["failed"] == [], results["failed"][:5]
    assert results["ok"] > 20, results
    # Building the new contexts allocates on the control thread (as a reload's arenas do);
    # the data plane did not allocate through all those handshakes and requests.
    assert sluice.stats()["heap_allocations_after_startup"] == 0


def refused_reload(sluice, path, cfg, listener, says):
    """Write `cfg` with `listener` as its one listener, SIGHUP, and expect `reload failed`
    with a line containing `says`."""
    cfg["listeners"] = [listener]
    write_zon(path, cfg)
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    sluice.wait_for_line("reload failed", RELOAD_WAIT, start=mark)
    assert any(says in ln for ln in sluice.lines[mark:]), sluice.lines[mark:]


def test_reload_refuses_a_missing_certificate_file(sluice, backend, tmp_path):
    """A reload naming a certificate file that is not there is refused with the file's name,
    and the old certificate keeps serving."""
    port = free_port()
    key = str(TESTDATA / "ecdsa.key")
    cfg = {"listeners": [tls_listener("https", port, (str(TESTDATA / "ecdsa.pem"), key))],
           "pools": {"app": {"backends": [backend.address]}}}
    path = write_zon(tmp_path / "sluice.zon", cfg)
    sluice.start_config(path)
    refused_reload(sluice, path, cfg,
                   tls_listener("https", port, (str(tmp_path / "gone.pem"), key)), "gone.pem")
    assert served(port, None)[0] == leaf_der("ecdsa")


def test_a_reload_adds_the_first_https_listener(sluice, backend, tmp_path):
    """Started with no HTTPS listener (two workers), a reload adds one beside the plain one:
    it serves HTTPS at once, full handshakes and resumed ones (the ticket keys made by that
    reload), with no heap allocation on the request path; the plain listener keeps serving,
    and a second reload that adds another HTTPS listener works as ever."""
    plain, https, more = free_port(), free_port(), free_port()
    cfg = {"listeners": [{"name": "plain", "listen": f"127.0.0.1:{plain}"}],
           "pools": {"app": {"backends": [backend.address]}}}
    path = write_zon(tmp_path / "sluice.zon", cfg)
    sluice.start_config(path, workers=2)
    assert request(plain, "GET", "/before").status == 200
    pair = (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    cfg["listeners"].append(tls_listener("https", https, pair))
    write_zon(path, cfg)
    reload_and_wait(sluice, 2)
    assert served(https, None)[0] == leaf_der("ecdsa")
    ctx = client_context(maximum_version=ssl.TLSVersion.TLSv1_2)  # reusable tickets
    assert_resumes(https, ctx, ticket_session(https, ctx), 6)
    assert request(plain, "GET", "/plain").status == 200
    cfg["listeners"].append(tls_listener("more", more, (str(TESTDATA / "rsa.pem"), str(TESTDATA / "rsa.key"))))
    write_zon(path, cfg)
    reload_and_wait(sluice, 3)
    assert served(more, None)[0] == leaf_der("rsa")
    assert served(https, None)[0] == leaf_der("ecdsa")
    st = assert_quiescent(sluice)  # No heap allocation on the request path, either.
    assert st["config_generation"] == 3, st


def test_tickets_resume_on_any_worker_and_across_a_reload(sluice, backend, tmp_path):
    """Four workers share the ticket keys, and a reload keeps them: tickets issued before
    the reload resume after it, on whichever worker the kernel hands the connection to."""
    port = free_port()
    pair = (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    cfg = {"listeners": [tls_listener("https", port, pair)],
           "pools": {"app": {"backends": [backend.address]}}}
    path = write_zon(tmp_path / "sluice.zon", cfg)
    sluice.start_config(path, workers=4)
    ctx = client_context(maximum_version=ssl.TLSVersion.TLSv1_2)  # reusable tickets
    session = ticket_session(port, ctx)
    reload_and_wait(sluice, 2)
    assert_resumes(port, ctx, session, 12)


def ticket_session(port, ctx):
    """The session (with its ticket) of one served request on a new connection."""
    first = tls_client(port, ctx)
    try:
        assert Echoed(first.request("GET", "/first")).target == "/first"
        return first.sock.session
    finally:
        first.close()


def assert_resumes(port, ctx, session, count):
    """`count` new connections resume `session` and are served."""
    for i in range(count):
        c = tls_client(port, ctx, session=session)
        try:
            assert c.sock.session_reused, i
            assert Echoed(c.request("GET", f"/again/{i}")).target == f"/again/{i}"
        finally:
            c.close()


def test_an_open_tls_connection_outlives_many_reloads(sluice, backend, tmp_path):
    """A keep-alive TLS connection opened at generation 1 serves requests after ten
    reloads (more than the generations a worker may hold at once): its context is kept
    aside for it, and the reloads are not refused."""
    port = free_port()
    pair = (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    cfg = {"listeners": [tls_listener("https", port, pair)],
           "pools": {"app": {"backends": [backend.address]}},
           "timeouts": {"client_idle": "60s"}}
    path = write_zon(tmp_path / "sluice.zon", cfg)
    sluice.start_config(path, workers=2)
    c = tls_client(port, client_context(check_hostname=False), server_name=None)
    try:
        for generation in range(2, 12):
            assert Echoed(c.request("GET", f"/g/{generation}")).target == f"/g/{generation}"
            # Workers let go of old generations on a timer: a reload right after another may
            # be told to try again shortly, which is what an operator would do.
            for _ in range(20):
                mark = sluice.mark()
                sluice.signal(signal.SIGHUP)
                _, m = sluice.wait_for_line_index(
                    rf"reload failed: still|\breloaded\b.*\bgeneration {generation}\b",
                    RELOAD_WAIT, start=mark)
                if "reloaded" in m.string:
                    break
                time.sleep(0.25)
            else:
                raise AssertionError(f"generation {generation} was never applied")
        assert Echoed(c.request("GET", "/last")).target == "/last"
        assert served(port, None)[0] == leaf_der("ecdsa")
    finally:
        c.close()


def test_an_ocsp_file_is_stapled_for_its_certificate(sluice, backend, tmp_path):
    """`.ocsp` beside a certificate: a client asking for the status (openssl s_client
    -status) gets the response stapled."""
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command is needed (Debian's openssl package)"
    port = free_port()
    listener = tls_listener("https", port, (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key")))
    listener["tls"]["certificates"][0]["ocsp"] = str(TESTDATA / "ecdsa.ocsp.der")
    cfg = {"listeners": [listener], "pools": {"app": {"backends": [backend.address]}}}
    sluice.start_config(write_zon(tmp_path / "sluice.zon", cfg))
    done = subprocess.run([openssl, "s_client", "-connect", f"127.0.0.1:{port}", "-servername",
                           "ecdsa.test", "-status"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=10)
    assert "OCSP Response Status: successful" in done.stdout, done.stdout


def test_renegotiation_is_refused_with_a_no_renegotiation_alert(sluice, backend):
    """A TLS 1.2 client asking to renegotiate (openssl s_client's `R`) is answered at once
    with a fatal no_renegotiation alert (AWS-LC never renegotiates as a server), and sluice
    goes on serving others."""
    openssl = shutil.which("openssl")
    assert openssl, "the openssl command is needed (Debian's openssl package)"
    sluice.start([backend], args=["--tls-cert", str(TESTDATA / "ecdsa.pem"),
                                  "--tls-key", str(TESTDATA / "ecdsa.key")])
    client = subprocess.Popen([openssl, "s_client", "-connect", f"127.0.0.1:{sluice.port}",
                               "-tls1_2", "-servername", "ecdsa.test"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        client.stdin.write("R\n")
        client.stdin.flush()
        out, err = client.communicate(timeout=5)  # s_client exits on the alert
    finally:
        if client.poll() is None:
            client.kill()
            client.communicate()
    assert "RENEGOTIATING" in out + err, (out, err)
    assert "no renegotiation" in err, err
    assert served(sluice.port, "ecdsa.test")[0] == leaf_der("ecdsa")


def test_reloads_with_https_listeners_leave_the_allocation_counter_at_zero(sluice, backend,
                                                                            tmp_path):
    """Issue 19: `sluice_heap_allocations_after_startup` grew by one per reload with an HTTPS
    listener (OpenSSL allocated while `SSL_CTX_free` flushed the old generation's session
    cache, on the control thread, after the reload). It counts the request path's allocations
    only: after five reloads and the old generations freed, with HTTPS traffic between them,
    it is 0 in /metrics, on the stats line and at exit."""
    port, admin = free_port(), free_port()
    cfg = {"listeners": [tls_listener("https", port, (str(TESTDATA / "ecdsa.pem"),
                                                       str(TESTDATA / "ecdsa.key")))],
           "admin": {"listen": f"127.0.0.1:{admin}"},
           "pools": {"app": {"backends": [backend.address]}}}
    path = write_zon(tmp_path / "sluice.zon", cfg)
    sluice.start_config(path)
    sluice.wait_for_line(ADMIN_RE, timeout=5.0)
    for i in range(5):
        c = tls_client(port, server_name="ecdsa.test")
        try:
            assert Echoed(c.request("GET", f"/r{i}")).target == f"/r{i}"
        finally:
            c.close()
        mark = sluice.mark()
        sluice.signal(signal.SIGHUP)
        sluice.wait_for_line(re.compile(rf"reloaded .*: generation {i + 2} "), RELOAD_WAIT,
                             start=mark)
    time.sleep(1.0)  # The reaper frees the old generations within a few 100 ms ticks.
    assert value(scrape(admin), "sluice_heap_allocations_after_startup") == 0
    assert sluice.stats()["heap_allocations_after_startup"] == 0
    assert sluice.stop() == 0
    assert sluice.exit_allocations() == 0


def client_certificate_listener(tmp_path, backend, verify, access_log=None):
    """A config with one HTTPS listener that asks for client certificates signed by ca.pem
    and forwards them in X-Client-Subject and X-Client-Sha256."""
    port = free_port()
    pair = (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    cfg = {"listeners": [tls_listener("https", port, pair, client_ca=str(TESTDATA / "ca.pem"),
                                      client_verify=verify,
                                      client_subject_header="X-Client-Subject",
                                      client_fingerprint_header="X-Client-Sha256")],
           "pools": {"app": {"backends": [backend.address]}}}
    if access_log:
        cfg["access_log"] = {"target": str(access_log), "format": "json"}
    return port, write_zon(tmp_path / "sluice.zon", cfg)


def client_certificate_context():
    ctx = client_context()
    ctx.load_cert_chain(TESTDATA / "client.pem", TESTDATA / "client.key")
    return ctx


CLIENT_SHA256 = "a844b1a213a3d1d378d71946799c3cfb8b646a937dcf059a98de16bcfa0b7f07"


def test_a_required_client_certificate_is_verified_forwarded_and_logged(sluice, backend, tmp_path):
    """`client_verify = "required"`: a client with a certificate signed by the CA reaches the
    backend with its subject and SHA-256 fingerprint in the fields the operator named (a
    forged field of either name from the client never does), and the access log has both; a
    client without one gets the certificate_required alert and a warning line names it."""
    log_path = tmp_path / "access.log"
    port, path = client_certificate_listener(tmp_path, backend, "required", access_log=log_path)
    sluice.start_config(path)
    c = tls_client(port, client_certificate_context())
    try:
        e = Echoed(c.request("GET", "/who", headers=[("X-Client-Subject", "CN=admin"),
                                                     ("x-client-sha256", "00")]))
        assert e.header("X-Client-Subject") == "CN=sluice test client", e.headers
        assert e.header("X-Client-Sha256") == CLIENT_SHA256, e.headers
        assert [n for n, _ in e.headers if n.lower() == "x-client-subject"] == ["X-Client-Subject"]
    finally:
        c.close()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not log_path.exists() or not log_path.read_text():
        time.sleep(0.05)
    line = json.loads(log_path.read_text().splitlines()[0])
    assert (line["tls_client_subject"], line["tls_client_fingerprint"]) == (
        "CN=sluice test client", CLIENT_SHA256), line
    # Without a certificate: the handshake fails with the alert (TLS 1.3: the client hears it
    # on its first read), nothing reaches the backend.
    before = len(backend.requests)
    try:
        anonymous = tls_client(port)
        anonymous.request("GET", "/anonymous")
    except (ssl.SSLError, ConnectionError) as err:
        assert "CERTIFICATE_REQUIRED" in str(err).upper() or isinstance(err, ConnectionError), err
    else:
        raise AssertionError("a client without a certificate was served")
    line = sluice.wait_for_line(r"TLS client 127\.0\.0\.1 refused: its certificate", timeout=5)
    assert "peer did not return a certificate" in line.string, line.string
    assert len(backend.requests) == before


def test_an_optional_client_certificate_serves_clients_without_one(sluice, backend, tmp_path):
    """`client_verify = "optional"`: a client without a certificate is served, and the
    certificate fields it sent itself are dropped; one with a certificate is forwarded."""
    port, path = client_certificate_listener(tmp_path, backend, "optional")
    sluice.start_config(path)
    c = tls_client(port)
    try:
        e = Echoed(c.request("GET", "/anonymous", headers=[("X-Client-Subject", "CN=admin")]))
        assert e.header("X-Client-Subject") is None, e.headers
        assert e.header("X-Client-Sha256") is None, e.headers
    finally:
        c.close()
    c = tls_client(port, client_certificate_context())
    try:
        e = Echoed(c.request("GET", "/known"))
        assert e.header("X-Client-Sha256") == CLIENT_SHA256, e.headers
    finally:
        c.close()


def test_a_client_certificate_from_another_ca_is_refused_with_an_alert(sluice, backend, tmp_path):
    """A certificate that does not chain to the listener's CA fails the handshake (the
    client gets the alert) whatever `client_verify` says, and is named in the warning."""
    port, path = client_certificate_listener(tmp_path, backend, "optional")
    sluice.start_config(path)
    ctx = client_context()
    ctx.load_cert_chain(TESTDATA / "untrusted.pem", TESTDATA / "untrusted.key")
    try:
        c = tls_client(port, ctx)
        c.request("GET", "/stranger")
    except (ssl.SSLError, ConnectionError):
        pass
    else:
        raise AssertionError("a certificate from another CA was accepted")
    line = sluice.wait_for_line(r"TLS client 127\.0\.0\.1 refused: its certificate", timeout=5)
    assert "certificate verify failed" in line.string, line.string


def test_check_validates_a_listeners_client_ca_file(sluice_bin, tmp_path):
    """`sluice check` reads each listener's client CA file: its CAs are counted, a file that
    is not PEM certificates is an error naming it."""
    pair = (str(TESTDATA / "ecdsa.pem"), str(TESTDATA / "ecdsa.key"))
    good = write_zon(tmp_path / "good.zon", {
        "listeners": [tls_listener("https", 8443, pair, client_ca=str(TESTDATA / "ca.pem"))],
        "pools": {"app": {"backends": ["127.0.0.1:9000"]}}})
    done = subprocess.run([str(sluice_bin), "check", str(good)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert "ca.pem: 1 CA certificates for clients" in done.stdout + done.stderr
    (tmp_path / "bad-ca.pem").write_text("not a certificate\n")
    bad = write_zon(tmp_path / "bad.zon", {
        "listeners": [tls_listener("https", 8443, pair, client_ca="bad-ca.pem")],
        "pools": {"app": {"backends": ["127.0.0.1:9000"]}}})
    done = subprocess.run([str(sluice_bin), "check", str(bad)], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode != 0
    assert "bad-ca.pem: no certificate in it" in done.stdout + done.stderr, done.stdout + done.stderr
