# obsgen — `make render` and `make test` do all setup on a fresh machine.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: render test fuzz lint check golden bench fmt clean prometheus alertmanager victoriametrics tools e2e-soak stress-ng

# Each slow step says what it does first (pip is quiet, the first install takes a minute or
# more); scripts/apt-install.sh says so before an apt-get install.
$(STAMP): pyproject.toml
	@test -x $(BIN)/python || { echo "obsgen: creating the virtual environment $(VENV)..." >&2; \
		$(PYTHON) -m venv $(VENV); }
	@echo "obsgen: installing obsgen and its dependencies into $(VENV) with pip (about a minute the first time)..." >&2
	@$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev]'
	@echo "obsgen: $(VENV) ready" >&2
	@touch $(STAMP)

prometheus:
	@scripts/ensure-prometheus.sh

alertmanager:
	@scripts/ensure-alertmanager.sh

# VictoriaMetrics + vmalert: the second engine of the e2e suite, vmalert -dryRun, the bench.
victoriametrics:
	@scripts/ensure-victoriametrics.sh

# The pinned tools the tests and benchmarks run (scripts/go-tools.tsv): Prometheus 3.16 and 2.53,
# Alertmanager 0.35, VictoriaMetrics 1.151, Sloth 0.16, pint 0.87, built with Go into
# $${OBSGEN_TOOLS_DIR:-~/.cache/obsgen/tools} once (docs/install.md: time and disk). `make render`
# never needs Go.
tools:
	@scripts/ensure-go-tools.sh

render: $(STAMP) prometheus alertmanager
	@echo "obsgen: rendering specs/ and proving the rules with promtool..." >&2
	$(BIN)/obsgen render

# Golden files: every rendered output, plus the exporter's exposition from the fake backend.
golden: render
	$(BIN)/python -m nvml_exporter.fake > tests/exporter/golden/fake_8gpu.prom

check: $(STAMP) prometheus alertmanager
	$(BIN)/obsgen render --check

# The suite in TEST_WORKERS pytest-xdist processes (tests/conftest.py: tests sharing a module or
# package fixture stay on one worker). `.venv/bin/pytest -q` runs the same suite in one process.
TEST_WORKERS ?= 2
test: $(STAMP) tools prometheus
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadscope

# tests/e2e ten times in a row on a loaded machine: two more CPU-bound processes (stress-ng,
# installed from Debian when missing, else Python busy loops), stopped after the runs; prints
# each run's pass count and fails when a run failed a test. Not part of `make test` (about
# 30 minutes). E2E_SOAK_RUNS and E2E_SOAK_LOAD change the runs and the processes.
E2E_SOAK_RUNS ?= 10
E2E_SOAK_LOAD ?= 2
stress-ng:
	-@scripts/apt-install.sh stress-ng 'Without it the soak loads the CPUs with Python busy loops.' stress-ng

e2e-soak: $(STAMP) tools stress-ng
	$(BIN)/python scripts/e2e_soak.py --runs $(E2E_SOAK_RUNS) --load $(E2E_SOAK_LOAD)

# The property-based fuzz tests at OBSGEN_FUZZ_SCALE (default 40) times the examples of
# `make test`, with fresh random draws on every run (`make test` replays fixed ones).
fuzz: $(STAMP) tools
	OBSGEN_FUZZ_SCALE=$${OBSGEN_FUZZ_SCALE:-40} $(BIN)/pytest -q -p no:cacheprovider \
		tests/test_fuzz_specs.py tests/test_fuzz_rule_files.py

lint: $(STAMP) tools
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy generator nvml_exporter
	PROMTOOL=$$(scripts/tool-path.sh prometheus3 promtool) $(BIN)/obsgen lint rules/ manifests/ helm/

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP) tools
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
