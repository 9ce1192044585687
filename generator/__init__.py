"""obsgen: render model-serving observability bundles (rules, tests, dashboards, overlays)."""

__all__ = ["__version__"]
__version__ = "0.1.0"
