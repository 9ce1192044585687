"""The alert families obsgen renders, one module each (:class:`base.Family`), in output order.

Adding a family: a module holding its ``FAMILY`` and one line in :data:`FAMILIES`. Alert
families not listed yet keep their code in the builders (``plan.ALERT_DEFAULTS``' legacy
table, the ``family_groups`` chain of :mod:`generator.cases.rule_tests`, …).
"""

from __future__ import annotations

from generator.families import (
    cold_start,
    crash_loop,
    efficiency_regression,
    error_ratio,
    gpu_device_lost,
    gpu_ecc_errors,
    gpu_exporter_down,
    gpu_hardware_slowdown,
    gpu_memory_headroom,
    gpu_nv_link_errors,
    gpu_page_retirement_pending,
    gpu_pages_retired,
    gpu_pcie_replays,
    gpu_row_remap_failure,
    gpu_row_remap_pending,
    gpu_temperature,
    gpu_uncorrectable_remaps,
    gpu_xid_application,
    gpu_xid_errors,
    gpu_xid_reboot,
    gpu_xid_reset,
    kv_cache,
    kv_transfer,
    latency_p99,
    lora_pool,
    memory_exhaustion,
    memory_headroom,
    oom_killed,
    preemptions,
    prefix_cache,
    queue_depth,
    replicas_unavailable,
    slow_requests,
    spec_decode,
    target_down,
)
from generator.families.base import Family

FAMILIES: tuple[Family, ...] = (
    latency_p99.FAMILY,
    slow_requests.FAMILY,
    error_ratio.FAMILY,
    queue_depth.FAMILY,
    kv_cache.FAMILY,
    preemptions.FAMILY,
    prefix_cache.FAMILY,
    spec_decode.FAMILY,
    lora_pool.FAMILY,
    kv_transfer.FAMILY,
    memory_headroom.FAMILY,
    memory_exhaustion.FAMILY,
    oom_killed.FAMILY,
    target_down.FAMILY,
    crash_loop.FAMILY,
    replicas_unavailable.FAMILY,
    cold_start.FAMILY,
    gpu_memory_headroom.FAMILY,
    gpu_temperature.FAMILY,
    gpu_xid_errors.FAMILY,
    gpu_exporter_down.FAMILY,
    gpu_device_lost.FAMILY,
    gpu_hardware_slowdown.FAMILY,
    gpu_ecc_errors.FAMILY,
    gpu_row_remap_failure.FAMILY,
    gpu_row_remap_pending.FAMILY,
    gpu_uncorrectable_remaps.FAMILY,
    gpu_pages_retired.FAMILY,
    gpu_page_retirement_pending.FAMILY,
    gpu_nv_link_errors.FAMILY,
    gpu_pcie_replays.FAMILY,
    gpu_xid_reboot.FAMILY,
    gpu_xid_reset.FAMILY,
    gpu_xid_application.FAMILY,
    efficiency_regression.FAMILY,
)


def family(key: str) -> Family | None:
    """The registered family of ``ServicePlan.alerts`` key ``key``, or None (not migrated)."""
    return next((f for f in FAMILIES if f.key == key), None)
