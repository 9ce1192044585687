"""Subprocess wrapper around the real ``amtool`` binary (Alertmanager's CLI).

amtool is found through ``$AMTOOL``, then ``PATH``. :func:`check_config` validates
configuration files in one ``amtool check-config`` call; :func:`test_routes` runs one
``amtool config routes test`` per case (amtool tests one label set per call), spread over the
machine's cores. Each takes Alertmanager feature flags (``utf8-strict-mode``: amtool 0.27+).
Failures become :class:`~generator.errors.Diagnostic` values.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from generator.errors import Diagnostic, ObsgenError, capped_list
from generator.promql import Matcher

INSTALL_HINT = (
    "amtool not found: set $AMTOOL to its path or install it (Debian/Ubuntu: "
    "`sudo apt-get install -y prometheus-alertmanager`; `make render` does this when run as root)"
)
TIMEOUT_S = 60


def find_amtool() -> str:
    """Return the amtool executable to run.

    Raises:
        ObsgenError: amtool is neither at ``$AMTOOL`` nor on ``PATH`` (the message says how
            to install it).
    """
    configured = os.environ.get("AMTOOL")
    if configured:
        if Path(configured).is_file() and os.access(configured, os.X_OK):
            return configured
        raise ObsgenError([Diagnostic("$AMTOOL", "", f"{configured!r} is not an executable file")])
    found = shutil.which("amtool")
    if found is None:
        raise ObsgenError([Diagnostic("amtool", "", INSTALL_HINT)])
    return found


def _run(args: Sequence[str], features: Sequence[str] = ()) -> tuple[int, str]:
    """Run amtool with ``args``, and ``--enable-feature`` for ``features`` when given (how
    amtool parses matchers: ``utf8-strict-mode`` reads them with Alertmanager's UTF-8 parser
    alone, as an Alertmanager started with it does; by default it falls back to the classic
    parser). Returns the exit code and the output."""
    flags = [f"--enable-feature={','.join(features)}"] if features else []
    try:
        proc = subprocess.run(
            [find_amtool(), *flags, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ObsgenError(
            [Diagnostic("amtool", "", f"`amtool {args[0]}` did not finish within {TIMEOUT_S} s")],
            exit_code=1,
        ) from None
    # Debian's amtool has a default --alertmanager.url, so every --config.file call warns.
    lines = [line for line in proc.stdout.splitlines() if "flag overrides the" not in line]
    return proc.returncode, "\n".join(lines)


def check_config(
    files: Sequence[Path], display_names: Sequence[str], features: Sequence[str] = ()
) -> list[Diagnostic]:
    """Run ``amtool check-config`` once over ``files``; one diagnostic per failing file.

    Args:
        files: Alertmanager configuration files.
        display_names: the name to report for each file (same length as ``files``).
        features: Alertmanager feature flags to parse with (``utf8-strict-mode``).

    Raises:
        ObsgenError: amtool is missing or hangs.
    """
    if not files:
        return []
    code, output = _run(["check-config", *map(str, files)], features)
    if code == 0:
        return []
    problems = []
    blocks = output.split("Checking '")
    for path, name in zip(files, display_names, strict=True):
        for block in blocks:
            if block.startswith(f"{path}'") and "FAILED" in block:
                message = block.split("FAILED:", 1)[-1].strip()
                problems.append(Diagnostic(name, "", f"amtool check-config: {message}"))
    return problems or [Diagnostic(capped_list(display_names), "", output.strip())]


# A matcher string of a route (``team="ml-platform"``, ``severity=~"critical|page"``): its label.
_MATCHER_LABEL = re.compile(r'^\s*"?((?:[^"\\=!~\s]|\\.)+)"?\s*(?:=~|!~|!=|=)')


def routing_labels(config: Any) -> frozenset[str] | None:
    """The labels that the routing tree of an Alertmanager ``config`` (parsed YAML) reads: those
    of every route's ``matchers``, ``match`` and ``match_re``. Which receivers an alert reaches
    depends on these labels' values alone. None when the tree holds something this does not
    read (then every label counts).
    """
    found: set[str] = set()

    def visit(route: Any) -> bool:
        if not isinstance(route, dict):
            return False
        for matcher in route.get("matchers") or []:
            label = _MATCHER_LABEL.match(matcher) if isinstance(matcher, str) else None
            if label is None:
                return False
            found.add(label.group(1))
        for key in ("match", "match_re"):
            if not isinstance(route.get(key) or {}, dict):
                return False
            found.update(str(label) for label in route.get(key) or {})
        return all(visit(child) for child in route.get("routes") or [])

    if not isinstance(config, dict) or not visit(config.get("route")):
        return None
    return frozenset(found)


def distinct_cases(
    cases: Sequence[tuple[Mapping[str, str], str]], labels: frozenset[str] | None
) -> list[int]:
    """Indices of the first of each group of ``(labels, receiver)`` cases that agree on the
    receiver and on the values of ``labels`` (:func:`routing_labels`; None: all labels): the
    routing tree cannot tell the others of a group apart, so one test stands for them."""
    seen: set[tuple[object, ...]] = set()
    chosen = []
    for index, (case_labels, receiver) in enumerate(cases):
        read = case_labels if labels is None else {k: case_labels.get(k, "") for k in labels}
        key = (receiver, *sorted(read.items()))
        if key not in seen:
            seen.add(key)
            chosen.append(index)
    return chosen


def test_routes(
    config_file: Path,
    display_name: str,
    cases: Sequence[tuple[Mapping[str, str], str]],
    indices: Sequence[int] | None = None,
    features: Sequence[str] = (),
) -> list[Diagnostic]:
    """Check that each case's labels reach exactly its receiver, with
    ``amtool config routes test --verify.receivers``.

    Args:
        config_file: the Alertmanager configuration.
        display_name: how to name the route-test file in diagnostics.
        cases: ``(labels, receiver)`` pairs; the diagnostic path is ``cases[<index>]``.
        indices: each case's index in the route-test file (default: its position).
        features: Alertmanager feature flags to parse the configuration and the labels with
            (``utf8-strict-mode``).

    Returns:
        One diagnostic per failing case, naming the receivers amtool resolved.

    Raises:
        ObsgenError: amtool is missing or hangs.
    """

    def run(case: tuple[Mapping[str, str], str]) -> tuple[int, str]:
        labels, receiver = case
        # Quoted label=value matchers: values may hold spaces or commas (team names).
        args = [Matcher(k, "=", v).render() for k, v in sorted(labels.items())]
        return _run(
            [
                "config",
                "routes",
                "test",
                f"--config.file={config_file}",
                f"--verify.receivers={receiver}",
                *args,
            ],
            features,
        )

    workers = max(1, min(os.cpu_count() or 1, len(cases)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(run, cases))
    problems = []
    where = list(indices) if indices is not None else list(range(len(cases)))
    for i, (labels, receiver), (code, output) in zip(where, cases, results, strict=True):
        if code != 0:
            resolved = output.strip().splitlines()[0] if output.strip() else "nothing"
            problems.append(
                Diagnostic(
                    display_name,
                    f"cases[{i}]",
                    f"{labels.get('alertname', 'alert')} {dict(labels)} reaches {resolved}, "
                    f"expected {receiver} (amtool config routes test)",
                )
            )
    return problems


test_routes.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


def routes(config_file: Path, labels: Mapping[str, str], features: Sequence[str] = ()) -> list[str]:
    """The receivers an alert of ``labels`` reaches in the Alertmanager configuration
    ``config_file`` (``amtool config routes test``, in order), parsed with the Alertmanager
    feature flags ``features`` (``utf8-strict-mode``).

    Raises:
        ObsgenError: amtool is missing or hangs, or refuses the configuration.
    """
    args = [Matcher(k, "=", v).render() for k, v in sorted(labels.items())]
    code, output = _run(
        ["config", "routes", "test", f"--config.file={config_file}", *args], features
    )
    text = output.strip()
    if code != 0 or not text:
        raise ObsgenError([Diagnostic(str(config_file), "", f"amtool config routes test: {text}")])
    return [name.strip() for name in text.splitlines()[-1].split(",") if name.strip()]
