"""``alertmanager/receivers.yaml``: where each team's pages and tickets go (strict pydantic models).

More: docs/alerting.md, "How receivers.yaml is read".
"""

from __future__ import annotations

import re
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, ValidationError, model_validator

from generator import urls
from generator.errors import Diagnostic, ObsgenError
from generator.spec import (
    TEAM_ALLOWED,
    TEAM_TEXT,
    DurationMs,
    StrictModel,
    parse_yaml,
    validation_diagnostics,
)
from generator.units import format_duration_ms

RECEIVERS_FILE = "alertmanager/receivers.yaml"
API_VERSION = "obsgen/v1alpha1"
KIND = "AlertReceivers"
# Where kube-prometheus-stack (prometheus-operator) mounts alertmanagerSpec.secrets.
DEFAULT_SECRETS_DIR = "/etc/alertmanager/secrets"

Obj = dict[str, Any]
# Integers as their consumers keep them: an AlertmanagerConfig's webhook maxAlerts is an int32
# (prometheus-operator, monitoring/v1alpha1 WebhookConfig; Alertmanager's own max_alerts is a
# uint64, so the CRD's bound is the tighter), a TCP port 16 bits without 0.
MAX_INT32 = 2**31 - 1
MAX_PORT = 65535


def _check(regex: re.Pattern[str], what: str) -> Any:
    def check(value: str) -> str:
        if not regex.fullmatch(value):
            shown = repr(value) if len(value) <= 80 else repr(value[:79] + "…")
            raise ValueError(f"{shown} is not {what}")
        return value

    return AfterValidator(check)


Url = Annotated[
    str,
    Field(max_length=urls.MAX_URL_CHARS),
    AfterValidator(urls.checked("https://hooks.example.com/alerts")),
]
# Kubernetes object names (DNS-1123 subdomain) and Secret data keys.
SecretName = Annotated[
    str,
    Field(max_length=253),
    _check(
        re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"),
        "a Kubernetes Secret name (lowercase letters, digits, '-', '.')",
    ),
]


def _not_dots(value: str) -> str:
    # Kubernetes refuses a Secret key of '.' or '..' or starting with '..' (IsConfigMapKey):
    # as a file under <secretsDir>/<secret>/ it would name the folder or its parent.
    if value in (".", "..") or value.startswith(".."):
        raise ValueError(
            f"{value!r} is not a Secret key Kubernetes accepts ('.', '..' and a leading '..' "
            "are refused: as a file name it would leave the Secret's folder)"
        )
    return value


SecretKey = Annotated[
    str,
    Field(max_length=253),
    _check(re.compile(r"^[-._a-zA-Z0-9]+$"), "a Secret key (letters, digits, '-', '_', '.')"),
    AfterValidator(_not_dots),
]
Email = Annotated[
    str,
    Field(max_length=254),
    _check(re.compile(r"^[^@\s\"'<>{}\\,;]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$"), "an email address"),
]


def _port_in_range(value: str) -> str:
    port = int(value.rpartition(":")[2])
    if not 1 <= port <= MAX_PORT:
        raise ValueError(
            f"{value!r}: port {port} is out of range; expected host:port with a port from 1 to "
            f"{MAX_PORT} (e.g. smtp.example.com:587)"
        )
    return value


HostPort = Annotated[
    str,
    _check(re.compile(r"^[A-Za-z0-9.-]+:[0-9]{1,5}$"), "host:port (e.g. smtp.example.com:587)"),
    AfterValidator(_port_in_range),
]
SlackChannel = Annotated[
    str,
    _check(re.compile(r"^[#@]?[A-Za-z0-9][A-Za-z0-9._-]{0,79}$"), "a Slack channel (#name or ID)"),
]
PlainName = Annotated[
    str,
    Field(max_length=128),
    _check(re.compile(r"^[\w .@+-]+$"), "a user name (letters, digits, space, . @ + - _)"),
]
TeamName = Annotated[
    str, Field(max_length=63), _check(TEAM_TEXT, f"a team name; allowed: {TEAM_ALLOWED}")
]


class SecretRef(StrictModel):
    """One key of a Kubernetes Secret: ``{secret: <name>, key: <key>}``.

    The standalone configuration reads it from ``<secretsDir>/<secret>/<key>``; an
    ``AlertmanagerConfig`` references the Secret in its own namespace.
    """

    secret: SecretName
    key: SecretKey

    def path(self, secrets_dir: str) -> str:
        """File path of the key: ``<secrets_dir>/<secret>/<key>``."""
        return f"{secrets_dir.rstrip('/')}/{self.secret}/{self.key}"

    def selector(self) -> Obj:
        """The ``SecretKeySelector`` of an ``AlertmanagerConfig`` (``{name, key}``)."""
        return {"name": self.secret, "key": self.key}


def _max_alerts(value: int) -> int:
    if not 0 <= value <= MAX_INT32:
        shown = str(value) if len(str(value)) <= 40 else str(value)[:39] + "…"
        raise ValueError(
            f"{shown} is out of range; expected 0 (every alert in one message) to {MAX_INT32}: "
            "the AlertmanagerConfig resource keeps maxAlerts in an int32"
        )
    return value


class Webhook(StrictModel):
    """A generic webhook (ticket bridges, chat relays). The URL is written into the config;
    ``maxAlerts`` caps the alerts per message (0: all), at most :data:`MAX_INT32`."""

    url: Url
    max_alerts: Annotated[int, AfterValidator(_max_alerts)] = 0


class PagerDuty(StrictModel):
    """PagerDuty Events API v2: the integration (routing) key of a PagerDuty service."""

    routing_key: SecretRef


class Slack(StrictModel):
    """A Slack incoming webhook (its URL is the secret) and the channel to post to."""

    api_url: SecretRef = Field(alias="apiURL")
    channel: SlackChannel


class Opsgenie(StrictModel):
    """An Opsgenie API integration; ``apiURL`` for the EU instance (https://api.eu.opsgenie.com/)."""

    api_key: SecretRef
    api_url: Url | None = Field(default=None, alias="apiURL")


class EmailReceiver(StrictModel):
    """Email through an SMTP smarthost (STARTTLS required unless ``requireTLS: false``)."""

    to: Email
    from_: Email = Field(alias="from")
    smarthost: HostPort
    auth_username: PlainName | None = None
    auth_password: SecretRef | None = None
    require_tls: bool = Field(default=True, alias="requireTLS")


KINDS = ("webhook", "pagerduty", "slack", "opsgenie", "email")


class Receiver(StrictModel):
    """One integration: exactly one of ``webhook``, ``pagerduty``, ``slack``, ``opsgenie``,
    ``email`` (``- pagerduty: {routingKey: {secret: pd, key: ml-platform}}``)."""

    webhook: Webhook | None = None
    pagerduty: PagerDuty | None = None
    slack: Slack | None = None
    opsgenie: Opsgenie | None = None
    email: EmailReceiver | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Receiver:
        chosen = [k for k in KINDS if getattr(self, k) is not None]
        if len(chosen) != 1:
            got = ", ".join(chosen) or "none"
            raise ValueError(f"expected exactly one of {', '.join(KINDS)} (got {got})")
        return self

    @property
    def kind(self) -> str:
        """Which integration this is (one of :data:`KINDS`)."""
        return next(k for k in KINDS if getattr(self, k) is not None)

    def secrets(self) -> list[SecretRef]:
        """The Secret keys this receiver reads."""
        found: list[SecretRef] = []
        if self.pagerduty is not None:
            found.append(self.pagerduty.routing_key)
        if self.slack is not None:
            found.append(self.slack.api_url)
        if self.opsgenie is not None:
            found.append(self.opsgenie.api_key)
        if self.email is not None and self.email.auth_password is not None:
            found.append(self.email.auth_password)
        return found

    def standalone(self, secrets_dir: str) -> tuple[str, Obj]:
        """``(<kind>_configs key, entry)`` of an Alertmanager configuration file (0.25+),
        secrets as ``*_file`` paths under ``secrets_dir``, resolved notifications on."""
        if self.webhook is not None:
            entry: Obj = {"url": self.webhook.url, "send_resolved": True}
            if self.webhook.max_alerts:
                entry["max_alerts"] = self.webhook.max_alerts
            return "webhook_configs", entry
        if self.pagerduty is not None:
            return "pagerduty_configs", {
                "routing_key_file": self.pagerduty.routing_key.path(secrets_dir),
                "send_resolved": True,
            }
        if self.slack is not None:
            return "slack_configs", {
                "api_url_file": self.slack.api_url.path(secrets_dir),
                "channel": self.slack.channel,
                "send_resolved": True,
            }
        if self.opsgenie is not None:
            entry = {"api_key_file": self.opsgenie.api_key.path(secrets_dir)}
            if self.opsgenie.api_url is not None:
                entry["api_url"] = self.opsgenie.api_url
            entry["send_resolved"] = True
            return "opsgenie_configs", entry
        assert self.email is not None
        mail = self.email
        entry = {"to": mail.to, "from": mail.from_, "smarthost": mail.smarthost}
        if mail.auth_username is not None:
            entry["auth_username"] = mail.auth_username
        if mail.auth_password is not None:
            entry["auth_password_file"] = mail.auth_password.path(secrets_dir)
        entry["require_tls"] = mail.require_tls
        entry["send_resolved"] = True
        return "email_configs", entry

    def crd(self) -> tuple[str, Obj]:
        """``(<kind>Configs key, entry)`` of an ``AlertmanagerConfig`` receiver
        (``monitoring.coreos.com/v1alpha1``, fields present since operator v0.65)."""
        if self.webhook is not None:
            entry: Obj = {"url": self.webhook.url, "sendResolved": True}
            if self.webhook.max_alerts:
                entry["maxAlerts"] = self.webhook.max_alerts
            return "webhookConfigs", entry
        if self.pagerduty is not None:
            return "pagerdutyConfigs", {
                "routingKey": self.pagerduty.routing_key.selector(),
                "sendResolved": True,
            }
        if self.slack is not None:
            return "slackConfigs", {
                "apiURL": self.slack.api_url.selector(),
                "channel": self.slack.channel,
                "sendResolved": True,
            }
        if self.opsgenie is not None:
            entry = {"apiKey": self.opsgenie.api_key.selector()}
            if self.opsgenie.api_url is not None:
                entry["apiURL"] = self.opsgenie.api_url
            entry["sendResolved"] = True
            return "opsgenieConfigs", entry
        assert self.email is not None
        mail = self.email
        entry = {"to": mail.to, "from": mail.from_, "smarthost": mail.smarthost}
        if mail.auth_username is not None:
            entry["authUsername"] = mail.auth_username
        if mail.auth_password is not None:
            entry["authPassword"] = mail.auth_password.selector()
        entry["requireTLS"] = mail.require_tls
        entry["sendResolved"] = True
        return "emailConfigs", entry


def _not_empty(receivers: list[Receiver]) -> list[Receiver]:
    if not receivers:
        raise ValueError(
            "a team without receivers is never reached; expected at least one, e.g. "
            "[{pagerduty: {routingKey: {secret: alertmanager-receivers, key: my-team}}}]"
        )
    return receivers


Receivers = Annotated[list[Receiver], AfterValidator(_not_empty)]


class Team(StrictModel):
    """A team's receivers: ``page`` for ``severity: critical``, ``ticket`` for the rest."""

    name: TeamName
    page: Receivers
    ticket: Receivers


class Timing(StrictModel):
    """Alertmanager grouping timings of one severity (Alertmanager docs, ``<route>``).

    ``groupWait``: how long a new group waits for more alerts before its first notification;
    ``groupInterval``: the wait before notifying about alerts added to a group already notified;
    ``repeatInterval``: how often an unchanged, still-firing group is notified again.
    """

    group_wait: DurationMs
    group_interval: DurationMs
    repeat_interval: DurationMs

    @model_validator(mode="after")
    def _ordered(self) -> Timing:
        if self.repeat_interval < self.group_interval:
            raise ValueError(
                f"repeatInterval {format_duration_ms(self.repeat_interval)} is shorter than "
                f"groupInterval {format_duration_ms(self.group_interval)}; Alertmanager only "
                "repeats on a group flush, so expected repeatInterval ≥ groupInterval"
            )
        return self


# Pages: 30 s lets the alerts of one evaluation (and the inhibiting ModelTargetDown) arrive
# together; 5 m before telling about new alerts in an open page; re-notify an unresolved page
# every 4 h (Alertmanager's defaults). Tickets: 2 m to batch the burst one fault raises across
# pods; 30 m between updates; one reminder a day (under Alertmanager's 120 h log retention).
PAGE_TIMING = Timing.model_validate(
    {"groupWait": "30s", "groupInterval": "5m", "repeatInterval": "4h"}
)
TICKET_TIMING = Timing.model_validate(
    {"groupWait": "2m", "groupInterval": "30m", "repeatInterval": "1d"}
)


class Timings(StrictModel):
    """Timings per notification kind; each defaults to the values documented in
    docs/alerting.md."""

    page: Timing = PAGE_TIMING
    ticket: Timing = TICKET_TIMING


class ReceiversConfig(StrictModel):
    """The whole ``alertmanager/receivers.yaml`` document."""

    api_version: Literal["obsgen/v1alpha1"]
    kind: Literal["AlertReceivers"]
    secrets_dir: Annotated[
        str,
        _check(re.compile(r"^/[\w./-]*$"), "an absolute path such as /etc/alertmanager/secrets"),
    ] = DEFAULT_SECRETS_DIR
    timing: Timings = Timings()
    default: list[Receiver] = Field(default_factory=list)
    teams: list[Team] = Field(default_factory=list)

    def team(self, name: str) -> Team | None:
        """The receivers of team ``name``, or None when the file does not list it."""
        return next((t for t in self.teams if t.name == name), None)


EMPTY = ReceiversConfig.model_validate({"apiVersion": API_VERSION, "kind": KIND})


def _duplicates(config: ReceiversConfig, file: str) -> list[Diagnostic]:
    first: dict[str, int] = {}
    problems = []
    for i, team in enumerate(config.teams):
        if team.name in first:
            problems.append(
                Diagnostic(
                    file,
                    f"teams[{i}].name",
                    f"team {team.name!r} is already routed by teams[{first[team.name]}]; "
                    "expected one entry per team (merge their receivers)",
                )
            )
        else:
            first[team.name] = i
    return problems


def parse_receivers(data: Any, file: str = RECEIVERS_FILE) -> ReceiversConfig:
    """Validate already-parsed YAML as a receivers file.

    Raises:
        ObsgenError: one diagnostic per problem (exit code 2): unknown keys, a team without
            page or ticket receivers, a URL that is not one, a team listed twice, …
    """
    if not isinstance(data, dict):
        raise ObsgenError(
            [
                Diagnostic(
                    file,
                    "",
                    f"expected a YAML mapping with apiVersion: {API_VERSION}, kind: {KIND}, teams",
                )
            ]
        )
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        raise ObsgenError(
            [
                Diagnostic(
                    file,
                    "",
                    f"not a receivers file (apiVersion={data.get('apiVersion')!r}, "
                    f"kind={data.get('kind')!r}); expected apiVersion: {API_VERSION}, kind: {KIND}",
                )
            ]
        )
    try:
        config = ReceiversConfig.model_validate(data)
    except ValidationError as err:
        raise ObsgenError(validation_diagnostics(file, err, ReceiversConfig)) from None
    problems = _duplicates(config, file)
    if problems:
        raise ObsgenError(problems)
    return config


def load_receivers(root: Path) -> ReceiversConfig | None:
    """Read ``<root>/alertmanager/receivers.yaml``; None when there is no such file.

    Raises:
        ObsgenError: unreadable, not UTF-8, invalid YAML (with its line), or invalid content.
    """
    path = root / RECEIVERS_FILE
    if not path.exists():
        return None
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ObsgenError([Diagnostic(RECEIVERS_FILE, "", "not a regular file")])
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ObsgenError([Diagnostic(RECEIVERS_FILE, "", "not a UTF-8 text file")]) from None
    except OSError as err:
        raise ObsgenError(
            [Diagnostic(RECEIVERS_FILE, "", f"cannot read: {err.strerror or err}")]
        ) from None
    return parse_receivers(parse_yaml(text, RECEIVERS_FILE), RECEIVERS_FILE)
