"""nvml-exporter against real nvidia-ml-py bindings: the oldest accepted, issue 14's 12.555.43 and
the installed (newest) one; and every binding name, constant and error class gone missing.

The old bindings are the unmodified PyPI wheels in ``data/nvidia-ml-py/`` (see its README). Each
runs in a subprocess with the wheel first on ``PYTHONPATH``: the real ``PynvmlBackend`` and the
HTTP server, with the binding's NVML functions routed to the fake (``fake_binding``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pynvml
import pytest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from nvml_exporter import nvml
from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import BINDING_NAMES, FakeNvml, default_fake, fake_binding
from nvml_exporter.nvml import PynvmlBackend
from tests.exporter.test_exporter_collector import gpu, scrape

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WHEELS = HERE / "data" / "nvidia-ml-py"
OLDEST = "12.535.77"
"""The floor in pyproject.toml: the oldest version tested."""


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def _run_driver(pythonpath: list[Path]) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, [*pythonpath, REPO]))}
    result = subprocess.run(
        [sys.executable, str(HERE / "binding_driver.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("version", [OLDEST, "12.555.43", "installed"])
def test_the_exporter_serves_with_the_binding(version: str, tmp_path: Path) -> None:
    """Issue 14, case 1 (temperature through the fallback where the binding lacks
    ``nvmlDeviceGetTemperatureV``, no error counted) and case 2 through the real backend
    (Xid 79 of a GPU lost before the event is read is counted)."""
    paths: list[Path] = []
    if version != "installed":
        with zipfile.ZipFile(WHEELS / f"nvidia_ml_py-{version}-py3-none-any.whl") as wheel:
            wheel.extractall(tmp_path)
        paths.append(tmp_path)
    expected = version if version != "installed" else metadata.version("nvidia-ml-py")
    samples = _samples(_run_driver(paths))

    builds = [labels for (name, labels) in samples if name == "gpu_exporter_build_info"]
    assert dict(builds[0])["nvidia_ml_py_version"] == expected  # the binding under test ran
    assert samples[("gpu_exporter_nvml_up", ())] == 1
    errors = {k: v for k, v in samples.items() if k[0] == "gpu_exporter_collector_errors_total"}
    assert errors == {}  # nothing missing from a binding is counted as a failure
    fake = default_fake()
    for index in (0, 2, 3, 4, 5, 6, 7):
        labels = tuple(sorted(gpu(fake, index).items()))
        assert samples[("gpu_temperature_celsius", labels)] == 34 + 3 * index
        assert samples[("gpu_device_up", labels)] == 1
    lost = gpu(fake, 1)
    assert samples[("gpu_device_up", tuple(sorted(lost.items())))] == 0
    xid = tuple(sorted({**lost, "xid": "79"}.items()))
    assert samples[("gpu_xid_errors_total", xid)] == 1


def test_pyproject_floor_is_the_oldest_version_tested() -> None:
    pyproject = (REPO / "pyproject.toml").read_text()
    assert f'"nvidia-ml-py>={OLDEST}"' in pyproject


def test_the_fake_binding_covers_every_name_the_backend_uses() -> None:
    source = (REPO / "nvml_exporter" / "nvml.py").read_text()
    used = {part.split('"')[0] for part in source.split('binding("')[1:] if part.split('"')[0]} - {
        "<name>"
    }
    assert used == set(BINDING_NAMES)
    assert all(hasattr(pynvml, name) for name in BINDING_NAMES)  # the newest has them all


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (nvml.CLOCK_SM, "NVML_CLOCK_SM"),
        (nvml.CLOCK_MEM, "NVML_CLOCK_MEM"),
        (nvml.TEMPERATURE_GPU, "NVML_TEMPERATURE_GPU"),
        (nvml.MEMORY_ERROR_CORRECTED, "NVML_MEMORY_ERROR_TYPE_CORRECTED"),
        (nvml.MEMORY_ERROR_UNCORRECTED, "NVML_MEMORY_ERROR_TYPE_UNCORRECTED"),
        (nvml.AGGREGATE_ECC, "NVML_AGGREGATE_ECC"),
        (nvml.VOLATILE_ECC, "NVML_VOLATILE_ECC"),
        (nvml.NVLINK_ACTIVE, "NVML_FEATURE_ENABLED"),
        (nvml.NVLINK_MAX_LINKS, "NVML_NVLINK_MAX_LINKS"),
        (nvml.MIG_ENABLED, "NVML_DEVICE_MIG_ENABLE"),
        (nvml.EVENT_XID_CRITICAL, "nvmlEventTypeXidCriticalError"),
        (nvml.ERROR_NO_PERMISSION, "NVML_ERROR_NO_PERMISSION"),
        (nvml.ERROR_GPU_IS_LOST, "NVML_ERROR_GPU_IS_LOST"),
        (nvml.ERROR_ARGUMENT_VERSION_MISMATCH, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH"),
        (nvml.ERROR_LIB_RM_VERSION_MISMATCH, "NVML_ERROR_LIB_RM_VERSION_MISMATCH"),
    ],
)
def test_nvml_h_constants_equal_the_bindings(ours: int, theirs: str) -> None:
    assert ours == getattr(pynvml, theirs)


def test_nvlink_error_counters_equal_the_bindings() -> None:
    for counter, label in nvml.NVLINK_COUNTERS:  # crc_flit: NVML_NVLINK_ERROR_DL_CRC_FLIT
        assert getattr(pynvml, f"NVML_NVLINK_ERROR_DL_{label.upper()}") == counter, label


def test_page_retirement_causes_equal_the_bindings() -> None:
    names = {
        "single_bit_ecc": "NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS",
        "double_bit_ecc": "NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR",
    }
    for cause, label in nvml.PAGE_RETIREMENT_CAUSES:
        assert getattr(pynvml, names[label]) == cause, label


def test_clock_event_reason_bits_equal_the_bindings() -> None:
    for bit, label in nvml.CLOCK_EVENT_REASONS:
        camel = "".join(part.capitalize() for part in label.split("_"))  # gpu_idle: GpuIdle
        assert getattr(pynvml, f"nvmlClocksEventReason{camel}") == bit, label


# --- names missing from the binding, in process --------------------------------------------


def _collect_with(fake: FakeNvml, drop: tuple[str, ...]) -> tuple[NvmlCollector, CollectorRegistry]:
    with fake_binding(fake, drop=drop):
        c = NvmlCollector(PynvmlBackend(), timer=lambda: 0.0)
        c.initialise()
        return c, scrape(c)


def test_missing_temperature_v_falls_back_to_the_deprecated_call_once_learnt(
    fake: FakeNvml,
) -> None:
    with fake_binding(fake, drop=("nvmlDeviceGetTemperatureV",)):
        c = NvmlCollector(PynvmlBackend(), timer=lambda: 0.0)
        assert c.initialise()
        scrape(c)
        reg = scrape(c)
    assert reg.get_sample_value("gpu_temperature_celsius", gpu(fake, 0)) == 34
    assert all(not s.samples for s in reg.collect() if s.name == "gpu_exporter_collector_errors")
    assert fake.calls[("device_temperature_legacy", 0)] == 2  # the absent call is not retried


def test_missing_memory_v2_constant_falls_back_to_v1(fake: FakeNvml) -> None:
    _, reg = _collect_with(fake, ("nvmlMemory_v2",))
    assert reg.get_sample_value("gpu_memory_total_bytes", gpu(fake, 0)) == 81559 * 1024**2
    assert reg.get_sample_value("gpu_memory_reserved_bytes", gpu(fake, 0)) is None
    assert fake.calls[("device_memory_info_v2", 0)] == 0


@pytest.mark.parametrize("name", sorted(BINDING_NAMES))
def test_any_missing_binding_name_is_absent_never_a_crash(name: str) -> None:
    fake = default_fake()
    _, reg = _collect_with(fake, (name,))
    errors = [
        s
        for f in reg.collect()
        for s in f.samples
        if s.name == "gpu_exporter_collector_errors_total"
    ]
    # Without nvmlInit (or the GPU count) there is no NVML at all: counted once, at init.
    if name in {"nvmlInit", "nvmlDeviceGetCount"}:
        assert [e.labels for e in errors] == [{"collector": "init", "error": "BindingMissing"}]
        assert reg.get_sample_value("gpu_exporter_nvml_up") == 0
        return
    # Identity calls have no fallback: counted where they fail; nothing else is.
    assert {e.labels["error"] for e in errors} <= {"BindingMissing"}
    assert {e.labels["collector"] for e in errors} <= {"init", "xid"}
    assert reg.get_sample_value("gpu_exporter_nvml_up") == 1


def test_an_error_code_the_binding_has_no_class_for_is_classified_by_code() -> None:
    plain = Exception.__new__(pynvml.NVMLError)
    plain.value = nvml.ERROR_ARGUMENT_VERSION_MISMATCH  # as raised by a binding without the class
    assert type(plain) is pynvml.NVMLError
    assert nvml.is_absent(plain)
    assert nvml.error_name(plain) == "ArgumentVersionMismatch"
    lost = Exception.__new__(pynvml.NVMLError)
    lost.value = nvml.ERROR_GPU_IS_LOST
    assert nvml.is_gpu_lost(lost)


def test_a_missing_error_class_gets_a_stand_in_with_its_code(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(pynvml, "NVMLError_ArgumentVersionMismatch")
    cls = nvml._error_class(nvml.ERROR_ARGUMENT_VERSION_MISMATCH)
    assert cls.__name__ == "NVMLError_ArgumentVersionMismatch"
    assert issubclass(cls, pynvml.NVMLError)
    assert nvml.is_absent(cls())
