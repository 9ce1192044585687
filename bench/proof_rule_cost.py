"""What each rule costs one promtool test group (is there a costly rule to rewrite?).

For one test group of a service's committed test file (default: o1-preview's 2-hour healthy
case, the first group of ``rules/o1-preview.test.yaml``), each rule's share of promtool's CPU
over that group's input series and evaluation steps: the rule with every recording rule it
reads, directly or not, minus those recording rules alone (best of ``--runs`` each). Also the
group with every rule and with none. Every group of the rule file keeps its settings; the
group's assertions are replaced by one that never fires at its last ``eval_time``, so promtool
evaluates every step and checks nothing. Go's collector is held back as ``obsgen render`` holds
it (:data:`generator.promtool.TEST_GC_ENV`). Prints a markdown table and the command.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, command_line, machine, machine_speed, markdown_table

sys.path.insert(0, str(REPO))
from generator import promtool


def _reads(rules: list[dict[str, Any]]) -> dict[int, set[int]]:
    """For each rule (by index), the recording rules its expression names."""
    named = {
        i: re.compile(r"(?<![\w:])" + re.escape(r["record"]) + r"(?![\w:])")
        for i, r in enumerate(rules)
        if "record" in r
    }
    return {
        i: {j for j, pattern in named.items() if j != i and pattern.search(rule["expr"])}
        for i, rule in enumerate(rules)
    }


def _closure(index: int, reads: dict[int, set[int]]) -> set[int]:
    seen: set[int] = set()
    stack = [index]
    while stack:
        i = stack.pop()
        if i not in seen:
            seen.add(i)
            stack.extend(reads[i])
    return seen


def _last_eval_time(group: dict[str, Any]) -> str:
    def seconds(text: str) -> int:
        units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
        return int(sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|[smhdwy])", text)))

    times = [
        a["eval_time"]
        for key in ("alert_rule_test", "promql_expr_test")
        for a in group.get(key, [])
    ]
    return max(times, key=seconds)


class Case:
    """One test group run against subsets of one rule file, in a folder of its own."""

    def __init__(self, folder: Path, rule_file: Path, test_file: Path, group: int) -> None:
        self.folder = folder
        self.groups = yaml.safe_load(rule_file.read_text(encoding="utf-8"))["groups"]
        tests = yaml.safe_load(test_file.read_text(encoding="utf-8"))
        chosen = tests["tests"][group]
        self.name = chosen.get("name", f"group {group}")
        self.test = {
            "rule_files": ["subset.rules.yaml"],
            "evaluation_interval": tests.get("evaluation_interval", "1m"),
            "tests": [
                {
                    "interval": chosen.get("interval", "1m"),
                    "input_series": chosen.get("input_series", []),
                    "alert_rule_test": [
                        {"eval_time": _last_eval_time(chosen), "alertname": "NoSuchAlertAtAll"}
                    ],
                }
            ],
        }
        self.rules = [(g, r) for g in self.groups for r in g["rules"]]
        (folder / "case.test.yaml").write_text(yaml.safe_dump(self.test), encoding="utf-8")

    def cpu(self, kept: set[int], runs: int) -> float:
        """Best CPU seconds of promtool over the rules ``kept`` (indexes into :attr:`rules`)."""
        groups = []
        for group in self.groups:
            rules = [r for i, (g, r) in enumerate(self.rules) if g is group and i in kept]
            if rules:
                groups.append({**{k: v for k, v in group.items() if k != "rules"}, "rules": rules})
        if not groups:  # promtool wants a rule: one that reads nothing
            groups = [{"name": "none", "rules": [{"record": "bench:none:one", "expr": "1"}]}]
        (self.folder / "subset.rules.yaml").write_text(
            yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8"
        )
        env = {**os.environ, **promtool.TEST_GC_ENV}
        best = float("inf")
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run(
                [promtool.find_promtool(), "test", "rules", "case.test.yaml"],
                cwd=self.folder,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0:
                raise RuntimeError(f"promtool failed:\n{done.stdout}{done.stderr}")
            spent = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            best = min(best, spent)
        return best


def main(argv: list[str] | None = None) -> int:
    """Measure and print each rule's share of one test group's promtool CPU."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", default="o1-preview")
    parser.add_argument("--test-file", default=None, help="default rules/<service>.test.yaml")
    parser.add_argument("--group", type=int, default=0, help="index of the test group")
    parser.add_argument("--runs", type=int, default=2, help="best of this many per subset")
    args = parser.parse_args(argv)
    rule_file = REPO / "rules" / f"{args.service}.rules.yaml"
    test_file = Path(args.test_file or REPO / "rules" / f"{args.service}.test.yaml")
    with tempfile.TemporaryDirectory(prefix="obsgen-bench-rule-cost-") as tmp:
        case = Case(Path(tmp), rule_file, test_file, args.group)
        every = set(range(len(case.rules)))
        reads = _reads([r for _, r in case.rules])
        none, whole = case.cpu(set(), args.runs), case.cpu(every, args.runs)
        rows = []
        for i, (group, rule) in enumerate(case.rules):
            with_it = _closure(i, reads)
            share = case.cpu(with_it, args.runs) - case.cpu(with_it - {i}, args.runs)
            labels = rule.get("labels", {})
            detail = ", ".join(
                f"{k}={labels[k]}" for k in ("slo", "signal", "quantile", "severity") if k in labels
            )
            rows.append(
                (group["name"], rule.get("record") or rule.get("alert"), detail, f"{share:.3f}")
            )
    print(f"# One test group's promtool CPU, rule by rule\n\nMachine: {machine()}")
    print(f"Machine speed: {machine_speed()}\n")
    print(f"{args.service}, test group {args.group}: {case.name}\n")
    print(
        f"Every rule: {whole:.2f} s CPU; no rule: {none:.2f} s; the shares below sum to "
        f"{sum(float(r[3]) for r in rows):.2f} s.\n"
    )
    print(markdown_table(["rule group", "rule", "labels", "CPU share (s)"], rows))
    print(f"\nCommand: `{command_line()}`")
    return 0


if __name__ == "__main__":
    sys.exit(main())
