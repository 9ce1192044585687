"""Compare a scrape of the exporter with ``nvidia-smi`` on a GPU machine (``scripts/gpu-smoke.sh``).

More: docs/exporter.md, "Comparing with nvidia-smi".
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

MIB = 1024 * 1024


@dataclass(frozen=True)
class Check:
    """One nvidia-smi field against one exporter metric.

    Attributes:
        field: the ``--query-gpu`` field (read with ``nounits``).
        metric: the exporter's metric (labels ``uuid``, ``gpu``).
        scale: multiplies nvidia-smi's number into the metric's unit (MiB -> bytes: 2**20).
        abs_tol: allowed difference in the metric's unit.
        rel_tol: allowed difference as a fraction of nvidia-smi's value (0-1); the larger of
            the two tolerances applies.
    """

    field: str
    metric: str
    scale: float
    abs_tol: float
    rel_tol: float = 0.0

    def tolerance(self, reference: float) -> float:
        """The allowed difference for a reference value, in the metric's unit."""
        return max(self.abs_tol, self.rel_tol * abs(reference))


CHECKS: tuple[Check, ...] = (
    Check("memory.total", "gpu_memory_total_bytes", MIB, 1 * MIB),
    Check("memory.used", "gpu_memory_used_bytes", MIB, 64 * MIB, 0.01),
    Check("memory.free", "gpu_memory_free_bytes", MIB, 64 * MIB, 0.01),
    Check("temperature.gpu", "gpu_temperature_celsius", 1, 2),
    Check("power.draw", "gpu_power_usage_watts", 1, 15, 0.10),
    Check("enforced.power.limit", "gpu_power_limit_watts", 1, 1),
    Check("clocks.sm", "gpu_sm_clock_hertz", 1e6, 0, 0.15),
    Check("clocks.mem", "gpu_memory_clock_hertz", 1e6, 0, 0.05),
    Check("utilization.gpu", "gpu_utilization_ratio", 0.01, 0.15),
    Check("utilization.memory", "gpu_memory_controller_utilization_ratio", 0.01, 0.15),
)
"""Every numeric comparison, with its tolerance."""

IDENTITY: tuple[tuple[str, str], ...] = (("name", "model_name"), ("pci.bus_id", "pci_bus_id"))
"""nvidia-smi fields compared exactly (case-insensitive) with ``gpu_info`` labels."""

QUERY_FIELDS: tuple[str, ...] = (
    "uuid",
    "index",
    *(f for f, _ in IDENTITY),
    *(c.field for c in CHECKS),
)
"""The ``--query-gpu`` fields, in CSV column order."""

SmiReading = dict[str, str | float | None]


def nvidia_smi_command(binary: str = "nvidia-smi") -> list[str]:
    """The nvidia-smi command line whose CSV :func:`parse_smi_csv` reads."""
    return [binary, f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader,nounits"]


def parse_smi_csv(text: str) -> dict[str, SmiReading]:
    """Parse nvidia-smi's ``csv,noheader,nounits`` output of :data:`QUERY_FIELDS`.

    Returns:
        ``{uuid: {field: value}}``: numbers as float, identity fields as str, and None for
        ``[N/A]``, ``[Not Supported]`` and the like.

    Raises:
        ValueError: a line has the wrong number of columns, or a number is unreadable.
    """
    out: dict[str, SmiReading] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(QUERY_FIELDS):
            raise ValueError(
                f"nvidia-smi line {number}: {len(cells)} columns, expected {len(QUERY_FIELDS)}"
            )
        reading: SmiReading = {}
        for name, cell in zip(QUERY_FIELDS, cells, strict=True):
            if cell.startswith("[") or cell.upper() in ("N/A", ""):
                reading[name] = None
            elif name in ("uuid", "index", *(f for f, _ in IDENTITY)):
                reading[name] = cell
            else:
                try:
                    reading[name] = float(cell)
                except ValueError:
                    raise ValueError(f"nvidia-smi line {number}: {name}={cell!r}") from None
        out[str(reading["uuid"])] = reading
    return out


def parse_exposition(text: str) -> dict[tuple[str, str], float | dict[str, str]]:
    """The exporter's device samples: ``{(metric, uuid): value}``; ``gpu_info`` maps to its
    labels instead of its value."""
    out: dict[tuple[str, str], float | dict[str, str]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            uuid = sample.labels.get("uuid")
            if uuid is None or "mig_uuid" in sample.labels:
                continue
            value = dict(sample.labels) if sample.name == "gpu_info" else sample.value
            out[(sample.name, uuid)] = value
    return out


@dataclass(frozen=True)
class Row:
    """One line of the table. ``status`` is ``ok``, ``MISMATCH``, ``MISSING`` or ``n/a``."""

    gpu: str
    what: str
    exporter: str
    nvidia_smi: str
    difference: str
    relative: str
    tolerance: str
    status: str


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.4g}"


def compare(
    before: dict[str, SmiReading],
    after: dict[str, SmiReading],
    scrape: dict[tuple[str, str], float | dict[str, str]],
) -> list[Row]:
    """Compare every GPU nvidia-smi lists with the exporter's scrape.

    A numeric reading matches when the exporter's value lies within the tolerance of the
    range spanned by the two nvidia-smi reads. A GPU or reading the exporter lacks while
    nvidia-smi has it is ``MISSING``; one nvidia-smi cannot read is ``n/a`` (not a failure).
    """
    rows: list[Row] = []
    for uuid, first in before.items():
        second = after.get(uuid, first)
        gpu = f"{first.get('index')} ({uuid[:12]}…)"
        if ("gpu_device_up", uuid) not in scrape:
            rows.append(Row(gpu, "GPU", "absent", "present", "", "", "", "MISSING"))
            continue
        info = scrape.get(("gpu_info", uuid))
        labels = info if isinstance(info, dict) else {}
        for field, label in IDENTITY:
            want = str(first.get(field) or "")
            got = labels.get(label, "")
            status = "ok" if want.lower() == got.lower() else "MISMATCH"
            rows.append(Row(gpu, f"{field} / gpu_info.{label}", got, want, "", "", "exact", status))
        for check in CHECKS:
            rows.append(_compare_one(gpu, check, first, second, scrape.get((check.metric, uuid))))
    return rows


def _compare_one(gpu: str, check: Check, first: SmiReading, second: SmiReading, got: object) -> Row:
    what = f"{check.field} / {check.metric}"
    readings = (first.get(check.field), second.get(check.field))
    values = [v * check.scale for v in readings if isinstance(v, float)]
    exported = float(got) if isinstance(got, float | int) else None
    if not values:
        shown = "n/a" if exported is None else _number(exported)
        return Row(gpu, what, shown, "n/a", "", "", "", "n/a")
    low, high = min(values), max(values)
    smi = _number(low) if low == high else f"{_number(low)} → {_number(high)}"
    reference = (low + high) / 2
    tolerance = check.tolerance(reference)
    if exported is None:
        return Row(gpu, what, "absent", smi, "", "", _number(tolerance), "MISSING")
    difference = max(low - exported, exported - high, 0.0)
    relative = f"{difference / abs(reference):.2%}" if reference else "-"
    status = "ok" if difference <= tolerance else "MISMATCH"
    return Row(
        gpu, what, _number(exported), smi, _number(difference), relative, _number(tolerance), status
    )


def table(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table."""
    head = "| GPU | nvidia-smi / exporter | exporter | nvidia-smi | difference | relative | tolerance | |"
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(
            f"| {r.gpu} | {r.what} | {r.exporter} | {r.nvidia_smi} | {r.difference} "
            f"| {r.relative} | {r.tolerance} | {r.status} |"
        )
    return "\n".join(lines)


def read_smi(binary: str) -> dict[str, SmiReading]:
    """Run nvidia-smi (30 s at most) and parse its CSV.

    Raises:
        OSError, subprocess.SubprocessError, ValueError: it cannot be run or read.
    """
    result = subprocess.run(
        nvidia_smi_command(binary), capture_output=True, text=True, timeout=30, check=True
    )
    return parse_smi_csv(result.stdout)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the comparison table; return 0 (all match), 1 (mismatch) or 2 (cannot read)."""
    parser = argparse.ArgumentParser(
        prog="python -m nvml_exporter.smoke", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", required=True, help="the exporter's /metrics URL")
    parser.add_argument("--nvidia-smi", default="nvidia-smi", help="nvidia-smi to run")
    args = parser.parse_args(argv)
    try:
        before = read_smi(args.nvidia_smi)
        with urllib.request.urlopen(args.url, timeout=30) as response:
            scrape = parse_exposition(response.read().decode())
        after = read_smi(args.nvidia_smi)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        print(f"cannot compare: {exc}", file=sys.stderr)
        return 2
    if not before:
        print("cannot compare: nvidia-smi lists no GPU", file=sys.stderr)
        return 2
    rows = compare(before, after, scrape)
    print(table(rows))
    bad = [r for r in rows if r.status in ("MISMATCH", "MISSING")]
    print()
    print(
        f"{len(rows)} readings of {len(before)} GPU(s): "
        + (f"{len(bad)} beyond tolerance or missing" if bad else "all within tolerance")
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
