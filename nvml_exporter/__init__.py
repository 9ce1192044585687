"""NVML sidecar exporter: GPU metrics for a model pod that never fail a scrape.

``nvml_exporter/README.md`` gives the metrics (a contract: docs/contracts.md) and deployment.
"""

from nvml_exporter.collector import NvmlCollector
from nvml_exporter.nvml import NvmlBackend, PynvmlBackend
from nvml_exporter.server import Exporter

__all__ = ["Exporter", "NvmlBackend", "NvmlCollector", "PynvmlBackend"]
