"""Check the installed bundle on a live Prometheus (and Alertmanager), beside :mod:`generator.verify`.

``rules``: every rule group of the service loaded once, identical to the rendered one (content
hash of the normalised rules, :func:`rule_digest`), no rule in error; ``retention``: the
server keeps every SLO window; ``external labels``: the cluster label; ``routing``: each alert,
with the server's external labels, reaches the team's receiver in the running Alertmanager.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from generator import amtool, naming
from generator.builders.alertmanager_routing import alert_labels, receiver_for
from generator.builders.rulefile import rule_groups
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.prometheus_api import PrometheusAPI, PrometheusUnreachable, server_text
from generator.promql import LEGACY_LABEL_NAME, LEGACY_METRIC_NAME, Matcher, selector
from generator.units import format_duration_ms, parse_duration_ms
from generator.verify import Row, Status

# PromQL tokens, enough to normalise an expression as Prometheus prints it back (its parser's
# String()): strings, durations, numbers, identifiers, whitespace, any other character.
_TOKEN = re.compile(
    r"""(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)
    |(?P<dur>(?:\d+(?:ms|[smhdwy]))+)(?![\w:])
    |(?P<num>0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
    |(?P<id>[A-Za-z_:][\w:]*)
    |(?P<space>\s+)
    |(?P<other>.)""",
    re.X | re.S,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}


def _string(token: str) -> str:
    if token.startswith("`"):
        return json.dumps(token[1:-1])
    body = re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), token[1:-1])
    return json.dumps(body)


def normalised_expr(expr: str) -> str:
    """``expr`` in a form equal for every spelling Prometheus treats alike: no whitespace,
    durations in ms (``30d`` = ``4w2d``), numbers as floats (``68719476736`` =
    ``6.8719476736e+10``), strings re-quoted, the matchers of each selector sorted (as
    Prometheus prints them). A PromQL-shaped text, not a parse: two different expressions
    never normalise alike, two alike ones do when Prometheus prints them as the generator
    writes them, apart from those spellings."""
    tokens: list[str] = []
    for match in _TOKEN.finditer(expr):
        kind, text = match.lastgroup, match.group()
        if kind == "space":
            continue
        if kind == "str":
            text = _string(text)
        elif kind == "dur":
            text = f"{parse_duration_ms(text, zero=True)}ms"
        elif kind == "num":
            text = repr(float(int(text, 16) if text[:2] in ("0x", "0X") else float(text)))
        tokens.append(text)
    # Prometheus prints a bare `group_left` as `group_left()`.
    for i in range(len(tokens) - 1, -1, -1):
        if tokens[i] in ("group_left", "group_right") and tokens[i + 1 : i + 2] != ["("]:
            tokens[i + 1 : i + 1] = ["(", ")"]
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] != "{":
            out.append(tokens[i])
            i += 1
            continue
        end = tokens.index("}", i) if "}" in tokens[i:] else len(tokens)
        matchers = "".join(tokens[i + 1 : end]).split(",")  # commas only appear between them
        kept = sorted(_matcher(m) for m in matchers if m)
        named = next((m for m in kept if m.startswith('__name__="')), "")
        legacy = bool(named) and LEGACY_METRIC_NAME.match(json.loads(named[9:]))
        if legacy and not (out and _TOKEN_ID.match(out[-1]) and out[-1] not in _KEYWORDS):
            # {"up",job="a"} and {__name__="up",job="a"} are up{job="a"}, as Prometheus prints.
            out.append(json.loads(named[9:]))
            kept.remove(named)
        out.append("{" + ",".join(kept) + "}")
        i = end + 1
    return "".join(out)


_TOKEN_ID = re.compile(r"^[A-Za-z_:][\w:]*$")
_KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "group_left", "group_right"})
_STRING = re.compile(r'^"(?:[^"\\]|\\.)*"')


def _matcher(text: str) -> str:
    """One matcher in one spelling: a quoted metric name alone (``"a.b"``, Prometheus 3) as
    ``__name__="a.b"``; a quoted label name that needs no quotes (``"le"="1"``) unquoted."""
    found = _STRING.match(text)
    if found is None:
        return text
    if found.end() == len(text):
        return f"__name__={text}"
    label = json.loads(found.group())
    return label + text[found.end() :] if LEGACY_LABEL_NAME.match(label) else text


def _seconds_ms(value: Any) -> int:
    return round(float(value) * 1000) if isinstance(value, int | float) else 0


def _rendered_rule(rule: Mapping[str, Any]) -> tuple[Any, ...]:
    kind = "alert" if "alert" in rule else "record"
    return (
        kind,
        rule[kind],
        normalised_expr(str(rule["expr"])),
        parse_duration_ms(rule["for"], zero=True) if rule.get("for") else 0,
        parse_duration_ms(rule["keep_firing_for"], zero=True) if rule.get("keep_firing_for") else 0,
        sorted((rule.get("labels") or {}).items()),
        sorted((rule.get("annotations") or {}).items()),
    )


def _served_rule(rule: Mapping[str, Any]) -> tuple[Any, ...]:
    return (
        "alert" if rule.get("type") == "alerting" else "record",
        rule.get("name"),
        normalised_expr(str(rule.get("query", ""))),
        _seconds_ms(rule.get("duration")),
        _seconds_ms(rule.get("keepFiringFor")),
        sorted((rule.get("labels") or {}).items()),
        sorted((rule.get("annotations") or {}).items()),
    )


def rule_digest(rules: Sequence[tuple[Any, ...]]) -> str:
    """SHA-256 (first 12 hex digits) of a group's normalised rules, in order: kind, name,
    :func:`normalised_expr`, ``for`` and ``keep_firing_for`` (ms), labels, annotations."""
    text = json.dumps([list(r) for r in rules], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


_PARTS = ("kind", "name", "expression", "for", "keep_firing_for", "labels", "annotations")


def _difference(rendered: Sequence[tuple[Any, ...]], served: Sequence[tuple[Any, ...]]) -> str:
    """The first difference between two groups' normalised rules, in words."""
    if len(rendered) != len(served):
        return f"{len(served)} rules loaded, {len(rendered)} rendered"
    for index, (mine, theirs) in enumerate(zip(rendered, served, strict=True)):
        for part, a, b in zip(_PARTS, mine, theirs, strict=True):
            if a != b:
                if part in ("labels", "annotations"):
                    changed = sorted(dict(a).items() ^ dict(b).items())
                    keys = sorted({k for k, _ in changed})
                    return f"rule {index} ({mine[1]}): {part} {', '.join(keys)} differ"
                if part in ("for", "keep_firing_for"):
                    return (
                        f"rule {index} ({mine[1]}): {part} {format_duration_ms(b) if b else '0'} "
                        f"loaded, {format_duration_ms(a) if a else '0'} rendered"
                    )
                return f"rule {index} ({mine[1]}): {part} differs"
    return "same rules"


def _groups(api: PrometheusAPI) -> list[dict[str, Any]]:
    data = api.get("rules")
    groups = data.get("groups") if isinstance(data, dict) else None
    if not isinstance(groups, list) or not all(
        isinstance(g, dict) and isinstance(g.get("name"), str) and isinstance(g.get("rules"), list)
        for g in groups
    ):
        raise api._error("unexpected answer to rules: expected data.groups of named groups")
    for group in groups:
        if not all(isinstance(r, dict) for r in group["rules"]):
            raise api._error(f"unexpected answer to rules: group {server_text(group['name'])}")
    return groups


def _install_hint(plan: ServicePlan) -> str:
    return (
        f"install {naming.values_file(plan.stem)} (helm upgrade … -f) or "
        f"{naming.manifest_file(plan.stem, 'prometheusrule')} (kubectl apply)"
    )


def check_rules(plan: ServicePlan, api: PrometheusAPI) -> list[Row]:
    """One ``rules`` row per rendered group of ``plan`` (loaded once, identical, healthy) and
    per loaded group of the service the bundle no longer has."""
    rows: list[Row] = []

    def add(subject: str, status: Status, detail: str) -> None:
        rows.append(Row(plan.name, "rules", subject, status, detail))

    prefix = naming.group_name(plan.stem, "")
    try:
        served = _groups(api)
    except PrometheusUnreachable:
        raise
    except ObsgenError as err:
        add(
            prefix + "*",
            Status.WARNING,
            f"cannot list the loaded rules ({err.diagnostics[0].message}); point "
            "--prometheus-url at the server (or ruler) that evaluates them",
        )
        return rows
    loaded: dict[str, list[dict[str, Any]]] = {}
    for group in served:
        if group["name"].startswith(prefix):
            loaded.setdefault(group["name"], []).append(group)
    rendered = rule_groups(plan)
    missing = [g["name"] for g in rendered if g["name"] not in loaded]
    if missing and len(missing) == len(rendered):
        add(
            prefix + "*",
            Status.MISSING,
            f"none of the service's {len(rendered)} rule groups is loaded "
            f"({', '.join(missing)}): {_install_hint(plan)}; if it is installed, the "
            "Prometheus' ruleSelector / ruleNamespaceSelector does not select it (declare them "
            "under install: in obsgen.yaml and `obsgen render` names what is missing)",
        )
        return rows
    for group in rendered:
        name = group["name"]
        copies = loaded.get(name, [])
        if not copies:
            add(
                name,
                Status.MISSING,
                f"not loaded: the installed bundle is older; {_install_hint(plan)}",
            )
            continue
        if len(copies) > 1:
            files = ", ".join(sorted(server_text(c.get("file", "?")) for c in copies))
            add(
                name,
                Status.WRONG,
                f"loaded {len(copies)} times ({files}): every alert would be sent twice; "
                "install the bundle one way only (Helm values or manifests)",
            )
            continue
        copy = copies[0]
        interval = parse_duration_ms(group["interval"]) if "interval" in group else None
        if interval is not None and interval != _seconds_ms(copy.get("interval")):
            add(
                name,
                Status.WRONG,
                f"evaluated every {server_text(copy.get('interval'))}s, rendered every "
                f"{group['interval']}: an old copy is installed; re-install it: "
                f"{_install_hint(plan)}",
            )
            continue
        mine = [_rendered_rule(r) for r in group["rules"]]
        theirs = [_served_rule(r) for r in copy["rules"]]
        errors = [r for r in copy["rules"] if r.get("health") == "err"]
        if rule_digest(mine) != rule_digest(theirs):
            add(
                name,
                Status.WRONG,
                f"differs from the rendered group (loaded {rule_digest(theirs)}, rendered "
                f"{rule_digest(mine)}; {_difference(mine, theirs)}): an old copy is "
                f"installed; re-install it: {_install_hint(plan)}",
            )
        elif errors:
            first = errors[0]
            add(
                name,
                Status.WRONG,
                f"{len(errors)} rules fail to evaluate, e.g. {server_text(first.get('name'))}: "
                f"{server_text(first.get('lastError', ''))}; check the series and labels it reads",
            )
        else:
            unknown = sum(1 for r in copy["rules"] if r.get("health") == "unknown")
            note = f", {unknown} not evaluated yet" if unknown else ""
            add(name, Status.OK, f"{len(mine)} rules, identical ({rule_digest(mine)}){note}")
    for name in sorted(set(loaded) - {g["name"] for g in rendered}):
        add(
            name,
            Status.WRONG,
            "loaded but no longer rendered (an old copy): its alerts still fire; remove it "
            "by re-installing the bundle",
        )
    return rows


def _retention_ms(api: PrometheusAPI) -> tuple[int | None, str]:
    """(time-based retention in ms or None, what the server said): ``runtimeinfo``'s
    ``storageRetention`` (the effective value, e.g. ``15d``, ``10d or 50GiB``), else the
    ``storage.tsdb.retention.time`` flag."""
    said = ""
    try:
        info = api.get("status/runtimeinfo")
        said = info.get("storageRetention", "") if isinstance(info, dict) else ""
    except PrometheusUnreachable:
        raise
    except ObsgenError:
        pass
    if not isinstance(said, str) or not said:
        try:
            flags = api.get("status/flags")
        except PrometheusUnreachable:
            raise
        except ObsgenError:
            return None, ""
        said = flags.get("storage.tsdb.retention.time", "") if isinstance(flags, dict) else ""
        if not isinstance(said, str) or said in ("", "0s"):
            return None, ""
    for part in said.split(" or "):
        try:
            return parse_duration_ms(part.strip()), said
        except ValueError:
            continue
    return None, said


def check_retention(plan: ServicePlan, api: PrometheusAPI) -> list[Row]:
    """One ``retention`` row: the server keeps the longest SLO window of ``plan``."""
    if not plan.slos:
        return []
    longest = max(plan.slos, key=lambda s: s.window_ms)
    window = format_duration_ms(longest.window_ms)
    kept, said = _retention_ms(api)
    subject = f"slo {longest.name} window {window}"
    if kept is None:
        detail = (
            f"the server keeps data by size only ({server_text(said)}): how many days that is "
            "depends on the load; make sure it covers the window"
            if said
            else "the server does not say its retention (not Prometheus?): make sure it keeps "
            f"{window}"
        )
        return [Row(plan.name, "retention", subject, Status.WARNING, detail)]
    if kept < longest.window_ms:
        return [
            Row(
                plan.name,
                "retention",
                subject,
                Status.WRONG,
                f"the server keeps {format_duration_ms(kept)} (storageRetention {server_text(said)}), "
                f"shorter than the SLO window: the SLI never covers it; set "
                f"--storage.tsdb.retention.time={window} or more (kube-prometheus-stack: "
                "prometheus.prometheusSpec.retention), or shorten the window",
            )
        ]
    return [
        Row(plan.name, "retention", subject, Status.OK, f"server keeps {format_duration_ms(kept)}")
    ]


def external_labels(api: PrometheusAPI) -> dict[str, str]:
    """``global.external_labels`` of the server's loaded configuration
    (``/api/v1/status/config``); empty when it has none or does not say."""
    try:
        data = api.get("status/config")
    except PrometheusUnreachable:
        raise
    except ObsgenError:
        return {}
    text = data.get("yaml") if isinstance(data, dict) else None
    try:
        config = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError:
        return {}
    found = (
        (config or {}).get("global", {}).get("external_labels")
        if isinstance(config, dict)
        else None
    )
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def check_external_labels(
    plan: ServicePlan, labels: Mapping[str, str], api: PrometheusAPI
) -> list[Row]:
    """One ``external labels`` row: ``spec.prometheus.clusterLabel`` is set by the server (an
    external label) or on the service's targets; a server naming its cluster in an external
    label the spec does not declare is a warning."""
    cluster = plan.cluster_label
    shown = ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) or "none"
    if cluster is None:
        named = [k for k in labels if k in ("cluster", "cluster_id", "k8s_cluster")]
        if named:
            return [
                Row(
                    plan.name,
                    "external labels",
                    named[0],
                    Status.WARNING,
                    f"the server adds external label {named[0]}={server_text(labels[named[0]])} but "
                    f"the spec has no clusterLabel: set spec.prometheus.clusterLabel: {named[0]} "
                    "so dashboards and inhibition tell clusters apart",
                )
            ]
        return []
    if cluster in labels:
        return [Row(plan.name, "external labels", cluster, Status.OK, f"external labels: {shown}")]
    on_targets = api.query(f"count({selector('up', (*plan.matchers, Matcher(cluster, '!=', '')))})")
    if on_targets:
        return [Row(plan.name, "external labels", cluster, Status.OK, "a label of the targets")]
    return [
        Row(
            plan.name,
            "external labels",
            cluster,
            Status.WRONG,
            f"spec.prometheus.clusterLabel is {cluster!r} but neither the server's external "
            f"labels ({server_text(shown)}) nor the service's targets carry it: set "
            f"global.external_labels.{cluster} (kube-prometheus-stack: "
            "prometheus.prometheusSpec.externalLabels)",
        )
    ]


class AlertmanagerAPI(PrometheusAPI):
    """A bounded client of Alertmanager's ``/api/v2`` (limits as :class:`PrometheusAPI`)."""

    server = "Alertmanager"
    url_option = "--alertmanager-url"

    def config_text(self) -> str:
        """The running configuration (``/api/v2/status`` ``config.original``).

        Raises:
            PrometheusUnreachable: the server cannot be reached (exit code 2).
            ObsgenError: the answer is not Alertmanager's status (exit code 2).
        """
        url = f"{self.url}/api/v2/status"
        status, body = self.get_json(url, {})
        config = body.get("config") if isinstance(body, dict) else None
        text = config.get("original") if isinstance(config, dict) else None
        if status != 200 or not isinstance(text, str):
            raise self._error(f"{url} answered HTTP {status} without config.original")
        return text


def check_routing(
    plan: ServicePlan, config_text: str, extra: Mapping[str, str], source: str
) -> list[Row]:
    """One ``routing`` row per distinct alert of ``plan``: with the Prometheus' external labels
    ``extra``, it reaches the team's receiver (or the operator's ``<ns>/<object>/<name>`` of
    it) in the running configuration ``config_text``, and that receiver delivers somewhere.

    Raises:
        ObsgenError: amtool is missing, or the configuration is not YAML (exit code 2).
    """
    try:
        config = yaml.safe_load(config_text)
    except yaml.YAMLError as err:
        raise ObsgenError([Diagnostic(source, "config.original", f"not YAML: {err}")]) from None
    receivers = {
        r.get("name"): r for r in (config or {}).get("receivers") or [] if isinstance(r, dict)
    }
    cases = [
        ({**extra, **labels}, receiver_for(plan.team, labels[naming.SEVERITY]))
        for labels in alert_labels(plan)
    ]
    chosen = amtool.distinct_cases(cases, amtool.routing_labels(config))
    rows = []
    with tempfile.TemporaryDirectory(prefix="obsgen-verify-") as folder:
        path = Path(folder) / "alertmanager.yaml"
        path.write_text(config_text, encoding="utf-8")
        for index in chosen:
            labels, expected = cases[index]
            reached = amtool.routes(path, labels)
            subject = f"{labels['alertname']} {naming.SEVERITY}={labels[naming.SEVERITY]}"
            ok = [r for r in reached if r == expected or r.endswith("/" + expected)]
            if not ok:
                rows.append(
                    Row(
                        plan.name,
                        "routing",
                        subject,
                        Status.WRONG,
                        f"reaches {', '.join(map(server_text, reached)) or 'nothing'}, not {expected}: "
                        "install alertmanager/values-kube-prometheus-stack.yaml or the service's "
                        "alertmanagerconfig.yaml, and check the routes above it",
                    )
                )
                continue
            entry = receivers.get(ok[0]) or {}
            if not any(k.endswith("_configs") and entry[k] for k in entry):
                rows.append(
                    Row(
                        plan.name,
                        "routing",
                        subject,
                        Status.WRONG,
                        f"reaches {server_text(ok[0])}, which delivers nowhere (no integration): "
                        "add the team to alertmanager/receivers.yaml and re-install",
                    )
                )
                continue
            rows.append(
                Row(plan.name, "routing", subject, Status.OK, f"reaches {server_text(ok[0])}")
            )
    return rows
