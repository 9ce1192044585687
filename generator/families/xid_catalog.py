"""Xid tiers: which Xid codes demand a node reboot, a GPU reset, or only the application.

Source: NVIDIA's Xid catalogue for Ampere and newer GPUs, "Resolution Bucket (Immediate
Action)" (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html), as NVIDIA's
NVSentinel ships it (NVIDIA/NVSentinel
``distros/kubernetes/nvsentinel/charts/gpu-health-monitor/xiderrorsmapping.csv``, commit
6f8b0fcf). RESTART_BM → reboot; RESET_GPU and the hardware workflows marked fatal (48 DBE,
74/144–150 NVLink) → reset; RESTART_APP and IGNORE → application (the GPU stays usable).
Codes marked unused on A100/H100/B100/GB200 are in no tier: GPUXidErrors still reports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator import naming


@dataclass(frozen=True)
class Tier:
    """One tier of the catalogue's immediate actions.

    Attributes:
        key: the ``spec.alerts`` key of its family; ``alert``: its alert name.
        action: what the catalogue asks for (its bucket names).
        codes: the Xid codes in it, ascending.
        example: the code its promtool cases raise.
    """

    key: str
    alert: str
    action: str
    codes: tuple[int, ...]
    example: int


REBOOT = Tier(
    "gpu_xid_reboot",
    naming.ALERT_GPU_XID_REBOOT,
    "RESTART_BM",
    (79, 160),
    79,
)
RESET = Tier(
    "gpu_xid_reset",
    naming.ALERT_GPU_XID_RESET,
    "RESET_GPU, WORKFLOW_XID_48, WORKFLOW_NVLINK_ERR, WORKFLOW_NVLINK5_ERR",
    (
        46,
        48,
        62,
        64,
        74,
        95,
        109,
        110,
        119,
        120,
        136,
        140,
        143,
        *range(144, 151),
        155,
        156,
        158,
    ),
    48,
)
APPLICATION = Tier(
    "gpu_xid_application",
    naming.ALERT_GPU_XID_APPLICATION,
    "RESTART_APP, IGNORE",
    (
        8,
        11,
        13,
        25,
        31,
        32,
        37,
        38,
        39,
        40,
        41,
        43,
        44,
        45,
        60,
        63,
        66,
        67,
        68,
        69,
        70,
        71,
        72,
        75,
        76,
        77,
        80,
        82,
        83,
        84,
        85,
        86,
        88,
        89,
        92,
        93,
        94,
        *range(96, 106),
        *range(126, 136),
        137,
        139,
        141,
        152,
        153,
        157,
        161,
    ),
    13,
)
TIERS = (REBOOT, RESET, APPLICATION)
