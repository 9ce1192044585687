"""``.obsgen-lint.yaml``: which checks run, at what severity, and a few policy values.

Every key, its default and meaning: docs/lint.md, "Configuration: ``.obsgen-lint.yaml``".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from generator.errors import Diagnostic, ObsgenError
from generator.lint.model import Severity
from generator.lint.promql import parse_duration
from generator.lint.versions import VERSIONS, parse_target

CONFIG_NAME = ".obsgen-lint.yaml"
DEFAULT_SCRAPE_INTERVAL = 30.0  # seconds; kube-prometheus-stack's default scrape interval
DEFAULT_SLO_WINDOW = 30 * 86400.0  # seconds; the SRE Workbook's (and obsgen's) SLO window
_TOP_KEYS = {
    "scrapeInterval",
    "prometheusVersion",
    "sloWindow",
    "enabledFeatures",
    "disable",
    "severity",
    "counters",
    "alerts",
}
_ALERT_KEYS = {"requiredLabels", "requiredAnnotations", "severities"}


@dataclass(frozen=True)
class LintConfig:
    """Resolved lint settings (defaults filled in).

    Attributes:
        scrape_interval: seconds between scrapes; windows shorter than 4x are flagged.
        versions: the Prometheus major versions the rules must work on (``("2", "3")``
            by default: what works on either).
        slo_window: seconds; the SLO window that burn-rate factors spend the budget of.
        enabled_features: ``--enable-feature`` flags the target servers run with (only
            ``promql-experimental-functions`` changes what is reported).
        disabled: check ids that do not run.
        severities: check id -> severity replacing the default.
        counters: extra whole-name regexes of counters.
        required_labels: labels every alert must carry.
        required_annotations: annotations every alert must carry.
        alert_severities: allowed values of the ``severity`` label.
        today: the date ``until`` in disable comments is compared with; ``None``: today (UTC).
    """

    scrape_interval: float = DEFAULT_SCRAPE_INTERVAL
    versions: tuple[str, ...] = VERSIONS
    slo_window: float = DEFAULT_SLO_WINDOW
    enabled_features: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    counters: tuple[str, ...] = ()
    required_labels: tuple[str, ...] = ("severity",)
    required_annotations: tuple[str, ...] = ("summary", "runbook_url")
    alert_severities: tuple[str, ...] = ("critical", "warning", "info")
    today: date | None = None

    @property
    def day(self) -> date:
        """:attr:`today`, or the current UTC date."""
        return self.today or datetime.now(UTC).date()

    def with_scrape_interval(self, seconds: float) -> LintConfig:
        """A copy with another scrape interval."""
        return replace(self, scrape_interval=seconds)

    def with_versions(self, versions: tuple[str, ...]) -> LintConfig:
        """A copy targeting other Prometheus versions."""
        return replace(self, versions=versions)


def _strings(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where}: expected a list of strings")
        return ()
    return tuple(value)


def parse_config(data: Any, known_checks: set[str], source: str) -> LintConfig:
    """Validate a loaded config mapping and resolve it.

    Args:
        data: the YAML document (``None`` for an empty file).
        known_checks: every registered check id.
        source: the file name, for messages.

    Raises:
        ObsgenError: unknown keys, unknown check ids, bad durations or severities — all of
            them at once (exit 2).
    """
    if data is None:
        return LintConfig()
    if not isinstance(data, dict):
        raise ObsgenError([Diagnostic(source, "", "expected a mapping at the top level")])
    problems: list[str] = []
    for key in sorted(set(data) - _TOP_KEYS):
        problems.append(f"{key}: unknown key; expected one of {', '.join(sorted(_TOP_KEYS))}")
    config = LintConfig()
    if "scrapeInterval" in data:
        try:
            config = replace(config, scrape_interval=parse_duration(str(data["scrapeInterval"])))
        except ValueError as err:
            problems.append(f"scrapeInterval: {err}")
    if "prometheusVersion" in data:
        try:
            config = replace(config, versions=parse_target(str(data["prometheusVersion"])))
        except ValueError as err:
            problems.append(f"prometheusVersion: {err}")
    if "sloWindow" in data:
        try:
            window = parse_duration(str(data["sloWindow"]))
            if window <= 0:
                raise ValueError("must be longer than 0")
            config = replace(config, slo_window=window)
        except ValueError as err:
            problems.append(f"sloWindow: {err}")
    if "enabledFeatures" in data:
        features = _strings(data["enabledFeatures"], "enabledFeatures", problems)
        config = replace(config, enabled_features=frozenset(features))
    if "disable" in data:
        disabled = _strings(data["disable"], "disable", problems)
        for index, check_id in enumerate(disabled):
            if check_id not in known_checks:
                problems.append(f"disable[{index}]: unknown check {check_id!r}")
        config = replace(config, disabled=frozenset(disabled))
    if "severity" in data:
        config = replace(config, severities=_severities(data["severity"], known_checks, problems))
    if "counters" in data:
        counters = _strings(data["counters"], "counters", problems)
        for index, pattern in enumerate(counters):
            try:
                re.compile(pattern)
            except re.error as err:
                problems.append(f"counters[{index}]: not a regex: {err}")
        config = replace(config, counters=counters)
    if "alerts" in data:
        config = _alerts(data["alerts"], config, problems)
    if problems:
        raise ObsgenError([Diagnostic(source, "", problem) for problem in problems])
    return config


def _severities(value: Any, known: set[str], problems: list[str]) -> dict[str, Severity]:
    if not isinstance(value, dict):
        problems.append("severity: expected a mapping of check id to error|warning|info")
        return {}
    out: dict[str, Severity] = {}
    for check_id, text in value.items():
        if check_id not in known:
            problems.append(f"severity.{check_id}: unknown check")
            continue
        try:
            out[str(check_id)] = Severity.parse(str(text))
        except ValueError as err:
            problems.append(f"severity.{check_id}: {err}")
    return out


def _alerts(value: Any, config: LintConfig, problems: list[str]) -> LintConfig:
    if not isinstance(value, dict):
        problems.append("alerts: expected a mapping")
        return config
    for key in sorted(set(value) - _ALERT_KEYS):
        problems.append(
            f"alerts.{key}: unknown key; expected one of {', '.join(sorted(_ALERT_KEYS))}"
        )
    if "requiredLabels" in value:
        labels = _strings(value["requiredLabels"], "alerts.requiredLabels", problems)
        config = replace(config, required_labels=labels)
    if "requiredAnnotations" in value:
        notes = _strings(value["requiredAnnotations"], "alerts.requiredAnnotations", problems)
        config = replace(config, required_annotations=notes)
    if "severities" in value:
        severities = _strings(value["severities"], "alerts.severities", problems)
        config = replace(config, alert_severities=severities)
    return config


def load_config(path: Path | None, known_checks: set[str]) -> tuple[LintConfig, str | None]:
    """Read the config from ``path``, or from ``./.obsgen-lint.yaml`` when ``path`` is None.

    Returns:
        The config (defaults when no file) and the file it came from (``None`` when none).

    Raises:
        ObsgenError: ``path`` was given but cannot be read, or the file is invalid (exit 2).
    """
    if path is None:
        default = Path(CONFIG_NAME)
        if not default.is_file():
            return LintConfig(), None
        path = default
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ObsgenError([Diagnostic(str(path), "", f"cannot read: {err}")]) from None
    except yaml.YAMLError as err:
        raise ObsgenError([Diagnostic(str(path), "", f"not valid YAML: {err}")]) from None
    return parse_config(data, known_checks, str(path)), str(path)
