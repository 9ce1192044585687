"""The ``ModelService`` spec (``apiVersion: obsgen/v1alpha1``): strict pydantic models and loading.

This module knows nothing about rules or dashboards. :func:`load_spec` reads one YAML file,
checks ``apiVersion``/``kind`` first (so a wrong file gets one clear line), then validates
every field strictly (unknown keys are errors), each problem a :class:`~generator.errors.Diagnostic`
with the field path as written (``spec.alerts.queueDepth.max``). Defaults that depend on the
server preset are decided by :func:`generator.plan.resolve`, not here. The sections' models live
in ``spec_types`` (field types), ``spec_metrics``, ``spec_slos``, ``spec_alerts`` and
``spec_workload``; this module holds the top-level models and the loading.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from generator import kube_names, naming, near_keys, urls
from generator.errors import Diagnostic, ObsgenError, printable
from generator.families import FAMILIES
from generator.spec_alerts import WindowedAlert, alerts_model
from generator.spec_metrics import FailureDefinition, MetricOverride, Metrics, PrometheusSettings
from generator.spec_slos import GOODPUT_SIGNALS, SLO, BurnRateTier
from generator.spec_types import (
    API_VERSION,
    INDICATOR_ALIASES,
    KEYED_ERROR,
    KIND,
    MAX_BUCKETS,
    MAX_DIAGNOSTICS,
    MAX_GROUP_BY,
    MAX_LABEL_VALUE_CHARS,
    MAX_MATCHERS,
    MAX_SHOWN,
    MAX_SLOS,
    MAX_TIERS,
    OWN_LABELS,
    TEAM_ALLOWED,
    TEAM_TEXT,
    DnsLabel,
    DurationMs,
    LabelName,
    Matchers,
    Server,
    StrictModel,
    _duration,
    _gap_duration,
    _pattern,
    _shown,
    keyed_error,
)
from generator.spec_workload import (
    GPU,
    OTHER_MODELS,
    Activator,
    Autoscaling,
    Deployment,
    Models,
    Roles,
    ScaleToZero,
)
from generator.versions import check_release
from generator.yamlio import BoundedLoader, InputLimitExceeded, InputLimits, yaml_problem

# Moved to the modules above and still importable from here.
__all__ = [
    "GOODPUT_SIGNALS",
    "INDICATOR_ALIASES",
    "MAX_BUCKETS",
    "MAX_GROUP_BY",
    "MAX_LABEL_VALUE_CHARS",
    "MAX_MATCHERS",
    "MAX_SLOS",
    "MAX_TIERS",
    "OTHER_MODELS",
    "SLO",
    "TEAM_ALLOWED",
    "TEAM_TEXT",
    "Activator",
    "Alerts",
    "Autoscaling",
    "BurnRateTier",
    "DnsLabel",
    "DurationMs",
    "FailureDefinition",
    "LabelName",
    "MetricOverride",
    "Metrics",
    "Models",
    "PrometheusSettings",
    "Roles",
    "StrictModel",
    "WindowedAlert",
    "_duration",
    "_gap_duration",
]


# ``spec.alerts``: one entry per registered family, each family's model declared in its module.
if TYPE_CHECKING:
    Alerts = StrictModel
else:
    Alerts = alerts_model(FAMILIES, __name__)


class Metadata(StrictModel):
    """``metadata``: who owns the service and where its links point."""

    name: DnsLabel
    team: Annotated[
        str, Field(max_length=63), _pattern(TEAM_TEXT, f"a team name; allowed: {TEAM_ALLOWED}")
    ]
    runbook_base_url: (
        Annotated[str, AfterValidator(urls.checked("https://git.example.com/runbooks"))] | None
    ) = None
    grafana_url: (
        Annotated[str, AfterValidator(urls.checked("https://grafana.example.com"))] | None
    ) = None


# groupBy labels that cannot work, and why.
GROUP_BY_RESERVED = {
    **{label: "obsgen sets it on its own series and alerts" for label in OWN_LABELS},
    "le": "it is the histogram bucket label; grouping by it splits every series per bucket",
    "quantile": "it is the summary quantile label; grouping by it mixes quantiles",
    "service": "obsgen sets it on every recorded series",
    "slo": "obsgen sets it on every SLO series",
    naming.EVENTS: "obsgen's SLO event increments use it for bad and total",
    "indicator": "obsgen sets it on every latency series",
    "namespace": "every aggregation keeps it already",
}


def _version_text(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(
            f'write the release in quotes, e.g. serverVersion: "{value}"; YAML reads an '
            "unquoted version as a number (0.10 becomes 0.1)"
        )
    return value


class ServiceSpec(StrictModel):
    """``spec``: the service's server preset, selector, metrics, SLOs and alerts.

    ``serverVersion`` is the release the pods run, as the server publishes it (PEP 440 for
    vLLM/TGI, ``2.49.0`` or an NGC container tag for Triton; see :mod:`generator.versions`);
    ``serverVariant`` the runtime variant (vLLM engine ``v1`` or ``v0``).
    """

    server: Server
    server_version: (
        Annotated[
            str,
            Field(max_length=MAX_SHOWN),
            BeforeValidator(_version_text, json_schema_input_type=str),
        ]
        | None
    ) = None
    server_variant: Literal["v1", "v0"] | None = None
    selector: Matchers
    group_by: Annotated[list[LabelName], Field(max_length=MAX_GROUP_BY)] = []
    prometheus: PrometheusSettings = PrometheusSettings()
    metrics: Metrics = Metrics()
    failure: FailureDefinition = FailureDefinition()
    slos: Annotated[list[SLO], Field(max_length=MAX_SLOS)] = []
    alerts: Alerts = Alerts()
    gpu: GPU = GPU()
    deployment: Deployment
    scale_to_zero: ScaleToZero = ScaleToZero()
    autoscaling: Autoscaling | None = None
    roles: Roles | None = None  # generator.roles
    models: Models | None = None  # generator.builders.model_slo_rules

    @field_validator("server_version")
    @classmethod
    def _known_release(cls, value: str | None, info: ValidationInfo) -> str | None:
        server = info.data.get("server")
        if value is not None and server is not None:
            try:
                check_release(server, value)
            except ValueError as err:
                raise ValueError(f"{_shown(value)} is not a release string: {err}") from None
        return value

    @field_validator("selector")
    @classmethod
    def _non_empty(cls, selector: dict[str, str]) -> dict[str, str]:
        if not selector:
            raise ValueError(
                "expected at least one label matcher, e.g. {namespace: ai-inference, job: my-model}"
            )
        namespace = selector.get("namespace")
        why = None if namespace is None else kube_names.dns1123_label(namespace)
        if namespace is not None and why is not None:
            # It is the namespace of every manifest, PodMonitor selector and kubectl command.
            raise keyed_error(
                "namespace",
                f"{_shown(namespace)} is not a Kubernetes namespace ({why}); expected "
                f"{kube_names.LABEL_EXPECTED}",
            )
        return selector

    @field_validator("group_by")
    @classmethod
    def _usable_group_by(cls, group_by: list[str], info: ValidationInfo) -> list[str]:
        selector = info.data.get("selector") or {}
        seen: set[str] = set()
        for label in group_by:
            why = GROUP_BY_RESERVED.get(label)
            if why is None and label in selector:
                why = "the selector fixes its value, so there is only one group"
            if why is None and label in seen:
                why = "it is listed twice"
            if why is not None:
                raise ValueError(f"cannot group by {label!r}: {why}")
            seen.add(label)
        return group_by

    @field_validator("slos")
    @classmethod
    def _unique_names(cls, slos: list[SLO]) -> list[SLO]:
        seen: set[str] = set()
        for slo in slos:
            if slo.name in seen:
                raise ValueError(f"duplicate SLO name {slo.name!r}; each SLO needs its own name")
            seen.add(slo.name)
        return slos


class ModelServiceSpec(StrictModel):
    """A whole spec file: ``apiVersion``, ``kind``, ``metadata``, ``spec``."""

    api_version: Literal["obsgen/v1alpha1"]
    kind: Literal["ModelService"]
    metadata: Metadata
    spec: ServiceSpec


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part.startswith(("function-", "constrained-", "literal[")):
            continue
        else:
            part = part if len(part) <= MAX_SHOWN else part[: MAX_SHOWN - 1] + "…"
            path += f".{part}" if path else part
    return path


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown field; check the spelling (keys are camelCase)"
    if kind == "missing":
        return "required field is missing"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"expected a mapping (key: value pairs) (got {_shown(error.get('input'))})"
    if kind == "list_type":
        return f"expected a list (got {_shown(error.get('input'))})"
    text = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        text = text.removeprefix(prefix)
    if kind.endswith("_type") or kind.startswith(("literal_", "greater", "less", "too_", "finite")):
        text += f" (got {_shown(error.get('input'))})"
    return text


def _model_loc(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    """``loc`` without pydantic's validator steps (``function-after[...]``), as the walk of
    :func:`generator.near_keys.known_keys` reads it."""
    return tuple(
        p
        for p in loc
        if not (isinstance(p, str) and p.startswith(("function-", "constrained-", "literal[")))
    )


def validation_diagnostics(
    file: str, err: ValidationError, model: type[BaseModel] | None = None
) -> list[Diagnostic]:
    """Turn a pydantic error into one diagnostic per problem, with the user's field path;
    beyond :data:`MAX_DIAGNOSTICS` one last line counts the rest. With ``model`` (the one
    validated), an unknown key gets the near miss among the keys accepted there
    (:func:`generator.near_keys.suggestion`)."""
    diagnostics = []
    errors = err.errors()
    for error in errors[:MAX_DIAGNOSTICS]:
        loc = tuple(
            p
            for p in error["loc"]
            if not (isinstance(p, str) and "[" in p and p.startswith(("function", "constrained")))
        )
        if error["type"] == KEYED_ERROR:
            loc = (*loc, str(error["ctx"]["key"]))
        message = _message(error)
        if error["type"] == "extra_forbidden":
            message += near_keys.suggestion(model, _model_loc(loc))
        elif error["type"] == "literal_error":
            expected = str(error.get("ctx", {}).get("expected", ""))
            message += near_keys.value_suggestion(error.get("input"), expected)
        elif error["type"] in ("float_type", "int_type") and near_keys.is_number_text(
            error.get("input")
        ):
            message += "; write the number without quotes"
        diagnostics.append(Diagnostic(file, _field_path(loc), message))
    if len(errors) > MAX_DIAGNOSTICS:
        more = len(errors) - MAX_DIAGNOSTICS
        diagnostics.append(Diagnostic(file, "", f"… and {more} more problems not listed"))
    return diagnostics


def parse_spec(data: Any, file: str) -> ModelServiceSpec:
    """Validate already-parsed YAML data as a spec.

    Raises:
        ObsgenError: one diagnostic per problem (exit code 2).
    """
    if not isinstance(data, dict):
        raise ObsgenError(
            [Diagnostic(file, "", "expected a YAML mapping with apiVersion, kind, metadata, spec")]
        )
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        got = f"apiVersion={_shown(data.get('apiVersion'))}, kind={_shown(data.get('kind'))}"
        raise ObsgenError(
            [
                Diagnostic(
                    file,
                    "",
                    f"not an obsgen spec ({got}); expected apiVersion: {API_VERSION}, kind: {KIND}",
                )
            ]
        )
    try:
        return ModelServiceSpec.model_validate(data)
    except ValidationError as err:
        raise ObsgenError(validation_diagnostics(file, err, ModelServiceSpec)) from None


# Bounds on a spec file as YAML (docs/limits.md): a real spec is a few KB, 6 levels deep.
SPEC_LIMITS = InputLimits()


class SpecLoader(BoundedLoader):
    """The YAML loader of spec files: :class:`~generator.yamlio.BoundedLoader` with
    :data:`SPEC_LIMITS`."""

    limits = SPEC_LIMITS


def parse_yaml(text: str, file: str, loader: type[yaml.SafeLoader] = SpecLoader) -> Any:
    """Parse one YAML document with :class:`SpecLoader` (or ``loader``: a
    :class:`~generator.yamlio.BoundedLoader` or :class:`~generator.yamlio.PureBoundedLoader`
    subclass).

    Raises:
        ObsgenError: invalid YAML (with its line), several documents, duplicate keys, or a
            broken :data:`SPEC_LIMITS` bound (with the field path and line).
    """
    parser: yaml.SafeLoader | None = None
    try:
        parser = loader(text)  # control characters are refused here already
        return parser.get_single_data()
    except yaml.reader.ReaderError as err:
        code = err.character if isinstance(err.character, int) else ord(err.character)
        message = f"invalid YAML: character U+{code:04X} at offset {err.position} is not allowed"
        raise ObsgenError([Diagnostic(file, "", message)]) from None
    except InputLimitExceeded as err:
        raise ObsgenError(
            [Diagnostic(file, err.path, f"{err.message} (line {err.line})")]
        ) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        if getattr(err, "context", None) == "expected a single document in the stream":
            message = "expected one YAML document, found a second one (---); put one spec per file"
        else:
            message = f"invalid YAML: {printable(yaml_problem(err, text))}"
        raise ObsgenError([Diagnostic(file, where, message)]) from None
    finally:
        if parser is not None:
            parser.dispose()


def find_spec_files(paths: Sequence[str], root: Path) -> list[Path]:
    """Spec files named on the command line (files or folders), or ``specs/`` under ``root``.

    A folder contributes its ``*.yaml`` and ``*.yml`` files (not recursive), sorted.

    Raises:
        ObsgenError: a named path does not exist or is neither a regular file nor a folder
            (``/dev/null``, a pipe), or no spec file was found.
    """
    found: list[Path] = []
    for given in paths or [str(root / "specs")]:
        path = Path(given)
        if path.is_dir():
            found.extend(sorted([*path.glob("*.yaml"), *path.glob("*.yml")]))
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise ObsgenError(
                [Diagnostic(given, "", "not a regular file; expected a YAML spec or a folder")]
            )
        else:
            raise ObsgenError([Diagnostic(given, "", "no such file or directory")])
    if not found:
        raise ObsgenError(
            [
                Diagnostic(
                    ", ".join(paths) or "specs/",
                    "",
                    "no spec files found; expected files named *.yaml or *.yml",
                )
            ]
        )
    return found


def load_spec(path: Path, display: str | None = None) -> ModelServiceSpec:
    """Read and validate one spec file.

    Args:
        path: the YAML file.
        display: the name to report in errors (defaults to ``str(path)``).

    Raises:
        ObsgenError: unreadable, not a regular file, not UTF-8, invalid YAML (with line),
            or invalid spec.
    """
    file = display or str(path)
    limit = SPEC_LIMITS.max_bytes
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat of the open file: the
        # file checked is the file read.
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ObsgenError(
                    [Diagnostic(file, "", "not a regular file; expected a YAML spec")]
                )
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise ObsgenError(
                [Diagnostic(file, "", f"larger than {limit} bytes; expected a spec of a few KB")]
            )
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ObsgenError(
            [Diagnostic(file, "", "not a UTF-8 text file; expected a YAML spec")]
        ) from None
    except OSError as err:
        raise ObsgenError([Diagnostic(file, "", f"cannot read: {err.strerror or err}")]) from None
    return parse_spec(parse_yaml(text, file), file)
