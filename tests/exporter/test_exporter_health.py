"""The GPU health readings the obsgen health alerts read on sidecar specs: volatile ECC counts,
the row-remapper flags and NVLink error counters per link, in the names, units and labels of
generator/naming.py, on the fake and through the real ``PynvmlBackend`` over the binding."""

from __future__ import annotations

import pytest
from prometheus_client.registry import CollectorRegistry

from generator import naming
from generator.families import gpu_ecc_errors, gpu_nv_link_errors
from nvml_exporter import nvml
from nvml_exporter.collector import NvmlCollector
from nvml_exporter.fake import FakeGpu, FakeNvml, fake_binding
from nvml_exporter.metrics import SPECS
from nvml_exporter.nvml import PynvmlBackend
from tests.exporter.test_exporter_collector import gpu, scrape

REPLAY, RECOVERY, CRC_FLIT, CRC_DATA = (c for c, _ in nvml.NVLINK_COUNTERS)


def _one(**fields: object) -> FakeNvml:
    return FakeNvml([FakeGpu(index=0, uuid="GPU-aaaa", pci_bus_id="00000000:18:00.0", **fields)])


def _collector(fake: FakeNvml) -> NvmlCollector:
    c = NvmlCollector(fake, registry=CollectorRegistry(), timer=lambda: 0.0)
    assert c.initialise()
    return c


def _samples(reg: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {
        tuple(sorted(s.labels.items())): s.value
        for f in reg.collect()
        for s in f.samples
        if s.name == name
    }


def _unsupported(reg: CollectorRegistry) -> set[str]:
    return {dict(k)["reading"] for k in _samples(reg, "gpu_reading_unsupported")}


def _errors(reg: CollectorRegistry) -> dict[tuple[str, str], float]:
    return {
        (dict(k)["collector"], dict(k)["error"]): v
        for k, v in _samples(reg, "gpu_exporter_collector_errors_total").items()
    }


# --- the contract with the families ---------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "kind", "labels"),
    [
        pytest.param(naming.GPU_ECC_VOLATILE_ERRORS, "counter", ("error_type",), id="ecc-volatile"),
        pytest.param(naming.GPU_ROW_REMAP_PENDING, "gauge", (), id="remap-pending"),
        pytest.param(naming.GPU_ROW_REMAP_FAILURE, "gauge", (), id="remap-failure"),
        pytest.param(naming.GPU_NVLINK_ERRORS, "counter", ("link", "counter"), id="nvlink"),
        pytest.param(naming.GPU_ECC_ERRORS, "counter", ("error_type",), id="ecc-aggregate"),
        pytest.param(naming.GPU_PCIE_REPLAYS, "counter", (), id="pcie-replays"),
    ],
)
def test_each_series_a_health_alert_reads_is_exported_as_the_family_names_it(
    metric: str, kind: str, labels: tuple[str, ...]
) -> None:
    spec = SPECS[metric]
    assert (spec.kind, spec.labels) == (kind, ("uuid", "gpu", *labels))


def test_the_label_values_the_families_select_are_the_exported_ones() -> None:
    (ecc,) = gpu_ecc_errors.UNCORRECTED
    (nvlink,) = gpu_nv_link_errors.COUNTERS
    assert ecc.label == "error_type" and ecc.value == "uncorrected"
    assert nvlink.label == "counter"
    assert set(nvlink.value.split("|")) <= {label for _, label in nvml.NVLINK_COUNTERS}


# --- values, units and labels on a healthy and a faulty GPU ---------------------------------


def test_a_healthy_default_gpu_exports_every_health_series_at_zero(
    fake: FakeNvml, collector: NvmlCollector
) -> None:
    reg = scrape(collector)
    for error_type in ("corrected", "uncorrected"):
        labels = gpu(fake, 0, error_type=error_type)
        assert reg.get_sample_value(naming.GPU_ECC_VOLATILE_ERRORS, labels) == 0
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == 0
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_FAILURE, gpu(fake, 0)) == 0
    links = _samples(reg, naming.GPU_NVLINK_ERRORS)
    mine = {k: v for k, v in links.items() if dict(k)["gpu"] == "0"}
    assert sorted((dict(k)["link"], dict(k)["counter"]) for k in mine) == sorted(
        (str(link), label) for link in (0, 1) for _, label in nvml.NVLINK_COUNTERS
    )
    assert set(mine.values()) == {0}


def test_volatile_and_aggregate_ecc_counts_are_told_apart() -> None:
    fake = _one(
        ecc_corrected=12, ecc_uncorrected=2, ecc_volatile_corrected=4, ecc_volatile_uncorrected=1
    )
    reg = scrape(_collector(fake))
    read = reg.get_sample_value
    assert read(naming.GPU_ECC_ERRORS, gpu(fake, 0, error_type="corrected")) == 12
    assert read(naming.GPU_ECC_ERRORS, gpu(fake, 0, error_type="uncorrected")) == 2
    assert read(naming.GPU_ECC_VOLATILE_ERRORS, gpu(fake, 0, error_type="corrected")) == 4
    assert read(naming.GPU_ECC_VOLATILE_ERRORS, gpu(fake, 0, error_type="uncorrected")) == 1


@pytest.mark.parametrize(
    ("pending", "failure"),
    [(False, False), (True, False), (False, True), (True, True)],
    ids=["neither", "pending", "failed", "both"],
)
def test_row_remap_flags_are_0_or_1_from_the_same_call(pending: bool, failure: bool) -> None:
    fake = _one(remap_pending=pending, remap_failure=failure, remapped_uncorrectable=3)
    reg = scrape(_collector(fake))
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == int(pending)
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_FAILURE, gpu(fake, 0)) == int(failure)
    assert reg.get_sample_value("gpu_remapped_rows_total", gpu(fake, 0, cause="uncorrectable")) == 3
    assert fake.calls[("device_remapped_rows", 0)] == 1


def test_a_flag_raised_between_scrapes_is_seen_at_the_next() -> None:
    fake = _one()
    c = _collector(fake)
    assert scrape(c).get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == 0
    fake.gpus[0].remap_pending = True
    fake.gpus[0].ecc_volatile_uncorrected = 1
    reg = scrape(c)
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == 1
    labels = gpu(fake, 0, error_type="uncorrected")
    assert reg.get_sample_value(naming.GPU_ECC_VOLATILE_ERRORS, labels) == 1


def test_nvlink_errors_are_per_active_link_and_counter() -> None:
    """Links 0 and 2 active, 1 inactive: errors of 0 and 2 only, each counter its own."""
    errors = {(0, REPLAY): 7, (0, RECOVERY): 1, (2, CRC_FLIT): 40, (2, CRC_DATA): 5}
    fake = _one(nvlink_states=(1, 0, 1), nvlink_errors=errors)
    reg = scrape(_collector(fake))
    got = {
        (dict(k)["link"], dict(k)["counter"]): v
        for k, v in _samples(reg, naming.GPU_NVLINK_ERRORS).items()
    }
    labels = dict(nvml.NVLINK_COUNTERS)
    assert got == {
        (str(link), labels[counter]): errors.get((link, counter), 0)
        for link in (0, 2)
        for counter in labels
    }
    assert "nvlink" not in _unsupported(reg)


# --- NotSupported, missing links, no active link ------------------------------------------


def test_a_gpu_without_nvlink_reports_it_unsupported_and_is_not_asked_again() -> None:
    fake = _one(nvlink_states=())
    c = _collector(fake)
    for _ in range(3):
        reg = scrape(c)
    assert _samples(reg, naming.GPU_NVLINK_ERRORS) == {}
    assert _unsupported(reg) == {"nvlink"}
    assert _errors(reg) == {}
    assert fake.calls[("device_nvlink_state", 0)] == 1
    assert fake.calls[("device_nvlink_error_counter", 0)] == 0


def test_link_numbers_past_the_gpus_last_are_probed_once_and_never_counted() -> None:
    """NVML answers InvalidArgument past the GPU's last link: each number is asked once, at
    the first scrape, and is neither an error nor an unsupported reading."""
    fake = _one()  # two links
    c = _collector(fake)
    for _ in range(3):
        reg = scrape(c)
    assert fake.calls[("device_nvlink_state", 0)] == nvml.NVLINK_MAX_LINKS + 2 * 2
    assert _errors(reg) == {}
    assert _unsupported(reg) == set()


def test_no_active_link_is_unsupported_while_it_lasts_and_links_that_come_up_are_read() -> None:
    fake = _one(nvlink_states=(0, 0))
    c = _collector(fake)
    reg = scrape(c)
    assert _unsupported(reg) == {"nvlink"}
    assert _samples(reg, naming.GPU_NVLINK_ERRORS) == {}
    fake.gpus[0].nvlink_states = (1, 1)  # the fabric manager trained the links
    fake.gpus[0].nvlink_errors[(1, RECOVERY)] = 2
    reg = scrape(c)
    assert _unsupported(reg) == set()
    labels = gpu(fake, 0, link="1", counter="recovery")
    assert reg.get_sample_value(naming.GPU_NVLINK_ERRORS, labels) == 2


def test_a_counter_nvml_refuses_is_its_own_unsupported_reading() -> None:
    fake = _one(nvlink_unsupported_counters={CRC_DATA})
    c = _collector(fake)
    for _ in range(2):
        reg = scrape(c)
    counters = {dict(k)["counter"] for k in _samples(reg, naming.GPU_NVLINK_ERRORS)}
    assert counters == {"replay", "recovery", "crc_flit"}
    assert _unsupported(reg) == {"nvlink_crc_data"}
    assert _errors(reg) == {}


def test_ecc_disabled_omits_volatile_counts_too() -> None:
    fake = _one()
    fake.gpus[0].unsupported.add("device_total_ecc_errors")
    reg = scrape(_collector(fake))
    assert _samples(reg, naming.GPU_ECC_VOLATILE_ERRORS) == {}
    assert _unsupported(reg) == {
        "ecc_corrected",
        "ecc_uncorrected",
        "ecc_volatile_corrected",
        "ecc_volatile_uncorrected",
    }


def test_no_row_remapper_omits_both_flags() -> None:
    """Before Ampere NVML answers NotSupported: no flag series, never a fake 0."""
    fake = _one()
    fake.gpus[0].unsupported.add("device_remapped_rows")
    reg = scrape(_collector(fake))
    assert _samples(reg, naming.GPU_ROW_REMAP_PENDING) == {}
    assert _samples(reg, naming.GPU_ROW_REMAP_FAILURE) == {}
    assert _unsupported(reg) == {"remapped_rows"}


@pytest.mark.parametrize(
    "method", ["device_nvlink_state", "device_nvlink_error_counter"], ids=["state", "counter"]
)
def test_another_nvlink_failure_is_counted_every_scrape_and_drops_only_nvlink(
    method: str,
) -> None:
    fake = _one()
    fake.fail(method, nvml.Unknown(), 0)
    c = _collector(fake)
    scrape(c)
    reg = scrape(c)
    assert _samples(reg, naming.GPU_NVLINK_ERRORS) == {}
    assert _errors(reg)[("nvlink", "Unknown")] >= 2
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == 0
    assert _unsupported(reg) == set()


def test_a_gpu_lost_while_its_links_are_read_is_reported_lost() -> None:
    fake = _one()
    fake.fail("device_nvlink_error_counter", nvml.GpuIsLost(), 0)
    reg = scrape(_collector(fake))
    assert reg.get_sample_value("gpu_device_up", gpu(fake, 0)) == 0
    assert _samples(reg, naming.GPU_NVLINK_ERRORS) == {}


# --- through the real backend over the installed binding ------------------------------------


def test_the_real_backend_passes_counter_type_link_and_counter_in_the_bindings_order() -> None:
    """Distinct values per (link, counter) and per ECC counter type: a swapped argument in
    ``PynvmlBackend`` would read another one."""
    errors = {(link, c): 10 * link + c + 1 for link in (0, 1) for c, _ in nvml.NVLINK_COUNTERS}
    fake = _one(
        ecc_volatile_uncorrected=3, ecc_uncorrected=9, remap_failure=True, nvlink_errors=errors
    )
    with fake_binding(fake):
        c = NvmlCollector(PynvmlBackend(), timer=lambda: 0.0)
        assert c.initialise()
        reg = scrape(c)
    labels = dict(nvml.NVLINK_COUNTERS)
    for (link, counter), value in errors.items():
        at = gpu(fake, 0, link=str(link), counter=labels[counter])
        assert reg.get_sample_value(naming.GPU_NVLINK_ERRORS, at) == value
    volatile = gpu(fake, 0, error_type="uncorrected")
    assert reg.get_sample_value(naming.GPU_ECC_VOLATILE_ERRORS, volatile) == 3
    assert reg.get_sample_value(naming.GPU_ECC_ERRORS, volatile) == 9
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_FAILURE, gpu(fake, 0)) == 1
    assert reg.get_sample_value(naming.GPU_ROW_REMAP_PENDING, gpu(fake, 0)) == 0
    assert _errors(reg) == {}
