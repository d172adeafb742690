"""examples/kubernetes/ stays true: the manifests have the parts an operator expects (a
ConfigMap with the config, a headless Service found by name as the pool, a Deployment whose
readiness is the admin listener's /healthz, whose grace period covers the drain, which
reloads when the ConfigMap changes and is scraped by Prometheus), the embedded config passes
`sluice check`, and it serves: started with local addresses and the Service's name answered by
a DNS server of the tests, requests reach the pod behind the name, /healthz answers, and the
reloader's request reloads it."""

import re
import subprocess
import urllib.request

import yaml  # PyYAML: .ci/run installs it.

from backends import echo
from client import Echoed, request
from conftest import REPO, free_port
from dnsserver import DnsServer

MANIFESTS = REPO / "examples" / "kubernetes" / "sluice.yaml"
ADMIN_RE = re.compile(r"^sluice: admin listening on 127\.0\.0\.1:(?P<port>\d+)$")


def documents():
    docs = [d for d in yaml.safe_load_all(MANIFESTS.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def embedded_config():
    return documents()[("ConfigMap", "sluice")]["data"]["sluice.zon"]


def duration_s(config, key):
    m = re.search(rf'\.{key}\s*=\s*"(\d+)s"', config)
    assert m, key
    return int(m.group(1))


def test_the_manifests_have_what_an_operator_expects():
    docs = documents()
    assert set(docs) == {("ConfigMap", "sluice"), ("Service", "app"), ("Deployment", "sluice"),
                         ("Service", "sluice")}
    config = embedded_config()

    # The pool is the headless Service, by its fully qualified name and port.
    app = docs[("Service", "app")]["spec"]
    assert app["clusterIP"] == "None"
    m = re.search(r'\.backends = \.\{"([a-z0-9.-]+)\.:(\d+)"\}', config)
    assert m, config
    name, port = m.group(1), int(m.group(2))
    assert name == "app.default.svc.cluster.local"
    assert port == app["ports"][0]["port"]

    pod = docs[("Deployment", "sluice")]["spec"]["template"]
    spec = pod["spec"]
    sluice, reloader = spec["containers"]
    ports = {p["name"]: p["containerPort"] for p in sluice["ports"]}
    assert f'.listen = "0.0.0.0:{ports["http"]}"' in config
    assert f'.admin = .{{ .listen = "0.0.0.0:{ports["admin"]}" }}' in config
    assert sluice["args"] == ["--config", "/etc/sluice/sluice.zon"]
    assert {m["mountPath"] for m in sluice["volumeMounts"]} == {"/etc/sluice"}
    assert spec["volumes"][0]["configMap"]["name"] == "sluice"

    # Readiness (and liveness) on the admin listener's /healthz, which turns 503 at the drain.
    for probe in ("readinessProbe", "livenessProbe"):
        assert sluice[probe]["httpGet"] == {"path": "/healthz", "port": "admin"}

    # The grace period covers the preStop pause and the whole drain.
    pause = sluice["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert spec["terminationGracePeriodSeconds"] > pause + duration_s(config, "drain")

    # Prometheus finds /metrics on the admin port.
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == ports["admin"]
    assert annotations["prometheus.io/path"] == "/metrics"

    # The reloader watches the mounted file and asks the admin listener to reload.
    script = reloader["command"][-1]
    assert "md5sum /etc/sluice/sluice.zon" in script
    assert f"http://127.0.0.1:{ports['admin']}/reload" in script
    assert "--post-data" in script and "--header 'Sluice-Reload: 1'" in script
    assert {m["mountPath"] for m in reloader["volumeMounts"]} == {"/etc/sluice"}


def test_the_embedded_config_checks(sluice_bin, tmp_path):
    path = tmp_path / "sluice.zon"
    path.write_text(embedded_config())
    done = subprocess.run([sluice_bin, "check", str(path)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{path}: ok\n"


def test_the_embedded_config_serves_and_reloads(sluice, make_backend, tmp_path):
    """Local addresses, the Service's name answered with a test backend's address by a DNS
    server of the tests; then the reloader's request (POST /reload) after the file changed."""
    pod = make_backend(echo(), name="pod")
    dns = DnsServer()
    try:
        dns.set("app.default.svc.cluster.local", a=["127.0.0.1"], ttl=5)
        admin_port = free_port()
        config = embedded_config()
        config = config.replace('"0.0.0.0:8080"', '"127.0.0.1:0"')
        config = config.replace('"0.0.0.0:9901"', f'"127.0.0.1:{admin_port}"')
        config = config.replace(".local.:8080", f".local.:{pod.port}")
        config = config.replace(".{ .target = \"stdout\", .format = .json }", f'.{{ .target = "{tmp_path / "access.log"}", .format = .json }}')
        path = tmp_path / "sluice.zon"
        path.write_text(config)
        sluice.start_config(path, args=("--resolver", dns.address))
        assert sluice.wait_for_line(ADMIN_RE, 5.0)
        assert Echoed(request(sluice.port, "GET", "/hello")).backend == "pod"
        assert request(admin_port, "GET", "/healthz", host=f"127.0.0.1:{admin_port}").status == 200

        path.write_text(config.replace('.tries = 2', '.tries = 3'))
        req = urllib.request.Request(f"http://127.0.0.1:{admin_port}/reload", data=b"", method="POST",
                                     headers={"Sluice-Reload": "1"})
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read().decode()
        assert r.status == 200 and "reloaded" in body, body
        assert request(sluice.port, "GET", "/again").status == 200
    finally:
        dns.stop()
