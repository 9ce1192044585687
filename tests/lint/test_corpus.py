"""The real corpus (tests/data/corpus/rules): no crash, and the findings recorded per file.

Each finding below was reviewed by hand and is a true problem under the documented defaults
(scrape interval 30s; alerts need severity, summary and runbook_url):

* alert-missing-annotation: the alerts have no runbook_url (etcd-mixin has one of 15).
* alert-missing-for: `rate(...[5m]) > 0.8`-style thresholds with `for: 0m`; node-exporter's
  conntrack ratio > 0.75 with no `for`.
* counter-compared-raw: `node_edac_uncorrectable_errors_total > 0` never resolves until reboot.
* range-too-short: rate/increase over [1m] at a 30s scrape (two samples).
* regex-redundant-anchor: `fstype!~"^(fuse.*|tmpfs|cifs|nfs)"`.
* record-name-format: names without `level:metric:operations` (info).
* averaged-ratio: Sloth's 30d error ratio is sum_over_time(ratio)/count_over_time(ratio).

Added for issue 18 (monitoring-mixins/website @ f901a79, Apache-2.0):

* thanos-mixin: ThanosBucketReplicateRunLatency takes histogram_quantile of
  `sum by (job) (rate(…_bucket[5m]))` — `le` is gone, the quantile is empty and the alert can
  never fire (histogram-quantile-without-le). Its `sum by (job) (rate(…_bucket…)) > 0` traffic
  guards sum every bucket but only test for traffic: not reported.
* velero-mixin: `avg_over_time(histogram_quantile(0.5, … [48h])[5m:])` averages a median over
  time (quantile-over-time); the 48h bucket rates give it directly.
* cortex-mixin: `le="0.0"` matches nothing on Prometheus 2 with Go clients, which write `0`
  (le-spelling); `route!~"ready"` is a plain string (info); rate(…[1m]) at the default 30s
  scrape holds two samples (range-too-short, 154: Cortex assumes 15s); alerts carry `message`,
  not summary/runbook_url. Gauges named `…_count` (memberlist_client_cluster_members_count)
  are not taken for histogram counts.
* prometheus-mixin: `alertmanager!~""` is a plain string (info); no runbook_url/summary on
  some alerts.
* cortex-mixin's CortexKVStoreFailure divides `sum by (…, status_code, …)` of the non-2xx
  request rate by the same sum over every status: one-to-one on `status_code`, each failing
  series is divided by itself, so the ratio is 1 for every status that failed at all and
  `== 1` holds on any failure, not only on the "constant failure" its comment wants
  (vector-matching).

Added with pint's `promql/counter` (gauge-function-on-counter): awesome-prometheus-alerts'
HostOomKillDetected takes `delta(node_vmstat_oom_kill[30m]) > 0`: after a node restart the
counter falls to 0 and the delta stays negative for 30 minutes, hiding the kills counted
since; HostMemoryUnderMemoryPressure takes `deriv()` of the `pgmajfault` counter.

Added with pint's "impossible label" (vector-matching): kubernetes-mixin's availability and
burn-rate records add `sum by (cluster) (…)` terms to `(… or vector(0))` fallbacks: when only
the fallback answers (nothing counted, e.g. no 5xx in the window) its series has no `cluster`
and matches nothing, so in a cluster-labelled Prometheus the record is empty exactly then
(13 joins over 10 records).

Added with pint's `promql/nan` (nan-in-aggregation): kubernetes-mixin's four
KubeAPIErrorBudgetBurn alerts sum `apiserver_request:burnrate…`, recorded (in
kubernetes-mixin_rules.yaml) as a division by the request count with no guard: a cluster
with no requests of a kind in the window records NaN, and the sum is NaN (two names each).

Added with the label-set checks:

* template-label: litellm's three alerts print `{{ $labels.instance }}` on `sum(…)` and on
  `histogram_quantile(…, sum(…) by (le))`, velero's VeleroHighBackupDuration on `… by (le,
  schedule)`: the aggregation removed `instance`, the text renders "instance ".
* alert-for-value (info): awesome-prometheus-alerts writes `for: 0m` on 15 alerts and
  kubernetes-mixin `for: 0s` on KubeNodeEviction: the default, no effect.
* kubernetes-mixin's `topk by (cluster, namespace, resource, resourcequota) (1, …)` keeps one
  series per quota (a de-duplication) and is not fragile-aggregation.

promtool's duplicate-rules lint on kubernetes-mixin_rules.yaml is not reported: the four
`code_verb:apiserver_request_total:increase1h` rules select disjoint status classes.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from generator.lint import LintConfig, lint_paths

from .helpers import corpus_rules, needs_promtool

EXPECTED: dict[str, dict[str, int]] = {
    "awesome-prometheus-alerts_host-and-hardware_node-exporter.yml": {
        "alert-for-value": 15,
        "alert-missing-annotation": 35,
        "alert-missing-for": 6,
        "counter-compared-raw": 1,
        "gauge-function-on-counter": 2,
        "range-too-short": 3,
        "regex-redundant-anchor": 4,
    },
    "awesome-prometheus-alerts_litellm_embedded-exporter.yml": {
        "alert-missing-annotation": 3,
        "template-label": 3,
    },
    "cortex-mixin_alerts.yaml": {
        "alert-missing-annotation": 114,
        "le-spelling": 1,
        "range-too-short": 10,
        "regex-plain-string": 1,
        "vector-matching": 1,
    },
    "cortex-mixin_rules.yaml": {"range-too-short": 144},
    "etcd-mixin_alerts.yaml": {"alert-missing-annotation": 14},
    "gpu-operator_state-dcgm-exporter_1000_prometheus_rule_openshift.yaml": {
        "record-name-format": 7
    },
    "gpu-operator_state-node-status-exporter_0800_prometheus_rule_openshift.yaml": {
        "alert-missing-annotation": 4
    },
    "kubernetes-mixin_alerts.yaml": {
        "alert-for-value": 1,
        "nan-in-aggregation": 8,
        "range-too-short": 1,
    },
    "kubernetes-mixin_rules.yaml": {"record-name-format": 26, "vector-matching": 13},
    "node-exporter-mixin_alerts.yaml": {"alert-missing-annotation": 26, "alert-missing-for": 1},
    "prometheus-mixin_alerts.yaml": {"alert-missing-annotation": 23, "regex-plain-string": 1},
    "sloth_kubernetes-apiserver_gen.yml": {
        "alert-missing-annotation": 4,
        "averaged-ratio": 2,
        "record-name-format": 2,
    },
    "thanos-mixin_alerts.yaml": {"histogram-quantile-without-le": 1},
    "velero-mixin_alerts.yaml": {
        "alert-missing-annotation": 4,
        "quantile-over-time": 1,
        "template-label": 1,
    },
}


def test_corpus_findings_per_file_are_the_reviewed_ones() -> None:
    corpus = corpus_rules()
    needs_promtool()
    report = lint_paths([str(corpus)], LintConfig(), promtool=True)
    assert report.files == 14
    assert report.rules == 561
    found: dict[str, Counter[str]] = {}
    for finding in report.findings:
        found.setdefault(Path(finding.file).name, Counter())[finding.check] += 1
    assert {name: dict(sorted(c.items())) for name, c in found.items()} == EXPECTED


def test_corpus_lints_without_promtool_with_the_same_findings() -> None:
    corpus = corpus_rules()
    report = lint_paths([str(corpus)], LintConfig(), promtool=False)
    assert sum(EXPECTED[Path(f.file).name][f.check] > 0 for f in report.findings) == len(
        report.findings
    )
    assert len(report.findings) == sum(sum(c.values()) for c in EXPECTED.values())
