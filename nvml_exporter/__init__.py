"""NVML sidecar exporter: GPU metrics for a model pod that never fail a scrape.

See ``nvml_exporter/README.md`` for the metrics and deployment, DESIGN.md §5 for the contract.
"""

from nvml_exporter.collector import NvmlCollector
from nvml_exporter.nvml import NvmlBackend, PynvmlBackend
from nvml_exporter.server import Exporter

__all__ = ["Exporter", "NvmlBackend", "NvmlCollector", "PynvmlBackend"]
