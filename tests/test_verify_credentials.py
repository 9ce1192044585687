"""``obsgen verify`` with credentials: bearer token and basic auth from files or the environment,
extra headers, a CA bundle, client certificates, TLS options; no secret ever printed.

Reproduced: ``user:pass@`` in ``--prometheus-url`` printed the password in the header line and
in error messages. Real servers on 127.0.0.1, with a throwaway CA made here by the ``openssl``
CLI: the real Prometheus 3 serving HTTPS only to a client certificate of that CA and to basic
auth (``--web.config.file``), scraping itself the same way; in front of it a gateway that wants
a bearer token and a tenant header (as Mimir's), and echoes a refused ``Authorization`` back.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from generator.cli import main
from tests.prometheus_process import PrometheusProcess

pytestmark = pytest.mark.e2e

PASSWORD = "obsgen-test-password"
# bcrypt (cost 4) of PASSWORD, for Prometheus' basic_auth_users
PASSWORD_BCRYPT = "$2b$04$hSNMJNwMAdrbiys5EpeseuVnJn1sd4Y70eev7GmJZ70pUCODZYXn."
TOKEN = "obsgen-test-token.Zm9vYmFy-4f2d"
SERVER_NAME = "prometheus.obsgen.test"
"""The only name in the Prometheus server's certificate (no IP address)."""
TENANT = "tenant-a"


# --- a throwaway PKI ----------------------------------------------------------------------------


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def _ca(pki: Path, name: str) -> None:
    _openssl(
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2",
        "-subj", f"/CN=obsgen {name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=pki,
    )  # fmt: skip


def _leaf(pki: Path, name: str, ca: str, extensions: str) -> None:
    _openssl(
        "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}",
        cwd=pki,
    )  # fmt: skip
    (pki / f"{name}.ext").write_text(
        f"{extensions}\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid,issuer\n"
    )
    _openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext",
        cwd=pki,
    )  # fmt: skip


@pytest.fixture(scope="module")
def pki() -> Iterator[Path]:
    """ca (trusted by the server), server (SERVER_NAME only), client (signed by ca), rogue-ca
    and rogue (a client certificate the server does not trust), client-enc.key (encrypted)."""
    folder = Path(tempfile.mkdtemp(prefix="obsgen-pki-"))
    try:
        _ca(folder, "ca")
        _ca(folder, "rogue-ca")
        _leaf(
            folder, "server", "ca", f"subjectAltName=DNS:{SERVER_NAME}\nextendedKeyUsage=serverAuth"
        )
        _leaf(folder, "client", "ca", "extendedKeyUsage=clientAuth")
        _leaf(folder, "rogue", "rogue-ca", "extendedKeyUsage=clientAuth")
        _openssl(
            "pkey", "-in", "client.key", "-aes256", "-passout", "pass:x", "-out", "client-enc.key",
            cwd=folder,
        )  # fmt: skip
        (folder / "password").write_text(PASSWORD + "\n")
        (folder / "wrong-password").write_text("not-the-password\n")
        (folder / "token").write_text(TOKEN + "\n")
        (folder / "wrong-token").write_text("wrong-token-9f8e7d\n")
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- the servers --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def prometheus(pki: Path) -> Iterator[str]:
    """Base URL of a Prometheus 3 on HTTPS that wants a client certificate of ``ca`` and basic
    auth (admin / PASSWORD), and has scraped itself that way as job ``svc``."""
    workdir = Path(tempfile.mkdtemp(prefix="obsgen-verify-tls-"))

    def config(port: int) -> dict[str, Any]:
        return {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {
                    "job_name": "svc",
                    "scheme": "https",
                    "static_configs": [
                        {"targets": [f"127.0.0.1:{port}"], "labels": {"namespace": "ns"}}
                    ],
                    "basic_auth": {"username": "admin", "password": PASSWORD},
                    "tls_config": {
                        "ca_file": str(pki / "ca.crt"),
                        "cert_file": str(pki / "client.crt"),
                        "key_file": str(pki / "client.key"),
                        "server_name": SERVER_NAME,
                    },
                }
            ],
        }

    web = {
        "tls_server_config": {
            "cert_file": str(pki / "server.crt"),
            "key_file": str(pki / "server.key"),
            "client_auth_type": "RequireAndVerifyClientCert",
            "client_ca_file": str(pki / "ca.crt"),
        },
        "basic_auth_users": {"admin": PASSWORD_BCRYPT},
    }
    server = PrometheusProcess(workdir, config, web).start()
    try:
        _wait_for_self_scrape(server, pki)
        yield server.url
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _client_context(pki: Path) -> ssl.SSLContext:
    """The test's own TLS client of the Prometheus: trusts ``ca``, shows ``client``, and does not
    match the name (the certificate names SERVER_NAME, the address is 127.0.0.1)."""
    context = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    context.check_hostname = False
    context.load_cert_chain(str(pki / "client.crt"), str(pki / "client.key"))
    return context


def _basic() -> str:
    return "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()


def _get(url: str, path: str, pki: Path) -> tuple[int, bytes, str]:
    host, port = url.removeprefix("https://").split(":")
    conn = http.client.HTTPSConnection(host, int(port), context=_client_context(pki), timeout=10)
    try:
        conn.request("GET", path, headers={"Authorization": _basic()})
        response = conn.getresponse()
        return response.status, response.read(), response.getheader("Content-Type") or ""
    finally:
        conn.close()


def _wait_for_self_scrape(server: PrometheusProcess, pki: Path) -> None:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ValueError):
            _, body, _ = _get(server.url, "/api/v1/query?query=up%7Bjob%3D%22svc%22%7D", pki)
            result = json.loads(body)["data"]["result"]
            if result and result[0]["value"][1] == "1":
                return
        time.sleep(0.2)
    raise AssertionError(f"Prometheus never scraped itself:\n{server.log()[-3000:]}")


@dataclass
class _Gateway:
    """What the gateway saw: the ``Authorization`` of every request, per path."""

    url: str
    seen: list[tuple[str, str | None]]


class _GatewayServer(ThreadingHTTPServer):
    daemon_threads = True
    upstream: str
    pki: Path
    seen: list[tuple[str, str | None]]
    redirect_to: str


class _GatewayHandler(BaseHTTPRequestHandler):
    """Wants ``Authorization: Bearer TOKEN`` (else 401, echoing what it got, as a careless proxy
    does) and ``X-Scope-OrgID: TENANT`` (else 403); forwards to the Prometheus with its client
    certificate and basic auth. Under ``/basic/`` it wants basic auth (admin, PASSWORD)
    instead; ``/redirect/…`` redirects to another host name."""

    server: _GatewayServer

    def do_GET(self) -> None:
        got = self.headers.get("Authorization")
        self.server.seen.append((self.path, got))
        if self.path.startswith("/redirect/"):
            self._send(302, b"", {"Location": self.server.redirect_to + self.path[9:]})
        elif self.path.startswith("/basic/"):
            if got != _basic():
                self._send(401, b"Unauthorized\n", {"WWW-Authenticate": 'Basic realm="x"'})
            else:
                status, body, content_type = _get(
                    self.server.upstream, self.path[6:], self.server.pki
                )
                self._send(status, body, {"Content-Type": content_type})
        elif got != f"Bearer {TOKEN}":
            self._send(401, f"Unauthorized: got {got!r}\n".encode())
        elif self.headers.get("X-Scope-OrgID") != TENANT:
            self._send(403, b"no org id\n")
        else:
            status, body, content_type = _get(self.server.upstream, self.path, self.server.pki)
            self._send(status, body, {"Content-Type": content_type})

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def gateway(prometheus: str, pki: Path) -> Iterator[_Gateway]:
    """A plain-HTTP gateway on 127.0.0.1 in front of the Prometheus, and a second server (the
    redirect's target, on ``localhost``) answering 401 and recording what it received."""
    seen: list[tuple[str, str | None]] = []
    other = _GatewayServer(("127.0.0.1", 0), _GatewayHandler)
    other.upstream, other.pki, other.seen, other.redirect_to = prometheus, pki, seen, ""
    httpd = _GatewayServer(("127.0.0.1", 0), _GatewayHandler)
    httpd.upstream, httpd.pki, httpd.seen = prometheus, pki, seen
    httpd.redirect_to = f"http://localhost:{other.server_address[1]}/other"
    for server in (httpd, other):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield _Gateway(f"http://127.0.0.1:{httpd.server_address[1]}", seen)
    finally:
        for server in (httpd, other):
            server.shutdown()
            server.server_close()


# --- running verify -----------------------------------------------------------------------------


@pytest.fixture
def spec(tmp_path: Path) -> str:
    """A spec whose selector matches the Prometheus' own target (job svc, namespace ns)."""
    data = {
        "apiVersion": "obsgen/v1alpha1",
        "kind": "ModelService",
        "metadata": {"name": "svc", "team": "t"},
        "spec": {
            "server": "vllm",
            "selector": {"namespace": "ns", "job": "svc"},
            "deployment": {"name": "svc", "container": "server", "memoryLimit": "32Gi"},
        },
    }
    path = tmp_path / "svc.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(path)


SECRETS = (PASSWORD, TOKEN, base64.b64encode(f"admin:{PASSWORD}".encode()).decode())


def _verify(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    spec: str,
    *args: str,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``obsgen verify spec args…``; asserts no secret printed."""
    for name in list(os.environ):
        if name.startswith(("PROMETHEUS_", "ALERTMANAGER_")):
            monkeypatch.delenv(name)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    code = main(["verify", spec, "--timeout", "10", *args])
    out, err = capsys.readouterr()
    for secret in SECRETS:
        assert secret not in out + err, f"a secret was printed:\n{out}{err}"
    assert "Traceback" not in err
    return code, out, err


def _tls(pki: Path, *, name: bool = True, ca: bool = True, cert: str = "client") -> list[str]:
    args = ["--cert-file", str(pki / f"{cert}.crt"), "--key-file", str(pki / f"{cert}.key")]
    if ca:
        args += ["--ca-file", str(pki / "ca.crt")]
    if name:
        args += ["--tls-server-name", SERVER_NAME]
    return args


def _header(out: str) -> str:
    """The header line after ``Prometheus <version> ``: ``at <url>…`` (the pinned build does
    not know its own version)."""
    first = out.splitlines()[0]
    assert first.startswith("Prometheus "), out
    return first[first.index(" at ") + 1 :]


def _target_row(out: str) -> str:
    (row,) = [line for line in out.splitlines() if line.split()[:2] == ["svc", "target"]]
    return row


# --- Prometheus 3 over mutual TLS with basic auth -----------------------------------------------


def test_mutual_tls_and_basic_auth_from_a_file_read_the_server(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", prometheus, *_tls(pki),
        "--basic-auth-user", "admin", "--basic-auth-password-file", str(pki / "password"),
    )  # fmt: skip
    assert code == 1, out + err  # the bundle is not installed: checks fail, the API answered
    assert _header(out) == f"at {prometheus}"
    assert "1/1 targets up" in _target_row(out)


def test_every_setting_can_come_from_the_environment(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    env = {
        "PROMETHEUS_URL": prometheus,
        "PROMETHEUS_USERNAME": "admin",
        "PROMETHEUS_PASSWORD": PASSWORD,
        "PROMETHEUS_CA_FILE": str(pki / "ca.crt"),
        "PROMETHEUS_CERT_FILE": str(pki / "client.crt"),
        "PROMETHEUS_KEY_FILE": str(pki / "client.key"),
        "PROMETHEUS_TLS_SERVER_NAME": SERVER_NAME,
    }
    code, out, err = _verify(capsys, monkeypatch, spec, env=env)
    assert code == 1, out + err
    assert "1/1 targets up" in _target_row(out)


def test_a_password_in_the_url_is_used_and_never_printed(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    with_password = prometheus.replace("https://", f"https://admin:{PASSWORD}@")
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", with_password, *_tls(pki)
    )
    assert code == 1, out + err
    assert _header(out) == f"at {prometheus}"  # it was printed here


def test_a_wrong_password_in_the_url_is_a_401_without_the_password(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    wrong = "s3cret%2Fwith%40odd"
    url = prometheus.replace("https://", f"https://admin:{wrong}@")
    code, out, err = _verify(capsys, monkeypatch, spec, "--prometheus-url", url, *_tls(pki))
    assert code == 2, out + err
    assert "HTTP 401 Unauthorized" in err
    assert "it refused the credentials sent (basic auth as 'admin'" in err
    for shown in (wrong, "s3cret/with@odd", "s3cret"):
        assert shown not in out + err  # in the error messages, it was


@pytest.mark.parametrize(
    ("auth", "expected"),
    [
        pytest.param(
            ["--basic-auth-user", "admin", "--basic-auth-password-file", "wrong-password"],
            "it refused the credentials sent (basic auth as 'admin' (password from "
            "--basic-auth-password-file ",
            id="a wrong password from a file",
        ),
        pytest.param(
            ["--basic-auth-user", "nobody", "--basic-auth-password-file", "password"],
            "it refused the credentials sent (basic auth as 'nobody'",
            id="an unknown user",
        ),
        pytest.param(
            [],
            "it wants credentials and none were sent: --bearer-token-file (or env "
            "PROMETHEUS_BEARER_TOKEN), or --basic-auth-user with --basic-auth-password-file",
            id="no credentials",
        ),
    ],
)
def test_refused_credentials_are_a_clear_401(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch, auth: list[str], expected: str
) -> None:
    auth = [str(pki / a) if a.endswith("password") else a for a in auth]
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", prometheus, *_tls(pki), *auth
    )
    assert code == 2, out + err
    assert f"{prometheus}/api/v1/status/buildinfo answered HTTP 401 Unauthorized" in err
    assert expected in err
    assert out == ""


@pytest.mark.parametrize(
    ("tls", "expected"),
    [
        pytest.param(
            {"cert": "none"},
            "over TLS: the server ended the handshake (tlsv13 alert certificate required): it "
            "wants a client certificate, --cert-file and --key-file",
            id="no client certificate",
        ),
        pytest.param(
            {"cert": "rogue"},
            "over TLS: the server ended the handshake (",
            id="a client certificate of another CA",
        ),
        pytest.param(
            {"ca": False},
            "over TLS: the server's certificate was not accepted: unable to get local issuer "
            "certificate; --ca-file with the CA that signed it",
            id="no CA bundle",
        ),
        pytest.param(
            {"name": False},
            "over TLS: the server's certificate was not accepted: IP address mismatch, "
            "certificate is not valid for '127.0.0.1'.; --tls-server-name with a name the "
            "certificate holds",
            id="the name in the certificate differs",
        ),
    ],
)
def test_tls_failures_say_what_to_pass(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch, tls: dict[str, Any], expected: str
) -> None:
    tls = dict(tls)
    cert = tls.pop("cert", "client")
    args = _tls(pki, cert=cert, **tls) if cert != "none" else _tls(pki, **tls)[4:]
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", prometheus, *args,
        "--basic-auth-user", "admin", "--basic-auth-password-file", str(pki / "password"),
    )  # fmt: skip
    assert code == 2, out + err
    assert f"{prometheus}: cannot connect to Prometheus at {prometheus} {expected}" in err
    if cert == "rogue":  # an alert or an end of file, as the handshake's timing has it
        refused = f"it refused the client certificate {pki / 'rogue.crt'}; is it signed by a CA"
        assert refused in err


def test_insecure_skip_verify_works_and_warns_loudly(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", prometheus, *_tls(pki, ca=False, name=False),
        "--insecure-skip-verify",
        "--basic-auth-user", "admin", "--basic-auth-password-file", str(pki / "password"),
    )  # fmt: skip
    assert code == 1, out + err
    assert (
        f"--insecure-skip-verify: warning: the certificate of {prometheus} is NOT verified: "
        "anyone on the network path can read the credentials and forge every answer"
    ) in err
    assert _header(out) == (f"at {prometheus} (certificate NOT verified: --insecure-skip-verify)")
    assert "InsecureRequestWarning" not in err


def test_plain_http_to_a_tls_server_is_a_clear_error(
    prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    url = prometheus.replace("https://", "http://")
    code, out, err = _verify(capsys, monkeypatch, spec, "--prometheus-url", url)
    assert code == 2, out + err
    assert "answered HTTP 400 without Prometheus API JSON" in err


# --- a gateway wanting a bearer token and a tenant header ---------------------------------------


def test_a_bearer_token_from_a_file_and_a_tenant_header_read_the_server(
    gateway: _Gateway, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "token"), "--header", f"X-Scope-OrgID: {TENANT}",
    )  # fmt: skip
    assert code == 1, out + err
    assert _header(out) == f"at {gateway.url}"
    assert "1/1 targets up" in _target_row(out)


def test_a_bearer_token_from_the_environment(
    gateway: _Gateway, spec: str, capsys, monkeypatch
) -> None:
    env = {"PROMETHEUS_BEARER_TOKEN": TOKEN}
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--header", f"X-Scope-OrgID:{TENANT}", env=env,
    )  # fmt: skip
    assert code == 1, out + err
    assert "1/1 targets up" in _target_row(out)


def test_a_refused_token_echoed_back_by_the_server_is_redacted(
    gateway: _Gateway, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    (pki / "echoed-token").write_text("wrong-but-secret-token-77\n")
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "echoed-token"),
    )  # fmt: skip
    assert code == 2, out + err
    assert "HTTP 401 Unauthorized (Unauthorized: got 'Bearer <redacted>')" in err
    assert "wrong-but-secret-token-77" not in err
    assert f"bearer token from --bearer-token-file {pki / 'echoed-token'}" in err


def test_a_missing_tenant_header_is_a_clear_403(
    gateway: _Gateway, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "token"),
    )  # fmt: skip
    assert code == 2, out + err
    assert "answered HTTP 403 Forbidden (no org id)" in err
    assert "--header 'X-Scope-OrgID: …' for Mimir" in err


def test_credentials_never_follow_a_redirect_to_another_host(
    gateway: _Gateway, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    gateway.seen.clear()
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", f"{gateway.url}/redirect",
        "--bearer-token-file", str(pki / "token"), "--header", f"X-Scope-OrgID: {TENANT}",
    )  # fmt: skip
    assert code == 2, out + err
    assert gateway.seen == [
        ("/redirect/api/v1/status/buildinfo", f"Bearer {TOKEN}"),
        ("/other/api/v1/status/buildinfo", None),  # localhost: no token sent
    ]


def test_prometheus_credentials_are_never_sent_to_the_alertmanager(
    gateway: _Gateway, prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    gateway.seen.clear()
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "token"), "--header", f"X-Scope-OrgID: {TENANT}",
        "--alertmanager-url", gateway.url,
    )  # fmt: skip
    assert code == 2, out + err
    assert ("/api/v2/status", None) in gateway.seen
    assert (
        "answered HTTP 401 Unauthorized (Unauthorized: got None): it wants credentials and "
        "none were sent: --alertmanager-bearer-token-file (or env ALERTMANAGER_BEARER_TOKEN)"
    ) in err


def test_the_alertmanager_takes_its_own_credentials(
    gateway: _Gateway, prometheus: str, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    gateway.seen.clear()
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "token"), "--header", f"X-Scope-OrgID: {TENANT}",
        "--alertmanager-url", gateway.url,
        "--alertmanager-bearer-token-file", str(pki / "token"),
        "--alertmanager-header", f"X-Scope-OrgID: {TENANT}",
    )  # fmt: skip
    # the gateway forwards to the Prometheus, which has no /api/v2/status: past the credentials
    assert ("/api/v2/status", f"Bearer {TOKEN}") in gateway.seen
    assert code == 2, out + err
    assert "/api/v2/status answered HTTP 404" in err


def test_a_password_in_a_plain_url_is_used_and_never_printed(
    gateway: _Gateway, spec: str, capsys, monkeypatch
) -> None:
    url = gateway.url.replace("http://", f"http://admin:{PASSWORD}@") + "/basic"
    code, out, err = _verify(capsys, monkeypatch, spec, "--prometheus-url", url)
    assert code == 1, out + err
    assert _header(out) == f"at {gateway.url}/basic"  # the password was printed here
    assert "1/1 targets up" in _target_row(out)


def test_a_wrong_password_in_a_plain_url_is_never_printed(
    gateway: _Gateway, spec: str, capsys, monkeypatch
) -> None:
    url = gateway.url.replace("http://", "http://admin:wrong-Pa55word@") + "/basic"
    code, out, err = _verify(capsys, monkeypatch, spec, "--prometheus-url", url)
    assert code == 2, out + err
    assert f"{gateway.url}/basic/api/v1/status/buildinfo answered HTTP 401 Unauthorized" in err
    assert "wrong-Pa55word" not in out + err  # the error messages printed it


def test_a_password_in_the_alertmanager_url_is_used_and_never_printed(
    gateway: _Gateway, pki: Path, spec: str, capsys, monkeypatch
) -> None:
    gateway.seen.clear()
    url = gateway.url.replace("http://", f"http://admin:{PASSWORD}@") + "/basic"
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", gateway.url,
        "--bearer-token-file", str(pki / "token"), "--header", f"X-Scope-OrgID: {TENANT}",
        "--alertmanager-url", url,
    )  # fmt: skip
    assert ("/basic/api/v2/status", _basic()) in gateway.seen
    assert code == 2, out + err  # the Prometheus behind the gateway has no /api/v2/status
    assert f"{gateway.url}/basic/api/v2/status answered HTTP 404" in err


# --- bad options: exit 2 before any request, no secret in the message ---------------------------


def _write(folder: Path, name: str, data: bytes) -> str:
    path = folder / name
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize(
    ("make_args", "expected"),
    [
        pytest.param(
            lambda d, p: ["--bearer-token-file", str(d / "absent")],
            "absent: cannot read the bearer token (--bearer-token-file): No such file or "
            "directory",
            id="a token file that does not exist",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", _write(d, "t", b"\n \n")],
            "t: is empty; expected the bearer token (--bearer-token-file)",
            id="an empty token file",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", _write(d, "t", f"{TOKEN} and more".encode())],
            "the bearer token holds spaces, control or non-ASCII characters",
            id="a token with a space",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", _write(d, "t", f"{TOKEN}\r\nX: y".encode())],
            "the bearer token holds spaces, control or non-ASCII characters",
            id="a token with a line break (header injection)",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", _write(d, "t", b"\xff\xfe" + TOKEN.encode())],
            "t: is not UTF-8 text; expected the bearer token",
            id="a token file that is not text",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", _write(d, "t", b"x" * (70 << 10))],
            "t: is over 65536 bytes; expected the bearer token alone",
            id="a huge token file",
        ),
        pytest.param(
            lambda d, p: ["--bearer-token-file", str(p / "token"), "--basic-auth-user", "a",
                          "--basic-auth-password-file", str(p / "password")],
            "a bearer token and basic auth are both given",
            id="bearer token and basic auth",
        ),
        pytest.param(
            lambda d, p: ["--basic-auth-user", "admin"],
            "--basic-auth-user: a user name without a password: add --basic-auth-password-file",
            id="a user without a password",
        ),
        pytest.param(
            lambda d, p: ["--basic-auth-password-file", str(p / "password")],
            "a password without a user name: add --basic-auth-user",
            id="a password without a user",
        ),
        pytest.param(
            lambda d, p: ["--basic-auth-user", "a:b", "--basic-auth-password-file",
                          str(p / "password")],
            "the user name holds ':' or a control character",
            id="a user name with a colon",
        ),
        pytest.param(
            lambda d, p: ["--basic-auth-user", "a", "--basic-auth-password-file",
                          _write(d, "pw", f"{PASSWORD}\nsecond line".encode())],
            "the password holds control characters (a line break?)",
            id="a two-line password file",
        ),
        pytest.param(
            lambda d, p: ["--header", f"Authorization: Bearer {TOKEN}"],
            "--header: Authorization carries a secret, and the command line is visible to every "
            "process",
            id="a secret header on argv",
        ),
        pytest.param(
            lambda d, p: ["--header", f"cookie: session={TOKEN}"],
            "--header: cookie carries a secret",
            id="a cookie on argv",
        ),
        pytest.param(
            lambda d, p: ["--header", "X-Scope-OrgID"],
            "--header: 'X-Scope-OrgID' …: expected 'Name: value' with a header name",
            id="a header without a value",
        ),
        pytest.param(
            lambda d, p: ["--header", "X-A: 1\r\nX-Injected: 2"],
            "--header: the value of X-A holds control or non-ASCII characters",
            id="a header value with a line break",
        ),
        pytest.param(
            lambda d, p: ["--header", "X-A: 1", "--header", "x-a: 2"],
            "--header: x-a is given twice",
            id="a header given twice",
        ),
        pytest.param(
            lambda d, p: ["--header", "Host: elsewhere"],
            "--header: Host is set by the HTTP client itself",
            id="a header the client sets",
        ),
        pytest.param(
            lambda d, p: ["--ca-file", _write(d, "ca.pem", b"not a certificate\n")],
            "ca.pem: not usable PEM",
            id="a CA file that is not PEM",
        ),
        pytest.param(
            lambda d, p: ["--ca-file", str(p / "ca.crt"), "--insecure-skip-verify"],
            "--insecure-skip-verify turns off what --ca-file is for",
            id="a CA file and insecure-skip-verify",
        ),
        pytest.param(
            lambda d, p: ["--cert-file", str(p / "client.crt")],
            "--cert-file: --cert-file and --key-file go together",
            id="a certificate without its key",
        ),
        pytest.param(
            lambda d, p: ["--cert-file", str(p / "client.crt"), "--key-file",
                          str(p / "client-enc.key")],
            "the key is encrypted; decrypt it",
            id="an encrypted key (it would prompt on the terminal)",
        ),
        pytest.param(
            lambda d, p: ["--cert-file", str(p / "client.crt"), "--key-file",
                          str(p / "rogue.key")],
            "not usable PEM (key values mismatch)",
            id="a key of another certificate",
        ),
        pytest.param(
            lambda d, p: ["--tls-server-name", "bad name"],
            "--tls-server-name: expected a DNS name",
            id="a server name with a space",
        ),
        pytest.param(
            lambda d, p: ["--alertmanager-url", "https://127.0.0.1:9",
                          "--alertmanager-basic-auth-user", "u"],
            "--alertmanager-basic-auth-user: a user name without a password: add "
            "--alertmanager-basic-auth-password-file (or env ALERTMANAGER_PASSWORD)",
            id="the Alertmanager's options are its own",
        ),
    ],
)  # fmt: skip
def test_bad_credential_options_are_exit_2_and_name_the_option(
    pki: Path, spec: str, tmp_path: Path, capsys, monkeypatch, make_args: Any, expected: str
) -> None:
    args = make_args(tmp_path, pki)
    code, out, err = _verify(
        capsys, monkeypatch, spec, "--prometheus-url", "https://127.0.0.1:9", *args
    )
    assert code == 2, out + err
    assert expected in err
    assert "cannot connect" not in err  # refused before any request


@pytest.mark.parametrize(
    "url",
    [
        pytest.param(f"https://admin:{PASSWORD}/x@127.0.0.1:9", id="an unencoded slash"),
        pytest.param(f"https://admin:{PASSWORD}#x@127.0.0.1:9", id="an unencoded hash"),
        pytest.param(f"ftp://admin:{PASSWORD}@127.0.0.1:9", id="another scheme"),
        pytest.param(f"https://admin:1234/@127.0.0.1:9/{PASSWORD}", id="an @ after the host"),
    ],
)
def test_a_url_that_does_not_parse_is_never_quoted_back(
    url: str, spec: str, capsys, monkeypatch
) -> None:
    code, out, err = _verify(capsys, monkeypatch, spec, "--prometheus-url", url)
    assert code == 2, out + err
    assert err.startswith("--prometheus-url: ")
    assert "1234" not in err
