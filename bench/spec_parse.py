"""Time reading spec YAML at fleet size: the example specs' text × ``--copies`` (default 250,
so 1,000 documents with the four example specs), parsed by ``generator.spec.parse_yaml``.

Usage::

    .venv/bin/python bench/spec_parse.py [--copies 250] [--repeat 3]

Prints a Markdown table: CPU seconds (best of ``--repeat``) for the spec loader as it runs
(libyaml's C parser under the Python composer with every input limit, when PyYAML has
libyaml) and for the pure-Python PyYAML loader it replaced
(:class:`generator.yamlio.PureBoundedLoader`, the fallback without libyaml), and the ratio.
Both return the same data (tests/test_yaml_loader.py).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generator.spec import SPEC_LIMITS, SpecLoader, parse_yaml  # noqa: E402
from generator.yamlio import PureBoundedLoader  # noqa: E402


class PureSpecLoader(PureBoundedLoader):
    """The spec loader in pure-Python PyYAML (the loader the libyaml-backed one replaced)."""

    limits = SPEC_LIMITS


def _cpu_seconds(texts: list[tuple[str, str]], loader: type[yaml.SafeLoader], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for name, text in texts:
            parse_yaml(text, name, loader)
        best = min(best, time.process_time() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    """Run both loaders over the same texts and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=250, help="copies of each example spec")
    parser.add_argument("--repeat", type=int, default=3, help="runs per loader (best is shown)")
    args = parser.parse_args(argv)

    specs = sorted((ROOT / "specs").glob("*.yaml"))
    texts = [(path.name, path.read_text()) for path in specs] * args.copies
    fast = _cpu_seconds(texts, SpecLoader, args.repeat)
    pure = _cpu_seconds(texts, PureSpecLoader, args.repeat)
    events = "libyaml" if yaml.__with_libyaml__ else "pure Python (no libyaml)"
    print(f"Spec parsing: {len(texts):,} documents ({len(specs)} example specs × {args.copies})")
    print(
        f"on {platform.python_implementation()} {platform.python_version()}, PyYAML "
        f"{yaml.__version__}; command: `.venv/bin/python bench/spec_parse.py`\n"
    )
    print(f"| loader | CPU s (best of {args.repeat}) | per spec ms |")
    print("|---|---:|---:|")
    print(f"| SpecLoader (events: {events}) | {fast:.2f} | {1000 * fast / len(texts):.2f} |")
    print(f"| pure-Python PyYAML (before) | {pure:.2f} | {1000 * pure / len(texts):.2f} |")
    print(f"| ratio | {pure / fast:.1f}× faster | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
