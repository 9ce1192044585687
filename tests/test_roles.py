"""``spec.roles``: a disaggregated service (prefill and decode pods, both exporting every
request's counters and histograms) gives the same SLO numbers and alerts as the aggregated
service on the same traffic, because each SLI reads only its owning role (generator.roles).

Proved in the real promtool: the aggregated plan's own generated cases (their expectations
computed from the aggregated plan) are re-labelled as a disaggregated deployment would export
them, the owning role carrying the request's real series and the other role a healthy-looking
copy (prefill pods answer one token and never see decode's failures or slow tails), and run
against the disaggregated plan's rules. The aggregated rules on the same re-labelled traffic
fail those cases: counting both roles dilutes the burn (the regression this guards).
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from generator import naming, roles
from generator.builders.kube import pod_monitors
from generator.builders.rulefile import rule_file
from generator.cases.rule_tests import rule_test_files
from generator.cli import main
from generator.families import target_down
from generator.plan import ServicePlan
from tests.factories import write_spec
from tests.helpers_promtool import promtool_rules
from tests.test_server_reality import plan_of, spec_data

LABEL = "llm_d_ai_role"
SLOS = [
    {"name": "availability", "objective": 99.0, "window": "28d"},
    {"name": "e2e", "indicator": "e2e", "threshold": "20s", "objective": 99.0, "window": "28d"},
    {"name": "ttft", "indicator": "ttft", "threshold": "1s", "objective": 99.0, "window": "28d"},
    {
        "name": "goodput",
        "objective": 99.0,
        "window": "28d",
        "targets": [{"signal": "ttft", "threshold": "1s"}, {"signal": "e2e", "threshold": "20s"}],
    },
]
ROLES = {"prefill": "prefill", "decode": "decode"}
SERIES = re.compile(r"^([^{]+)\{(.*)\}$")
PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


ROUTED = {"prefill": "p", "decode": "d", "router": "r"}


def _plans(spec_roles: dict[str, str] = ROLES) -> tuple[ServicePlan, ServicePlan]:
    aggregated = plan_of(spec_data("vllm", slos=SLOS))
    disaggregated = plan_of(spec_data("vllm", slos=SLOS, roles=spec_roles))
    return aggregated, disaggregated


def _owners(plan: ServicePlan) -> dict[str, str]:
    """Series name -> its owner (generator.roles' OUTCOME, FIRST_TOKEN, DECODE)."""
    out = {plan.requests.name: roles.OUTCOME}
    for source in plan.requests.sources:
        out[source.name] = roles.OUTCOME
    for key, h in plan.histograms.items():
        for name in h.names:
            for suffix in ("_bucket", "_count", "_sum", ""):
                out[name + suffix] = roles.HISTOGRAM_OWNER[key]
    for m in plan.mean_latencies:
        out[m.sum_name] = out[m.count_name] = roles.HISTOGRAM_OWNER[m.key]
    decoded = [plan.prompt_tokens, plan.generation_tokens, *(plan.spec_decode or ())]
    for counter in decoded:
        if counter is not None:
            out[counter.name] = roles.DECODE
    return out


def _split(name_labels: str) -> tuple[str, dict[str, str]]:
    m = SERIES.match(name_labels)
    assert m is not None, name_labels
    return m.group(1), dict(PAIR.findall(m.group(2)))


def _text(name: str, labels: dict[str, str]) -> str:
    return name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def _is_failure(plan: ServicePlan, name: str, labels: dict[str, str]) -> bool:
    matchers = [*plan.requests.error_matchers] if name == plan.requests.name else []
    for source in plan.requests.sources:
        if source.name == name:
            matchers += source.error_matchers
    return any(
        m.label in labels and re.fullmatch(m.value, labels[m.label]) is not None
        for m in matchers
        if m.op == "=~"
    )


def disaggregate(
    plan: ServicePlan, series: list[dict[str, str]], plan_roles: roles.RolePlan
) -> list[dict[str, str]]:
    """``series`` of an aggregated service as prefill and decode pods export them: the owner
    of each signal carries it unchanged; the other role a healthy copy (no failures, every
    request in the lowest bucket: the share it would dilute the SLI with). Other series (up,
    gauges, kube-state-metrics) are left as they are."""
    owners = _owners(plan)
    by_series = {s["series"]: s["values"] for s in series}
    out = []
    for s in series:
        name, labels = _split(s["series"])
        owner = owners.get(name)
        if owner is None:
            out.append(s)
            continue
        owned = plan_roles.value_of(owner)
        out.append({"series": _text(name, {**labels, LABEL: owned}), "values": s["values"]})
        for _, value in plan_roles.named:
            if value == owned:
                continue
            values = s["values"]
            if _is_failure(plan, name, labels):
                values = re.sub(r"\+\d+x", "+0x", re.sub(r"^\d+", "0", values))
            elif name.endswith("_bucket") and "le" in labels:
                values = by_series.get(_text(name, {**labels, "le": "+Inf"}), values)
            out.append({"series": _text(name, {**labels, LABEL: value}), "values": values})
    return out


def _groups(plan: ServicePlan, plan_roles: roles.RolePlan) -> list[dict[str, Any]]:
    """The main promtool test file's groups of ``plan``, re-labelled by :func:`disaggregate`
    (but those whose page text prints a selector)."""
    files = rule_test_files(plan)
    groups = copy.deepcopy(files[naming.rule_tests_file(plan.stem)]["tests"])
    owned = tuple(f"{name}{{" for name in _owners(plan))
    kept = []
    for g in groups:
        g["input_series"] = disaggregate(plan, g["input_series"], plan_roles)
        printed = [
            t["alertname"]
            for t in g["alert_rule_test"]
            for a in t["exp_alerts"]
            if any(n in v for n in owned for v in a.get("exp_annotations", {}).values())
        ]
        # A page text that prints the series selector prints the role's matcher too: those
        # (the input guards') are proved by the disaggregated plan's own generated cases.
        assert set(printed) <= {"ModelSignalMissing"}, printed
        # ModelTargetDown reads up, which a disaggregated service has per role: its role
        # cases are the disaggregated plan's own (test_a_role_without_targets_pages).
        if not printed and "ModelTargetDown" not in g["name"]:
            kept.append(g)
    return kept
    return groups


# Ratio alerts, which the other role's healthy half dilutes (a p99 over all-slow traffic
# stays above its threshold with half the requests fast, so it is not among them).
DILUTED = ("ErrorBudgetBurn", "GoodputBudgetBurn", "ModelErrorRatioHigh")


def _alerts(group: dict[str, Any]) -> set[str]:
    """The alerts a case expects to fire."""
    return {t["alertname"] for t in group["alert_rule_test"] if t["exp_alerts"]}


def _burning(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cases where an SLO or goodput burn or the error ratio fires."""
    return [
        g
        for g in groups
        if (" fires" in g["name"] or "pages" in g["name"])
        and any(t["alertname"] in DILUTED and t["exp_alerts"] for t in g["alert_rule_test"])
    ]


def test_each_sli_reads_its_owning_role() -> None:
    _, plan = _plans()
    by = {m.label: m.value for m in plan.requests.matchers}
    assert by[LABEL] == "decode"
    assert all(
        {m.label: m.value for m in s.matchers}[LABEL] == "decode" for s in plan.requests.sources
    )
    hist = {k: {m.label: m.value for m in h.matchers}[LABEL] for k, h in plan.histograms.items()}
    assert hist["requestDuration"] == "decode"
    assert hist["timeToFirstToken"] == "prefill"
    assert hist["interTokenLatency"] == "decode"
    ttft = next(s for s in plan.slos if s.name == "ttft")
    assert ttft.histogram is not None
    assert {m.label: m.value for m in ttft.histogram.matchers}[LABEL] == "prefill"


def test_router_owns_the_outcome() -> None:
    plan = plan_of(
        spec_data("vllm", slos=SLOS, roles={"prefill": "p", "decode": "d", "router": "r"})
    )
    assert {m.label: m.value for m in plan.requests.matchers}[LABEL] == "r"
    hist = {k: {m.label: m.value for m in h.matchers}[LABEL] for k, h in plan.histograms.items()}
    assert (hist["requestDuration"], hist["timeToFirstToken"], hist["interTokenLatency"]) == (
        "r",
        "p",
        "d",
    )


# In a class: `make test` distributes tests by module and class (--dist loadscope), so these
# two promtool proofs (one to two minutes each) and the module's own (the disaggregated plan's
# cases, as long) can run on different workers.
class TestSameNumbers:
    """The disaggregated rules give the aggregated numbers; the aggregated ones do not."""

    @pytest.mark.parametrize("spec_roles", [ROLES, ROUTED], ids=["prefill-decode", "with-router"])
    def test_disaggregated_gives_the_aggregated_numbers(
        self, spec_roles: dict[str, str], tmp_path: Path
    ) -> None:
        """Every generated case of the aggregated plan (SLO burn tiers, latency and error-ratio
        alerts, healthy and zero-traffic controls) passes on the disaggregated rules with the
        traffic split over two roles; the aggregated rules fail the burn cases on it."""
        aggregated, disaggregated = _plans(spec_roles)
        assert disaggregated.roles is not None
        groups = _groups(aggregated, disaggregated.roles)
        result = promtool_rules(
            "prometheus3", tmp_path, rule_file(disaggregated), groups, timeout=600
        )
        assert result.startswith("PASS"), result[-4000:]
        burning = _burning(groups)
        assert len(burning) >= 3, [g["name"] for g in groups]
        assert any("GoodputBudgetBurn" in str(g["alert_rule_test"]) for g in burning)
        missed = []
        for group in burning:
            # Each alone on the rules without roles, the prefill role's healthy copy counted too.
            if promtool_rules(
                "prometheus3", tmp_path, rule_file(aggregated), [group], timeout=600
            ).startswith("FAIL"):
                missed.append(group)
        # Every burn-rate case (tuned just past its tier) is missed when both roles are counted;
        # an error-ratio case far above its threshold may still fire at half its ratio, but the
        # burn tiers' dilution is the reported bug.
        burns = [g for g in burning if _alerts(g) & {"ErrorBudgetBurn", "GoodputBudgetBurn"}]
        assert len(burns) >= 2
        assert [g["name"] for g in burns if g not in missed] == []


@pytest.mark.parametrize(
    ("roles_value", "field", "words"),
    [
        ({"prefill": "p"}, "spec.roles.decode", "required field is missing"),
        ({"decode": "d"}, "spec.roles", "declare prefill or router"),
        ({"decode": "d", "prefill": "d"}, "spec.roles", "distinct values"),
        ({"decode": "d", "prefill": "p", "label": "bad key!"}, "spec.roles.label", "label key"),
    ],
)
def test_bad_roles_name_the_field(
    roles_value: dict[str, str],
    field: str,
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_spec(tmp_path / "specs", spec_data("vllm", roles=roles_value))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    assert field in err and words in err, err


def test_selector_may_not_fix_the_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = spec_data("vllm", roles=ROLES)
    data["spec"]["selector"][LABEL] = "decode"
    write_spec(tmp_path / "specs", data)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    assert "spec.selector" in capsys.readouterr().err


@pytest.mark.parametrize("spec_roles", [ROLES, ROUTED])
def test_a_role_without_targets_pages(spec_roles: dict[str, str], tmp_path: Path) -> None:
    """Every role up stays quiet; the first role's targets down, or gone, page for it while
    the others are up. The rules without roles miss both pages."""
    plan = plan_of(spec_data("vllm", slos=SLOS, roles=spec_roles))
    assert plan.roles is not None
    names = [f"{n} " for n, _ in plan.roles.named]
    groups = [
        g
        for g in target_down.cases(plan)
        if "every role" in g["name"] or any(f"{n}target" in g["name"] for n in names)
    ]
    outcomes = [bool(t["exp_alerts"]) for g in groups for t in g["alert_rule_test"]]
    assert outcomes == [False, True, True], [g["name"] for g in groups]
    fired = groups[1]["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]
    assert fired["role"] == "prefill" and fired["severity"] == "critical", fired
    result = promtool_rules("prometheus3", tmp_path, rule_file(plan), groups, timeout=600)
    assert result.startswith("PASS"), result[-4000:]
    aggregated = plan_of(spec_data("vllm", slos=SLOS))
    for group in groups[1:]:
        missed = promtool_rules(
            "prometheus3", tmp_path, rule_file(aggregated), [group], timeout=600
        )
        assert missed.startswith("FAIL"), group["name"]


def test_the_pod_monitor_copies_the_role_label() -> None:
    _, plan = _plans()
    (model, *_) = pod_monitors(plan)
    assert model["spec"]["podTargetLabels"] == ["llm-d.ai/role"]
    assert roles.series_label(parse_roles({"decode": "d", "prefill": "p"})) == LABEL


def parse_roles(data: dict[str, str]) -> roles.Roles:
    return roles.Roles.model_validate(data, strict=False)


def test_the_disaggregated_plans_own_cases_pass(tmp_path: Path) -> None:
    """Every generated case of the disaggregated plan (its main test file, role cases
    included) passes: what ``obsgen render`` proves for such a spec."""
    _, plan = _plans()
    groups = rule_test_files(plan)[naming.rule_tests_file(plan.stem)]["tests"]
    assert any("every role" in g["name"] for g in groups)
    result = promtool_rules("prometheus3", tmp_path, rule_file(plan), groups, timeout=600)
    assert result.startswith("PASS"), result[-4000:]


def test_group_by_may_not_name_the_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_spec(tmp_path / "specs", spec_data("vllm", roles=ROLES, groupBy=[LABEL]))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/x.yaml"]) == 2
    err = capsys.readouterr().err
    assert "spec.groupBy" in err and LABEL in err, err
