"""A bounded client of the Prometheus HTTP API, as ``obsgen verify`` uses it.

:class:`PrometheusAPI` gives every request a timeout and the whole run one deadline, caps each
response body, and checks each answer's shape: a slow, huge or malformed answer ends as
:class:`PrometheusUnreachable` or a clear error, never a hang or a traceback. Requests carry
the credentials, headers and TLS settings of a :class:`~generator.transport.Transport`; a
refusal (401/403) is :class:`AccessDenied`, and no message holds a secret.
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

import requests

from generator.errors import Diagnostic, ObsgenError, printable
from generator.transport import Transport, without_userinfo


class PrometheusUnreachable(ObsgenError):
    """The server could not be reached or did not answer in time (exit code 2)."""


class AccessDenied(PrometheusUnreachable):
    """The server refused the request: HTTP 401 or 403 (exit code 2). A subclass of
    :class:`PrometheusUnreachable`, so no check reads it as a missing endpoint."""


DEADLINE_S = 60.0
"""Default overall deadline of one ``obsgen verify`` run, in seconds (every request)."""
MAX_RESPONSE_BYTES = 32 << 20
"""Default cap on one response body, decoded, in bytes (a large cluster's targets list is a
few MB)."""
MAX_SHOWN = 200
"""Characters of a server's text quoted back in a message."""


def server_text(value: Any) -> str:
    """Server text for a message: control characters escaped, cut to :data:`MAX_SHOWN`."""
    text = printable(value if isinstance(value, str) else repr(value))
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"


def _finite(text: Any) -> bool:
    """Whether ``text`` is a sample value string holding a finite number."""
    if not isinstance(text, str):
        return False
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


class PrometheusAPI:
    """A minimal, bounded client of the Prometheus HTTP API.

    Every request must finish (headers and body) within ``timeout_s`` and within the overall
    deadline of ``deadline_s`` counted from construction: a server that drips bytes cannot
    hold the run longer. Bodies are read in chunks and refused beyond ``max_bytes`` (decoded).
    Answers are checked for the Prometheus API shape; anything else is a clear error.

    Args:
        url: base URL, e.g. ``http://127.0.0.1:9090`` (a trailing ``/`` is ignored).
        timeout_s: per-request limit in seconds.
        deadline_s: limit in seconds on all requests together (:data:`DEADLINE_S`).
        max_bytes: largest response body in bytes (:data:`MAX_RESPONSE_BYTES`).
        transport: credentials, headers and TLS (none, the system's CAs, when None); a
            ``user:password@`` in ``url`` becomes basic auth when it has no credentials.
    """

    def __init__(
        self,
        url: str,
        timeout_s: float = 10.0,
        deadline_s: float = DEADLINE_S,
        max_bytes: int = MAX_RESPONSE_BYTES,
        transport: Transport | None = None,
    ) -> None:
        clean, user, password = without_userinfo(url)
        transport = transport or Transport(server=self.server)
        if user is not None and transport.bearer is None and transport.password is None:
            transport = transport.with_basic_auth(user, password or "", self.url_option)
        self.url = clean.rstrip("/")
        self.transport = transport
        self.timeout_s = timeout_s
        self.deadline_s = deadline_s
        self.deadline = time.monotonic() + deadline_s
        self.max_bytes = max_bytes
        self.session = transport.session()

    def _fetch(self, url: str, params: dict[str, str]) -> tuple[int, bytes]:
        """(HTTP status, body) of a GET, within the request's and the run's time limits.

        The request runs in a daemon thread: socket timeouts bound each read, not the whole
        answer, so only waiting for the thread with a timeout bounds a server that drips.
        An abandoned thread ends with its connection (and never outlives the process).
        """
        remaining = self.deadline - time.monotonic()
        limit = min(self.timeout_s, remaining)
        if limit <= 0:
            raise self._timed_out(url, overall=True)
        done, cancel = threading.Event(), threading.Event()
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                box["answer"] = self._read(url, params, limit, cancel)
            except BaseException as err:  # handed to the waiting thread
                box["error"] = err
            finally:
                done.set()

        threading.Thread(target=work, name="obsgen-verify-http", daemon=True).start()
        overall = remaining < self.timeout_s  # the run's deadline is the nearer limit
        if not done.wait(limit):
            cancel.set()
            raise self._timed_out(url, overall)
        if isinstance(box.get("error"), requests.Timeout):
            raise self._timed_out(url, overall)
        if "error" in box:
            raise box["error"]
        answer: tuple[int, bytes] = box["answer"]
        return answer

    def _read(
        self, url: str, params: dict[str, str], limit: float, cancel: threading.Event
    ) -> tuple[int, bytes]:
        response = self.session.get(
            url,
            params=params,
            timeout=limit,
            stream=True,
            verify=self.transport.verify,
            cert=self.transport.cert,
        )
        with response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise self._too_large(url)
            body = bytearray()
            for chunk in response.iter_content(chunk_size=64 << 10):
                if cancel.is_set():  # the caller gave up: stop reading
                    raise self._timed_out(url, overall=False)
                body += chunk
                if len(body) > self.max_bytes:
                    raise self._too_large(url)
            return response.status_code, bytes(body)

    def _timed_out(self, url: str, overall: bool) -> PrometheusUnreachable:
        what = (
            f"the run's deadline of {self.deadline_s:g}s passed"
            if overall
            else f"no complete answer within {self.timeout_s:g}s"
        )
        return PrometheusUnreachable([self._diagnostic(f"{what} from {url}")])

    def _too_large(self, url: str) -> ObsgenError:
        return self._error(
            f"{url} answered with more than {self.max_bytes} bytes; is {self.url_option} "
            "the server's base URL?"
        )

    server = "Prometheus"
    """What the messages call the server."""
    url_option = "--prometheus-url"
    """The command-line option naming the server's URL."""

    def get(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>``; return its ``data``.

        Raises:
            PrometheusUnreachable: the server cannot be reached or times out (exit code 2).
            ObsgenError: it answers with an error, too much, or with something that is not
                the Prometheus API (exit code 2).
        """
        url = f"{self.url}/api/v1/{path}"
        status, body = self.get_json(url, params)
        if not isinstance(body, dict) or body.get("status") != "success":
            detail = body.get("error", body) if isinstance(body, dict) else body
            raise self._error(f"{url} answered HTTP {status}: {self.said(detail)}")
        return body.get("data")

    def get_json(self, url: str, params: dict[str, str]) -> tuple[int, Any]:
        """GET ``url``; return (HTTP status, the JSON body), bounded as every request is.

        Raises:
            PrometheusUnreachable: the server cannot be reached, times out, or its TLS
                handshake fails (exit code 2).
            AccessDenied: it answers 401 or 403 (exit code 2).
            ObsgenError: the body is too large or not JSON (exit code 2).
        """
        try:
            status, raw = self._fetch(url, params)
        except requests.Timeout:
            raise self._timed_out(url, overall=False) from None
        except requests.RequestException as err:
            tls = self.transport.tls_failure(err)
            message = (
                f"cannot connect to {self.server} at {self.url} over TLS: {tls}"
                if tls is not None
                else f"cannot connect to {self.server} at {self.url} ({type(err).__name__}); "
                f"check {self.url_option} and that the server is running"
            )
            raise PrometheusUnreachable([self._diagnostic(message)]) from None
        text = raw[:MAX_SHOWN].decode("utf-8", "replace")
        if status in (401, 403):
            reason = "Unauthorized" if status == 401 else "Forbidden"
            raise AccessDenied(
                [
                    self._diagnostic(
                        f"{url} answered HTTP {status} {reason} ({self.said(text.strip())}): "
                        f"{self.transport.refused(status)}"
                    )
                ]
            )
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            raise self._error(
                f"{url} answered HTTP {status} without {self.server} API JSON "
                f"({self.said(text)}); is {self.url_option} the server's base URL?"
            ) from None
        return status, body

    def said(self, value: Any) -> str:
        """What the server said, for a message: :func:`server_text` with every secret of
        the transport redacted (a proxy may echo the request's ``Authorization`` back)."""
        text = value if isinstance(value, str) else repr(value)
        return server_text(self.transport.redact(text))

    def _diagnostic(self, message: str) -> Diagnostic:
        return Diagnostic(self.url, "", message)

    def _error(self, message: str) -> ObsgenError:
        return ObsgenError([self._diagnostic(message)])

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; the result vector (empty when there is no data), every sample
        checked to be ``{"metric": {label: text}, "value": [time, "<finite number>"]}``.

        Raises:
            ObsgenError: the answer has another shape (exit code 2).
        """
        data = self.get("query", query=expr)
        result = data.get("result") if isinstance(data, dict) else None
        if not isinstance(result, list):
            raise self._shape(expr, "data.result", "a list of samples", result)
        for i, sample in enumerate(result):
            where = f"data.result[{i}]"
            if not isinstance(sample, dict):
                raise self._shape(expr, where, "a sample object", sample)
            metric = sample.get("metric")
            if not isinstance(metric, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in metric.items()
            ):
                raise self._shape(expr, f"{where}.metric", "a map of label texts", metric)
            value = sample.get("value")
            if not (isinstance(value, list) and len(value) == 2 and _finite(value[1])):
                raise self._shape(expr, f"{where}.value", '[time, "<finite number>"]', value)
        return result

    def _shape(self, asked: str, where: str, expected: str, got: Any) -> ObsgenError:
        return self._error(
            f"unexpected answer to {server_text(asked)}: {where}: expected {expected} "
            f"(got {self.said(got)})"
        )

    def version(self) -> str | None:
        """The server's version (``2.42.0``), or None when it does not say."""
        try:
            data = self.get("status/buildinfo")
        except PrometheusUnreachable:
            raise
        except ObsgenError:  # e.g. a query frontend without this endpoint
            return None
        version = data.get("version") if isinstance(data, dict) else None
        return self.said(version) if isinstance(version, str) else None

    def active_targets(self) -> list[dict[str, Any]]:
        """``activeTargets`` of ``/api/v1/targets``, each checked to be an object whose
        ``labels`` (when present) map label names to texts.

        Raises:
            ObsgenError: the answer has another shape (exit code 2).
        """
        data = self.get("targets", state="active")
        targets = data.get("activeTargets", []) if isinstance(data, dict) else None
        if not isinstance(targets, list):
            raise self._shape("targets", "data.activeTargets", "a list of targets", targets)
        for i, target in enumerate(targets):
            if not isinstance(target, dict):
                raise self._shape("targets", f"data.activeTargets[{i}]", "a target object", target)
            labels = target.get("labels", {})
            if not isinstance(labels, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items()
            ):
                raise self._shape(
                    "targets", f"data.activeTargets[{i}].labels", "a map of label texts", labels
                )
        return targets
