"""How ``obsgen verify`` reaches a server: credentials, extra headers and TLS, secrets redacted.

:func:`transport_options` adds the options of one server (Prometheus, or Alertmanager with an
``--alertmanager-`` prefix); :func:`load_transport` checks them and reads the secrets (files
or environment, never argv) into a :class:`Transport`, which gives the HTTP session, names what
it sends without its value, turns TLS failures into sentences and :meth:`Transport.redact` s
every secret out of any text. What each option means: docs/verify.md, "Credentials and TLS".
"""

from __future__ import annotations

import argparse
import base64
import ipaddress
import os
import re
import ssl
import urllib.parse
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.models import PreparedRequest

from generator.errors import Diagnostic, Level, ObsgenError, printable

MAX_SECRET_BYTES = 64 << 10
"""Largest token or password file read, in bytes."""
REDACTED = "<redacted>"
"""What stands where a secret was."""
_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_VALUE = re.compile(r"[\x20-\x7e\t]*")
_SERVER_NAME = re.compile(r"[A-Za-z0-9._:-]+")
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
"""Headers that carry secrets: refused on ``--header`` (argv is visible to every process)."""
SECRET_LOOKING = re.compile(
    r"auth|token|key|secret|pass|session|cookie|signature|credential|jwt", re.I
)
"""Names of ``--header`` s whose values are redacted like credentials (``X-Api-Key``,
``X-Auth-Token``): a proxy or gateway may echo them back in an error page."""
CLIENT_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
"""Headers the HTTP client sets itself: refused on ``--header``."""


@dataclass(frozen=True)
class Secret:
    """A secret value and where it came from (``--bearer-token-file /run/token``, ``env
    PROMETHEUS_PASSWORD``); its ``repr`` never shows the value."""

    value: str = field(repr=False)
    source: str


@dataclass(frozen=True)
class Transport:
    """Credentials, extra headers and TLS settings of one server's requests.

    Attributes:
        server: what messages call the server (``Prometheus``, ``Alertmanager``).
        option_prefix: of its options' names (``""``, ``"alertmanager-"``).
        env_prefix: of its environment variables (``PROMETHEUS``, ``ALERTMANAGER``).
        bearer: the bearer token, or None.
        username: basic-auth user name (not secret), or None.
        password: basic-auth password (with ``username``), or None.
        headers: extra ``(name, value)`` headers, values not secret.
        ca_file: PEM bundle of CAs trusted for the server's certificate (else the system's).
        cert_file: client certificate (PEM), with ``key_file`` (unencrypted PEM key).
        server_name: name expected in the server's certificate (and sent as SNI).
        insecure: the server's certificate is not verified.
    """

    server: str = "Prometheus"
    option_prefix: str = ""
    env_prefix: str = "PROMETHEUS"
    bearer: Secret | None = None
    username: str | None = None
    password: Secret | None = None
    headers: tuple[tuple[str, str], ...] = ()
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None
    insecure: bool = False

    def with_basic_auth(self, user: str, password: str, source: str) -> Transport:
        """This transport authenticating as ``user`` (from a URL's ``user:password@``)."""
        return replace(
            self, username=user, password=Secret(password, f"the user:password in {source}")
        )

    # -- what it sends, said without the secrets ----------------------------------------------

    def secrets(self) -> list[str]:
        """Every text that must never be printed: token, password, ``user:password`` and its
        base64 (what the ``Authorization`` header carries), the values of extra headers whose
        names look like credentials (:data:`SECRET_LOOKING`), longest first."""
        found = [s.value for s in (self.bearer, self.password) if s is not None and s.value]
        found += [v for n, v in self.headers if v and SECRET_LOOKING.search(n)]
        if self.password is not None and self.password.value:
            pair = f"{self.username}:{self.password.value}"
            found += [pair, base64.b64encode(pair.encode()).decode("ascii")]
            found.append(urllib.parse.quote(self.password.value, safe=""))
        return sorted(set(found), key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every secret (:meth:`secrets`) replaced by :data:`REDACTED`."""
        for secret in self.secrets():
            text = text.replace(secret, REDACTED)
        return text

    def credentials(self) -> str:
        """What authenticates the requests, without a secret: ``bearer token from
        --bearer-token-file /run/token``, ``basic auth as 'admin' (password from env
        PROMETHEUS_PASSWORD)``, ``no credentials``; with the extra headers' names."""
        if self.bearer is not None:
            said = f"bearer token from {self.bearer.source}"
        elif self.password is not None:
            said = f"basic auth as {self.username!r} (password from {self.password.source})"
        else:
            said = "no credentials"
        if self.headers:
            said += f", headers {', '.join(name for name, _ in self.headers)}"
        return printable(said)

    def option(self, name: str) -> str:
        """The command-line option ``name`` of this server (``--alertmanager-ca-file``)."""
        return f"--{self.option_prefix}{name}"

    def env(self, name: str) -> str:
        """The environment variable ``name`` of this server (``ALERTMANAGER_PASSWORD``)."""
        return f"{self.env_prefix}_{name}"

    def refused(self, status: int) -> str:
        """What to do about a 401 or 403 answer."""
        if status == 403:
            return (
                f"the server knows the credentials ({self.credentials()}) but does not allow "
                "this request: check the user's permissions, and the tenant header "
                f"({self.option('header')} 'X-Scope-OrgID: …' for Mimir) if it needs one"
            )
        if self.bearer is None and self.password is None:
            return (
                "it wants credentials and none were sent: "
                f"{self.option('bearer-token-file')} (or env {self.env('BEARER_TOKEN')}), or "
                f"{self.option('basic-auth-user')} with {self.option('basic-auth-password-file')}"
                f" (or env {self.env('PASSWORD')})"
            )
        return f"it refused the credentials sent ({self.credentials()}): check them"

    # -- the HTTP session ---------------------------------------------------------------------

    def session(self) -> requests.Session:
        """A session that authenticates and verifies as configured. Credentials are applied
        per request (never re-applied after a redirect to another host, which requests strips
        them from), so ``~/.netrc`` cannot replace them."""
        session = requests.Session()
        if self.bearer is not None:
            session.auth = _HeaderAuth(f"Bearer {self.bearer.value}")
        elif self.password is not None:
            pair = f"{self.username}:{self.password.value}".encode()
            session.auth = _HeaderAuth(f"Basic {base64.b64encode(pair).decode('ascii')}")
        session.headers.update(dict(self.headers))
        if self.server_name is not None:
            session.mount("https://", _ServerNameAdapter(self.server_name))
        if self.insecure:
            warnings.filterwarnings("ignore", category=urllib3.exceptions.InsecureRequestWarning)
        return session

    @property
    def verify(self) -> bool | str:
        """``requests``' ``verify``: False (insecure), the CA bundle, or True (the system's)."""
        if self.insecure:
            return False
        return self.ca_file or True

    @property
    def cert(self) -> tuple[str, str] | None:
        """``requests``' ``cert``: (certificate, key) files, or None."""
        if self.cert_file is None or self.key_file is None:
            return None
        return (self.cert_file, self.key_file)

    def tls_failure(self, err: BaseException) -> str | None:
        """A sentence for the TLS failure inside ``err`` (a requests exception), or None when
        it is no TLS failure."""
        found = _ssl_error(err)
        if found is None:
            return None
        if isinstance(found, ssl.SSLCertVerificationError):
            why = printable(str(found.verify_message or found.reason or "not trusted"))
            fix = (
                f"{self.option('ca-file')} with the CA that signed it"
                if self.ca_file is None
                else f"is {self.ca_file} the CA that signed it?"
            )
            if "hostname" in why.lower() or "ip address mismatch" in why.lower():
                fix = f"{self.option('tls-server-name')} with a name the certificate holds"
            return f"the server's certificate was not accepted: {why}; {fix}"
        reason = str(found.reason or found).upper()
        shown = printable(str(found.reason or type(found).__name__).lower().replace("_", " "))
        ended = isinstance(found, ssl.SSLEOFError) or "EOF" in reason
        if "CERTIFICATE_REQUIRED" in reason or (
            self.cert_file is None and (ended or "HANDSHAKE_FAILURE" in reason)
        ):
            return (
                f"the server ended the handshake ({shown}): it wants a client certificate, "
                f"{self.option('cert-file')} and {self.option('key-file')}"
            )
        refusals = ("UNKNOWN_CA", "BAD_CERTIFICATE", "CERTIFICATE_UNKNOWN", "HANDSHAKE_FAILURE")
        if ended or any(word in reason for word in refusals):
            return (
                f"the server ended the handshake ({shown}): it refused the client certificate "
                f"{self.cert_file}; is it signed by a CA the server trusts?"
            )
        if "WRONG_VERSION_NUMBER" in reason or "RECORD_LAYER" in reason:
            return "the server does not speak TLS there: is the URL http://?"
        return f"TLS failed ({shown})"


class _HeaderAuth(requests.auth.AuthBase):
    """Sets ``Authorization`` on each request (its value never in a ``repr``)."""

    def __init__(self, value: str) -> None:
        self._value = value

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        request.headers["Authorization"] = self._value
        return request

    def __repr__(self) -> str:
        return "_HeaderAuth(<redacted>)"


class _ServerNameAdapter(HTTPAdapter):
    """HTTPS with a fixed name sent as SNI and matched against the server's certificate."""

    def __init__(self, server_name: str) -> None:
        self.server_name = server_name
        super().__init__()

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        pool_kwargs.update(server_hostname=self.server_name, assert_hostname=self.server_name)
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


def _ssl_error(err: BaseException | None, depth: int = 0) -> ssl.SSLError | None:
    """The ``ssl.SSLError`` inside ``err``: its cause, context, ``reason`` or arguments."""
    if err is None or depth > 8:
        return None
    if isinstance(err, ssl.SSLError):
        return err
    inner: list[Any] = [err.__cause__, err.__context__, getattr(err, "reason", None), *err.args]
    for candidate in inner:
        if isinstance(candidate, BaseException):
            found = _ssl_error(candidate, depth + 1)
            if found is not None:
                return found
    return None


# -- the options ---------------------------------------------------------------------------------


def transport_options(parser: argparse.ArgumentParser, server: str, prefix: str = "") -> None:
    """Add the credential, header and TLS options of ``server`` (``Prometheus``), each named
    with ``prefix`` (``alertmanager-``)."""
    env = (prefix.rstrip("-") or server).upper()
    group = parser.add_argument_group(f"{server} credentials and TLS")
    add = group.add_argument
    dest = prefix.replace("-", "_")
    add(
        f"--{prefix}bearer-token-file",
        dest=f"{dest}bearer_token_file",
        metavar="FILE",
        help=f"file holding the bearer token (env {env}_BEARER_TOKEN_FILE; or the token in "
        f"env {env}_BEARER_TOKEN)",
    )
    add(
        f"--{prefix}basic-auth-user",
        dest=f"{dest}basic_auth_user",
        metavar="USER",
        help=f"basic-auth user name (env {env}_USERNAME); the password from "
        f"--{prefix}basic-auth-password-file or env {env}_PASSWORD",
    )
    add(
        f"--{prefix}basic-auth-password-file",
        dest=f"{dest}basic_auth_password_file",
        metavar="FILE",
        help=f"file holding the basic-auth password (env {env}_PASSWORD_FILE)",
    )
    add(
        f"--{prefix}header",
        dest=f"{dest}header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="extra request header, e.g. 'X-Scope-OrgID: team-a' (repeatable; not for "
        "secrets: Authorization and Cookie are refused)",
    )
    add(
        f"--{prefix}ca-file",
        dest=f"{dest}ca_file",
        metavar="FILE",
        help=f"PEM bundle of the CAs that sign the server's certificate (env {env}_CA_FILE)",
    )
    add(
        f"--{prefix}cert-file",
        dest=f"{dest}cert_file",
        metavar="FILE",
        help=f"client certificate for mutual TLS, PEM (env {env}_CERT_FILE)",
    )
    add(
        f"--{prefix}key-file",
        dest=f"{dest}key_file",
        metavar="FILE",
        help=f"the client certificate's unencrypted PEM key (env {env}_KEY_FILE)",
    )
    add(
        f"--{prefix}tls-server-name",
        dest=f"{dest}tls_server_name",
        metavar="NAME",
        help=f"name expected in the server's certificate (env {env}_TLS_SERVER_NAME)",
    )
    add(
        f"--{prefix}insecure-skip-verify",
        dest=f"{dest}insecure_skip_verify",
        action="store_true",
        help="do not verify the server's certificate (anyone on the path can then read the "
        "credentials and forge the answers)",
    )


def load_transport(
    args: argparse.Namespace,
    url: str,
    server: str,
    url_option: str,
    prefix: str = "",
    environ: dict[str, str] | None = None,
) -> tuple[str, Transport]:
    """Check ``server``'s options (:func:`transport_options`) and read its secrets.

    Credentials in ``url`` (``https://user:pass@host``) become basic auth and leave the URL.

    Returns:
        (the URL without credentials, the transport).

    Raises:
        ObsgenError: a bad URL, option, file or combination; each message names the option
            or file and never holds a secret (exit code 2).
    """
    env_prefix = (prefix.rstrip("-") or server).upper()
    environ = dict(os.environ if environ is None else environ)
    dest = prefix.replace("-", "_")
    problems: list[Diagnostic] = []

    def arg(name: str) -> Any:
        return getattr(args, f"{dest}{name}", None)

    def setting(name: str, env: str) -> tuple[str | None, str]:
        given = arg(name)
        if given:
            return str(given), f"--{prefix}{name.replace('_', '-')}"
        value = environ.get(f"{env_prefix}_{env}") or None
        return value, f"env {env_prefix}_{env}"

    def problem(where: str, message: str) -> None:
        problems.append(Diagnostic(where, "", message))

    clean, url_user, url_password = _split_url(url, url_option, problem)

    bearer: Secret | None = None
    token_file, token_file_from = setting("bearer_token_file", "BEARER_TOKEN_FILE")
    if token_file is not None:
        token = _read_secret(token_file, token_file_from, "bearer token", problem)
        if token is not None:
            bearer = Secret(token, f"{token_file_from} {token_file}")
    elif environ.get(f"{env_prefix}_BEARER_TOKEN", "").strip():
        bearer = Secret(
            environ[f"{env_prefix}_BEARER_TOKEN"].strip(), f"env {env_prefix}_BEARER_TOKEN"
        )
    if bearer is not None and not _TOKEN_CHARS.fullmatch(bearer.value):
        problem(
            bearer.source,
            "the bearer token holds spaces, control or non-ASCII characters; expected one "
            "token on one line",
        )

    username, user_from = setting("basic_auth_user", "USERNAME")
    password: Secret | None = None
    password_file, password_file_from = setting("basic_auth_password_file", "PASSWORD_FILE")
    if password_file is not None:
        read = _read_secret(password_file, password_file_from, "password", problem)
        if read is not None:
            password = Secret(read, f"{password_file_from} {password_file}")
    elif environ.get(f"{env_prefix}_PASSWORD"):
        password = Secret(environ[f"{env_prefix}_PASSWORD"], f"env {env_prefix}_PASSWORD")
    if url_user is not None:
        if username is not None or password is not None:
            problem(
                url_option,
                "holds a user name and password, and so do the basic-auth options: give them once",
            )
        username = url_user
        password = Secret(url_password or "", f"the user:password in {url_option}")
        user_from = url_option
    if password is not None and not password.value and url_user is None:
        problem(password.source, "the password is empty")
    if username is not None and (":" in username or not username.isprintable()):
        problem(user_from, "the user name holds ':' or a control character; expected a name")
    if password is not None and not password.value.isprintable():
        problem(password.source, "the password holds control characters (a line break?)")
    if password is not None and username is None:
        problem(
            password.source,
            f"a password without a user name: add --{prefix}basic-auth-user "
            f"(or env {env_prefix}_USERNAME)",
        )
    if username is not None and password is None:
        problem(
            user_from,
            f"a user name without a password: add --{prefix}basic-auth-password-file (or env "
            f"{env_prefix}_PASSWORD)",
        )
    if bearer is not None and (username is not None or password is not None):
        problem(
            bearer.source,
            "a bearer token and basic auth are both given; a request carries one of them",
        )

    headers = _headers(arg("header") or [], f"--{prefix}header", problem)

    ca_file, ca_from = setting("ca_file", "CA_FILE")
    cert_file, cert_from = setting("cert_file", "CERT_FILE")
    key_file, key_from = setting("key_file", "KEY_FILE")
    server_name, name_from = setting("tls_server_name", "TLS_SERVER_NAME")
    insecure = bool(arg("insecure_skip_verify"))
    if insecure and ca_file is not None:
        problem(ca_from, f"--{prefix}insecure-skip-verify turns off what {ca_from} is for")
    if ca_file is not None:
        _check_tls(lambda c: c.load_verify_locations(cafile=ca_file), ca_file, ca_from, problem)
    if (cert_file is None) != (key_file is None):
        given = cert_from if cert_file is not None else key_from
        problem(given, f"--{prefix}cert-file and --{prefix}key-file go together")
    elif cert_file is not None and key_file is not None:
        _check_tls(
            lambda c: c.load_cert_chain(cert_file, key_file, password=_no_password),
            f"{cert_file} / {key_file}",
            f"{cert_from} / {key_from}",
            problem,
        )
    if server_name is not None and not _SERVER_NAME.fullmatch(server_name):
        problem(name_from, "expected a DNS name, e.g. prometheus.example.com")

    if problems:
        raise ObsgenError(problems)
    transport = Transport(
        server=server,
        option_prefix=prefix,
        env_prefix=env_prefix,
        bearer=bearer,
        username=username,
        password=password,
        headers=headers,
        ca_file=ca_file,
        cert_file=cert_file,
        key_file=key_file,
        server_name=server_name,
        insecure=insecure,
    )
    return clean, transport


def warnings_of(transport: Transport, url: str) -> list[Diagnostic]:
    """What a user should know before trusting the run: the certificate not verified
    (``--insecure-skip-verify``), credentials sent unencrypted to another machine, TLS
    settings given for a plain http:// URL (they do nothing)."""
    found = []
    tls = [
        transport.option(name)
        for name, value in (
            ("ca-file", transport.ca_file),
            ("cert-file", transport.cert_file),
            ("tls-server-name", transport.server_name),
            ("insecure-skip-verify", transport.insecure),
        )
        if value
    ]
    if tls and url.startswith("http://"):
        found.append(
            Diagnostic(url, "", f"plain http://: {', '.join(tls)} do nothing", Level.WARNING)
        )
    if transport.insecure and url.startswith("https://"):
        found.append(
            Diagnostic(
                transport.option("insecure-skip-verify"),
                "",
                f"the certificate of {url} is NOT verified: anyone on the network path can "
                f"read the credentials and forge every answer; pass "
                f"{transport.option('ca-file')} with the server's CA instead",
                Level.WARNING,
            )
        )
    host = urllib.parse.urlsplit(url).hostname or ""
    if (transport.bearer or transport.password) and url.startswith("http://") and not _local(host):
        found.append(
            Diagnostic(
                url,
                "",
                f"plain http://: the {transport.credentials()} travel unencrypted; use https://",
                Level.WARNING,
            )
        )
    return found


def _local(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def without_userinfo(url: str) -> tuple[str, str | None, str | None]:
    """(``url`` without its ``user:password@``, the user, the password), both unquoted; the
    authority ends at the first ``/``, ``?`` or ``#`` (RFC 3986 §3.2)."""
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    end = min([i for i in (rest.find(c) for c in "/?#") if i >= 0], default=len(rest))
    userinfo, at, host = rest[:end].rpartition("@")
    if not sep or not at:
        return url, None, None
    user, colon, password = userinfo.partition(":")
    clean = f"{scheme}://{host}{rest[end:]}"
    return clean, urllib.parse.unquote(user), urllib.parse.unquote(password) if colon else None


def _split_url(url: str, option: str, problem: Any) -> tuple[str, str | None, str | None]:
    """:func:`without_userinfo`, and a problem unless it is http(s)://host[:port][/path]. A
    URL that fails is never quoted back: it may hold a password."""
    clean, user, password = without_userinfo(url)
    expected = "expected http(s)://[user:password@]host[:port][/path]"
    try:
        parts = urllib.parse.urlsplit(clean)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number
    except ValueError:
        ok = False
    if not ok:
        problem(
            option,
            f"is not a URL; {expected} (a '/', '?', '#' or '@' in a password written "
            "%2F, %3F, %23, %40)",
        )
    elif "@" in clean:
        problem(
            option,
            f"has an '@' after the host; {expected} (an '@', '/', '?' or '#' in "
            "a password written %40, %2F, %3F, %23)",
        )
    elif parts.query or parts.fragment:
        problem(option, "has a query or fragment; expected the server's base URL")
    return clean, user, password


def _read_secret(path: str, source: str, what: str, problem: Any) -> str | None:
    """The stripped text of a secret file, or None after a problem (never quoting it)."""
    try:
        with Path(path).open("rb") as f:
            data = f.read(MAX_SECRET_BYTES + 1)
    except OSError as err:
        problem(path, f"cannot read the {what} ({source}): {err.strerror or type(err).__name__}")
        return None
    if len(data) > MAX_SECRET_BYTES:
        problem(path, f"is over {MAX_SECRET_BYTES} bytes; expected the {what} alone ({source})")
        return None
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        problem(path, f"is not UTF-8 text; expected the {what} ({source})")
        return None
    if not text:
        problem(path, f"is empty; expected the {what} ({source})")
        return None
    return text


def _headers(given: Sequence[str], option: str, problem: Any) -> tuple[tuple[str, str], ...]:
    found: dict[str, tuple[str, str]] = {}
    for item in given:
        name, colon, value = item.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _HEADER_NAME.fullmatch(name):
            problem(option, f"{printable(name)!r} …: expected 'Name: value' with a header name")
            continue
        key = name.lower()
        if key in SECRET_HEADERS:
            problem(
                option,
                f"{name} carries a secret, and the command line is visible to every process: "
                "use the bearer-token or basic-auth options (files or environment)",
            )
        elif key in CLIENT_HEADERS:
            problem(option, f"{name} is set by the HTTP client itself")
        elif not _HEADER_VALUE.fullmatch(value):
            problem(option, f"the value of {name} holds control or non-ASCII characters")
        elif key in found:
            problem(option, f"{name} is given twice")
        else:
            found[key] = (name, value)
    return tuple(found.values())


class _EncryptedKey(Exception):
    pass


def _no_password() -> bytes:
    raise _EncryptedKey


def _check_tls(load: Any, files: str, source: str, problem: Any) -> None:
    """Load TLS material into a throwaway context now, so a bad file is one clear line."""
    context = ssl.create_default_context()
    try:
        load(context)
    except _EncryptedKey:
        problem(source, f"{files}: the key is encrypted; decrypt it (openssl pkey -in KEY -out …)")
    except FileNotFoundError as err:
        problem(source, f"{err.filename or files}: no such file")
    except (ssl.SSLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or getattr(err, "strerror", None) or str(err)
        said = printable(str(reason).lower().replace("_", " "))
        problem(source, f"{files}: not usable PEM ({said})")
