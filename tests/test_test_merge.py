"""Generated promtool cases share an input block only when no asserted alert reads what differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.builders.rulefile import rule_groups
from generator.cases.rule_tests import rule_test_files
from generator.cases.test_merge import merge_cases, reads
from generator.render import find_specs, load_plans

REPO = Path(__file__).resolve().parent.parent

RULES = [
    {
        "name": "g",
        "rules": [
            {"record": "job:q:sum", "expr": "sum(queue_depth)"},
            {"alert": "QueueHigh", "expr": "job:q:sum > 10"},
            {"alert": "HotGPU", "expr": "max(gpu_temperature_celsius) > 90"},
            {"alert": "Echo", "expr": 'ALERTS{alertname="HotGPU"}'},
        ],
    }
]


def _case(name: str, alert: str, series: dict[str, str], at: str = "20m") -> dict[str, Any]:
    return {
        "name": name,
        "interval": "1m",
        "input_series": [{"series": k, "values": v} for k, v in series.items()],
        "alert_rule_test": [{"eval_time": at, "alertname": alert, "exp_alerts": []}],
    }


def test_an_alert_reads_through_recording_rules() -> None:
    found = reads(RULES)
    assert "queue_depth" in found["QueueHigh"] and "job:q:sum" in found["QueueHigh"]
    assert "queue_depth" not in found["HotGPU"]


def test_cases_differing_only_in_what_the_other_does_not_read_share_a_block() -> None:
    queue = _case(
        "queue full", "QueueHigh", {"queue_depth": "50x30", "gpu_temperature_celsius": "60x30"}
    )
    hot = _case(
        "GPU hot", "HotGPU", {"queue_depth": "0x30", "gpu_temperature_celsius": "95x60"}, "50m"
    )
    (block,) = merge_cases([queue, hot], reads(RULES))
    assert block["name"] == "GPU hot | queue full"  # the longest case first
    assert {s["series"]: s["values"] for s in block["input_series"]} == {
        "queue_depth": "50x30",
        "gpu_temperature_celsius": "95x60",
    }
    assert [t["alertname"] for t in block["alert_rule_test"]] == ["HotGPU", "QueueHigh"]


def test_a_block_keeps_only_the_series_its_alerts_read() -> None:
    queue = _case(
        "queue full", "QueueHigh", {"queue_depth": "50x30", "gpu_temperature_celsius": "60x30"}
    )
    (block,) = merge_cases([queue], reads(RULES))
    assert block["input_series"] == [{"series": "queue_depth", "values": "50x30"}]
    echo = _case("echo", "Echo", {"gpu_temperature_celsius": "95x30", "queue_depth": "0x30"})
    (kept,) = merge_cases([echo], reads(RULES))
    assert kept == echo  # reads ALERTS: every series may matter


def test_cases_that_read_the_same_changed_series_keep_their_own_blocks() -> None:
    low = _case("queue low", "QueueHigh", {"queue_depth": "0x30"})
    high = _case("queue high", "QueueHigh", {"queue_depth": "50x30"})
    assert len(merge_cases([low, high], reads(RULES))) == 2


def test_a_series_one_case_lacks_is_added_only_when_that_case_does_not_read_it() -> None:
    absent = _case("no queue series", "QueueHigh", {"gpu_temperature_celsius": "60x30"})
    present = _case(
        "GPU hot", "HotGPU", {"queue_depth": "0x30", "gpu_temperature_celsius": "60x30"}
    )
    assert len(merge_cases([absent, present], reads(RULES))) == 2


def test_a_longer_run_of_the_same_values_is_the_same_input() -> None:
    short = _case("a", "QueueHigh", {"queue_depth": "0+1x20"})
    long = _case("b", "QueueHigh", {"queue_depth": "0+1x40"}, "40m")
    (block,) = merge_cases([short, long], reads(RULES))
    assert block["input_series"] == [{"series": "queue_depth", "values": "0+1x40"}]
    different = _case("c", "QueueHigh", {"queue_depth": "0+2x40"})
    assert len(merge_cases([short, different], reads(RULES))) == 2


def test_an_alert_reading_other_alerts_keeps_its_case_alone() -> None:
    echo = _case("echo", "Echo", {"gpu_temperature_celsius": "95x30"})
    queue = _case(
        "queue", "QueueHigh", {"queue_depth": "50x30", "gpu_temperature_celsius": "95x30"}
    )
    assert len(merge_cases([echo, queue], reads(RULES))) == 2


def _assertions(groups: list[dict[str, Any]]) -> set[str]:
    # A set, not a count: two cases asserting the same thing at the same time on one merged
    # input block are one assertion (merge_cases keeps it once).
    return {repr(t) for g in groups for t in g["alert_rule_test"]}


def test_merging_the_generated_cases_keeps_every_assertion_and_saves_steps() -> None:
    for plan in load_plans(find_specs([], REPO), REPO):
        alert_reads = reads(rule_groups(plan))
        for doc in rule_test_files(plan).values():
            merged = merge_cases(doc["tests"], alert_reads)
            assert _assertions(merged) == _assertions(doc["tests"]), plan.name
            assert len(merged) <= len(doc["tests"])
            for group in merged:
                read = set().union(*(alert_reads[t["alertname"]] for t in group["alert_rule_test"]))
                unread = [s for s in group["input_series"] if s["series"].split("{")[0] not in read]
                assert not unread, (plan.name, group["name"], unread)
        main = next(iter(rule_test_files(plan).values()))["tests"]
        assert len(merge_cases(main, alert_reads)) < len(main), plan.name
