"""A realistic fleet: ``count`` distinct ModelService specs, deterministic from a seed.

Each spec has its own name, namespace and job, a server drawn from vLLM, TGI, Triton and an
OpenAI-compatible HTTP server, its own objectives, latency thresholds (bucket bounds of that
server's histograms), alert thresholds and durations, replicas and memory limit: no two specs
are copies of one another under another name. ``python bench/_fleet_specs.py DIR --count N``
writes them as files.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

SERVERS = ("vllm", "tgi", "triton", "openai-http")
TEAMS = ("ml-platform", "search", "assistants", "ads-ranking", "speech", "vision", "research")
MODELS = {
    "vllm": ("llama3-70b", "llama3-8b", "qwen2-72b", "mixtral-8x7b", "gemma2-27b"),
    "tgi": ("mistral-7b", "falcon-40b", "starcoder2-15b", "zephyr-7b"),
    "triton": ("trtllm-llama3", "trtllm-gptj", "trtllm-mistral"),
    "openai-http": ("gateway", "reasoning", "embeddings-api", "chat-proxy"),
}
# Latency bucket bounds (seconds) that SLOs and slowRequests may name, per server and indicator:
# bounds of each server's preset (generator/presets/).
VLLM_E2E = (5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0)
VLLM_TTFT = (0.25, 0.5, 0.75, 1.0, 2.5, 5.0)
VLLM_ITL = (0.05, 0.075, 0.1, 0.15, 0.2, 0.3)
TGI = ("1122ms", "1683ms", "2525ms", "3788ms", "5682ms", "8522ms", "12783ms", "19175ms")
TGI_ITL = ("66ms", "99ms", "148ms", "222ms")
TRITON_TTFT = ("500ms", "2s", "5s")
OPENAI = (1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
OPENAI_SLOW = (0.25, 0.5, 1.0, 2.5)


def _seconds(value: float) -> str:
    return f"{value:g}s" if value == int(value) else f"{round(value * 1000)}ms"


def _common_alerts(rng: random.Random) -> dict[str, str]:
    return {
        "errorRatio": (
            f"{{maxRatio: {rng.randrange(5, 100) / 1000:g}, for: {rng.choice((2, 5, 10))}m, "
            f"severity: {rng.choice(('critical', 'warning'))}}}"
        ),
        "queueDepth": (
            f"{{max: {rng.randrange(8, 400)}, for: {rng.choice((5, 10))}m, severity: warning}}"
        ),
        "memoryHeadroom": (
            f"{{minFree: {rng.randrange(5, 25) / 100:g}, for: {rng.choice((3, 5))}m, "
            "severity: critical}"
        ),
    }


def spec_text(index: int, rng: random.Random, prometheus: str | None = None) -> tuple[str, str]:
    """``(name, YAML text)`` of the ``index``-th spec, drawn from ``rng``; ``prometheus``, when
    given, replaces the drawn ``spec.prometheus`` mapping (flow YAML, e.g. ``{version: "3"}``)
    and every other draw stays the same."""
    server = SERVERS[index % len(SERVERS)] if rng.random() < 0.5 else rng.choice(SERVERS)
    name = f"{rng.choice(MODELS[server])}-{index:04d}"
    team = rng.choice(TEAMS)
    namespace = f"{team}-{index:04d}"
    objective = rng.choice(("99.", "99.5", "99.9", "99.95")) + str(rng.randrange(1, 10))
    latency_objective = rng.choice(("95", "97.5", "99", "99.5"))
    alerts = _common_alerts(rng)
    p99 = f"{rng.randrange(2, 60)}s"
    lines = [
        "apiVersion: obsgen/v1alpha1",
        "kind: ModelService",
        f"metadata: {{name: {name}, team: {team}}}",
        "spec:",
        f"  server: {server}",
    ]
    slos = [f"    - {{name: availability, objective: {objective}, window: 30d}}"]
    group_by = ""
    metrics: list[str] = []
    if server == "vllm":
        lines.append('  serverVersion: "0.11"')
        slos.append(
            f"    - {{name: latency-e2e, indicator: e2e, threshold: {_seconds(rng.choice(VLLM_E2E))}, "
            f"objective: {latency_objective}, window: 30d}}"
        )
        slos.append(
            "    - {name: latency-ttft, indicator: ttft, "
            f"threshold: {_seconds(rng.choice(VLLM_TTFT))}, objective: 99, window: 30d}}"
        )
        alerts["latencyP99"] = (
            f"{{indicator: ttft, threshold: {p99}, for: 10m, severity: critical}}"
        )
        alerts["slowRequests"] = (
            f"{{indicator: itl, threshold: {_seconds(rng.choice(VLLM_ITL))}, "
            f"maxRatio: {rng.randrange(5, 20) / 100:g}, for: 10m, severity: warning}}"
        )
        alerts["kvCache"] = f"{{max: {rng.randrange(80, 97) / 100:g}, for: 10m, severity: warning}}"
    elif server == "tgi":
        slos.append(
            f"    - {{name: latency-e2e, indicator: e2e, threshold: {rng.choice(TGI)}, "
            f"objective: {latency_objective}, window: 30d}}"
        )
        alerts["latencyP99"] = f"{{threshold: {p99}, for: 10m, severity: critical}}"
        alerts["slowRequests"] = (
            f"{{indicator: itl, threshold: {rng.choice(TGI_ITL)}, "
            f"maxRatio: {rng.randrange(5, 20) / 100:g}, for: 10m, severity: warning}}"
        )
    elif server == "triton":
        lines.append('  serverVersion: "24.11"')
        group_by = "  groupBy: [model]"
        slos.append(
            f"    - {{name: latency-ttft, indicator: ttft, threshold: {rng.choice(TRITON_TTFT)}, "
            f"objective: {latency_objective}, window: 30d}}"
        )
        p99 = f"{rng.randrange(1000, 4900, 100)}ms"
        alerts["latencyP99"] = f"{{threshold: {p99}, for: 10m, severity: critical}}"
        alerts["slowRequests"] = (
            f"{{threshold: 500ms, maxRatio: {rng.randrange(5, 20) / 100:g}, for: 10m, "
            "severity: warning}"
        )
        alerts["kvCache"] = f"{{max: {rng.randrange(80, 97) / 100:g}, for: 10m, severity: warning}}"
        del alerts["memoryHeadroom"]
    else:
        metrics = [
            "  metrics:",
            f"    queueDepth: {{name: inference_queue_depth, selector: {{job: {name}-jobs}}}}",
        ]
        slos.append(
            f"    - {{name: latency, indicator: requestDuration, "
            f"threshold: {_seconds(rng.choice(OPENAI))}, objective: {latency_objective}, "
            "window: 30d}"
        )
        alerts["latencyP99"] = f"{{threshold: {p99}, for: 10m, severity: critical}}"
        alerts["slowRequests"] = (
            f"{{threshold: {_seconds(rng.choice(OPENAI_SLOW))}, "
            f"maxRatio: {rng.randrange(5, 20) / 100:g}, for: 10m, severity: critical}}"
        )
    lines.append(f"  selector: {{namespace: {namespace}, job: {name}}}")
    if group_by:
        lines.append(group_by)
    lines += metrics
    drawn = f"{{version: compat, scrapeInterval: {rng.choice((15, 30))}s}}"
    lines.append(f"  prometheus: {prometheus or drawn}")
    lines += ["  slos:", *slos, "  alerts:"]
    lines += [f"    {key}: {value}" for key, value in sorted(alerts.items())]
    lines.append("  gpu: {exporter: sidecar}")
    container = {"vllm": "vllm", "tgi": "tgi", "triton": "triton"}.get(server, name)
    lines.append(
        f"  deployment: {{name: {name}, container: {container}, "
        f"replicas: {rng.randrange(1, 9)}, memoryLimit: {rng.choice((16, 24, 32, 48, 64, 80))}Gi}}"
    )
    return name, "\n".join(lines) + "\n"


def realistic_specs(
    folder: Path, count: int, seed: int = 34, prometheus: str | None = None
) -> list[Path]:
    """Write ``count`` distinct specs into ``folder`` (created) as ``<name>.yaml``; return
    their paths. The same ``seed`` and ``count`` write the same bytes; ``prometheus``: see
    :func:`spec_text`."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(count):
        name, text = spec_text(index, rng, prometheus)
        path = folder / f"{name}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    """Write the specs into the folder given."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    realistic_specs(args.folder, args.count, args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
