"""End-to-end tests: real Prometheus, Alertmanager, VictoriaMetrics and vmalert (one stack
per run of this package, see ``conftest.py``)."""
