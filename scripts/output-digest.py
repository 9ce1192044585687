"""Digest of everything obsgen renders, to prove a refactoring changes no output byte.

Renders (without promtool, without the cache) the repository's specs, each spec of
tests/fixtures/ and 30 distinct specs of bench/_fleet_specs.py into temporary folders and
prints ``<md5>  <set>/<path>`` per file. ``--compare DIGEST`` exits 1 listing what differs.
Usage: ``scripts/output-digest.py > /tmp/before.txt``, change, ``scripts/output-digest.py
--compare /tmp/before.txt``; run it with any checkout's ``scripts/`` to digest that checkout.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _fleet_specs import realistic_specs  # noqa: E402

FLEET = 30


def _render(repo: Path, specs: list[Path]) -> bool:
    """Render ``specs`` (copied into ``repo/specs``) with ``repo`` as working directory."""
    (repo / "specs").mkdir(parents=True, exist_ok=True)
    for spec in specs:
        if spec.parent != repo / "specs":
            shutil.copy(spec, repo / "specs" / spec.name)
    # This checkout's generator, whatever is installed: two checkouts can be compared.
    env = {**os.environ, "OBSGEN_CACHE_DIR": str(repo / ".cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "render", "--skip-promtool", "--no-cache", "-q"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode == 0


def digest() -> list[str]:
    """``<md5>  <set>/<path>`` of every rendered file, sorted; a set that does not render is
    listed as ``FAILED  <set>``."""
    lines: list[str] = []
    with tempfile.TemporaryDirectory(prefix="obsgen-digest-") as tmp:
        work = Path(tmp)
        sets = {"specs": sorted((ROOT / "specs").glob("*.yaml"))}
        for fixture in sorted((ROOT / "tests" / "fixtures").glob("*.yaml")):
            sets[f"fixture-{fixture.stem}"] = [fixture]
        sets["fleet"] = realistic_specs(work / "fleet" / "specs", FLEET)
        for name, specs in sets.items():
            repo = work / name
            if not _render(repo, specs):
                lines.append(f"FAILED  {name}")
                continue
            for path in sorted(repo.rglob("*")):
                rel = path.relative_to(repo)
                if path.is_file() and rel.parts[0] not in ("specs", ".cache"):
                    md5 = hashlib.md5(path.read_bytes()).hexdigest()
                    lines.append(f"{md5}  {name}/{rel.as_posix()}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the digest, or compare it with a saved one (exit 1 on any difference)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", type=Path, help="a digest printed before")
    args = parser.parse_args(argv)
    lines = digest()
    if args.compare is None:
        print("\n".join(lines))
        return 0
    before = args.compare.read_text(encoding="utf-8").splitlines()
    gone, new = sorted(set(before) - set(lines)), sorted(set(lines) - set(before))
    for line in gone:
        print(f"- {line}")
    for line in new:
        print(f"+ {line}")
    files = sum(1 for line in lines if not line.startswith("FAILED"))
    verdict = "identical" if not gone and not new else "DIFFERENT"
    print(f"{verdict}: {files} files, {len(lines) - files} sets failed to render", file=sys.stderr)
    return 0 if verdict == "identical" else 1


if __name__ == "__main__":
    raise SystemExit(main())
