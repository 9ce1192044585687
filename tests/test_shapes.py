"""Services that differ only by name are built once per shape and renamed (generator/shapes.py):
the renamed files are byte for byte those of a full build, and anything renaming could get
wrong (a name YAML reads as another type, a name inside a regular expression, a builder that
hashes or sorts the name) is built in full."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator import build, shapes
from generator.builders.alertmanager_routing import ALERT_LABELS, _alert_labels, alert_labels
from generator.errors import Diagnostic, ObsgenError
from generator.plan import ServicePlan
from generator.render import load_plans
from tests.fuzzing import budget

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.stem for p in (REPO / "specs").glob("*.yaml"))


def _specs(folder: Path, example: str, names: list[str], extra: str = "") -> list[Path]:
    """One copy of ``specs/<example>.yaml`` per name (service, job, deployment renamed), each
    in its own ``<name>.yaml``; ``extra`` is appended under ``spec:``'s last line."""
    text = (REPO / "specs" / f"{example}.yaml").read_text(encoding="utf-8")
    found = re.search(r"metadata: \{name: ([a-z0-9-]+)", text)
    assert found is not None
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        path = folder / f"{name}.yaml"
        whole = name if shapes.plain_yaml(name) else f"'{name}'"  # a value of its own: quoted
        copy = re.sub(rf"(?<=: ){found.group(1)}(?=[,}}\n])", whole, text)
        path.write_text(re.sub(rf"\b{found.group(1)}\b", name, copy) + extra, encoding="utf-8")
        paths.append(path)
    return paths


def _full(plan: ServicePlan) -> tuple[dict[str, str], list[Diagnostic]]:
    """What a service's own build gives without shapes."""
    warnings: list[Diagnostic] = []
    return build.service_outputs(plan, "configmaps", False, warnings.append), warnings


def _through_shapes(plans: list[ServicePlan]) -> tuple[shapes.ShapeBuilder, list[object]]:
    builder = shapes.ShapeBuilder(_full)
    builder.prepare(plans)
    return builder, [builder.outputs(plan) for plan in plans]


def _renamed_letters(name: str, shift: int) -> str:
    """``name`` with letters and digits rotated: the same shape (length, character classes)."""
    out = []
    for char in name:
        if char.isalpha():
            out.append(chr((ord(char) - 97 + shift) % 26 + 97))
        elif char.isdigit():
            out.append(str((int(char) + shift) % 10))
        else:
            out.append(char)
    return "".join(out)


@pytest.mark.parametrize("example", EXAMPLES)
def test_copies_of_an_example_are_renamed_into_exactly_their_full_build(
    tmp_path: Path, example: str
) -> None:
    names = ["chat-a1", "chat-b2", "talk-c3", "talk-d4"]
    plans = load_plans(_specs(tmp_path / "specs", example, names), tmp_path)
    builder, got = _through_shapes(plans)
    assert builder.renamed == len(names)
    for plan, outputs in zip(plans, got, strict=True):
        assert outputs == _full(plan), plan.name
    files = got[0][0]  # type: ignore[index]
    assert isinstance(files, dict)
    assert any("chat-a1" in rel for rel in files)  # the paths are renamed too


@budget(6)
@given(
    base=st.from_regex(r"[a-z]([a-z0-9-]{0,28}[a-z0-9])?", fullmatch=True),
    example=st.sampled_from(EXAMPLES),
)
def test_renamed_outputs_equal_full_builds_for_any_name(
    tmp_path_factory: pytest.TempPathFactory, base: str, example: str
) -> None:
    names = sorted({base, _renamed_letters(base, 7), _renamed_letters(base, 13)})
    folder = tmp_path_factory.mktemp("shapes")
    plans = load_plans(_specs(folder / "specs", example, names), folder)
    _, got = _through_shapes(plans)
    for plan, outputs in zip(plans, got, strict=True):
        assert outputs == _full(plan), plan.name


def test_a_name_yaml_reads_as_another_type_is_built_in_full(tmp_path: Path) -> None:
    names = ["abcd", "efgh", "ijkl", "true"]  # one shape; YAML reads `true` as a boolean
    plans = load_plans(_specs(tmp_path / "specs", "o1-preview", names), tmp_path)
    builder, got = _through_shapes(plans)
    assert builder.renamed == 3
    assert shapes.shape_key(plans[-1]) is None
    true_files, _ = got[-1]  # type: ignore[misc]
    assert any("'true'" in text for text in true_files.values())  # renaming would miss this
    assert got[-1] == _full(plans[-1])


def test_a_name_inside_a_regular_expression_is_built_in_full(tmp_path: Path) -> None:
    names = ["chat-a1", "chat-b2", "chat-c3"]
    specs = _specs(tmp_path / "specs", "o1-preview", names)
    for path, name in zip(specs, names, strict=True):
        text = path.read_text(encoding="utf-8")
        text = text.replace(
            'errorMatchers: {status: "5.."}', f'errorMatchers: {{handler: "/{name}/.*"}}'
        )
        path.write_text(text, encoding="utf-8")
    plans = load_plans(specs, tmp_path)
    assert all(shapes.shape_key(p) is None for p in plans)
    builder, got = _through_shapes(plans)
    assert builder.renamed == 0
    assert got[0] == _full(plans[0])


def test_a_name_that_is_also_a_value_of_the_spec_is_built_in_full(tmp_path: Path) -> None:
    # `critical` is also every critical alert's severity: a stand-in in its place would turn
    # those severities into names.
    names = ["abcdefgh", "ijklmnop", "qrstuvwx", "critical"]
    plans = load_plans(_specs(tmp_path / "specs", "mistral-7b-tgi", names), tmp_path)
    critical = next(p for p in plans if p.name == "critical")
    assert shapes.shape_key(critical) is None
    builder, got = _through_shapes(plans)
    assert builder.renamed == 3
    assert got == [_full(p) for p in plans]


def _plans_named(tmp_path: Path, names: list[str]) -> list[ServicePlan]:
    return load_plans(_specs(tmp_path / "specs", "triton-trtllm", names), tmp_path)


def test_a_name_the_built_text_already_holds_is_built_in_full(tmp_path: Path) -> None:
    def with_a_word(plan: ServicePlan) -> tuple[dict[str, str], list[Diagnostic]]:
        return {f"{plan.name}.txt": f"{plan.name} shares a queue with chat-z9"}, []

    # The builder itself writes `chat-z9`: in that service's text, renaming cannot tell its
    # name from the builder's own word, so it is built (here the rename would happen to agree).
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3", "chat-z9"])
    builder = shapes.ShapeBuilder(with_a_word)
    builder.prepare(plans)
    assert [builder.outputs(p) for p in plans] == [with_a_word(p) for p in plans]
    assert builder.renamed == 3


def _hashing(plan: ServicePlan) -> tuple[dict[str, str], list[Diagnostic]]:
    return {"f": f"{plan.name} {hashlib.sha256(plan.name.encode()).hexdigest()}"}, []


def _sorting(plan: ServicePlan) -> tuple[dict[str, str], list[Diagnostic]]:
    return {"f": " ".join(sorted([plan.name, "m-fixed"]))}, []


@pytest.mark.parametrize("builder_of", [_hashing, _sorting], ids=["hashes", "sorts"])
def test_a_builder_that_reads_more_than_the_names_text_is_never_renamed(
    tmp_path: Path, builder_of: shapes.Build
) -> None:
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3"])
    builder = shapes.ShapeBuilder(builder_of)
    builder.prepare(plans)
    assert [builder.outputs(p) for p in plans] == [builder_of(p) for p in plans]
    assert builder.renamed == 0


def test_shared_alert_labels_equal_their_own_computation(tmp_path: Path) -> None:
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3"])
    shapes.share(plans, ALERT_LABELS, _alert_labels)
    for plan in plans:
        assert ALERT_LABELS in plan.derived
        assert alert_labels(plan) == _alert_labels(plan)
        assert any(labels.get("service") == plan.name for labels in alert_labels(plan))


def test_share_builds_nothing_for_a_shape_whose_plans_all_hold_the_value(tmp_path: Path) -> None:
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3"])
    built: list[str] = []

    def counting(plan: ServicePlan) -> list[dict[str, str]]:
        built.append(plan.name)
        return _alert_labels(plan)

    shapes.share(plans, ALERT_LABELS, counting)
    assert len(built) == 2  # the two stand-ins
    shapes.share(plans, ALERT_LABELS, counting)
    assert len(built) == 2
    del plans[1].derived[ALERT_LABELS]
    shapes.share(plans, ALERT_LABELS, counting)
    assert len(built) == 4 and alert_labels(plans[1]) == _alert_labels(plans[1])


def test_share_leaves_values_it_cannot_rename_to_be_built(tmp_path: Path) -> None:
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3"])
    shapes.share(plans, "digest", lambda p: hashlib.sha256(p.name.encode()).hexdigest())
    assert not any("digest" in plan.derived for plan in plans)


def test_fewer_copies_than_a_shape_costs_are_built_in_full(tmp_path: Path) -> None:
    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2"])  # two builds either way
    builder, got = _through_shapes(plans)
    assert builder.renamed == 0
    assert got == [_full(p) for p in plans]


def test_a_failing_stand_in_leaves_each_service_to_fail_under_its_own_name(
    tmp_path: Path,
) -> None:
    def failing(plan: ServicePlan) -> tuple[dict[str, str], list[Diagnostic]]:
        raise ObsgenError([Diagnostic(plan.source, "spec.metrics", "no example value")])

    plans = _plans_named(tmp_path, ["chat-a1", "chat-b2", "chat-c3"])
    builder = shapes.ShapeBuilder(failing)
    builder.prepare(plans)  # the stand-ins' errors are not the services' errors
    with pytest.raises(ObsgenError) as caught:
        builder.outputs(plans[1])
    assert str(caught.value.diagnostics[0]) == f"{plans[1].source}: spec.metrics: no example value"


@pytest.mark.parametrize(
    "value",
    [
        [{"alertname": "A", "service": "chat-a1", "job": "chat-a1-svc"}, {"x": "chat-a1/chat-a1"}],
        [{"chat-a1": "k"}, {"k": "v"}],
        [],
        [{"n": 1, "service": "chat-a1"}],  # not all text: the general walk
        ({"service": "chat-a1"},),
    ],
)
def test_renaming_label_lists_gives_what_the_general_walk_gives(value: Any) -> None:
    pairs = [("specs/chat-a1.yaml", "specs/chat-b2.yaml"), ("chat-a1", "chat-b2")]
    assert shapes._renamed(value, pairs) == shapes._rename_value(value, pairs, [])
    assert "chat-a1" not in repr(shapes._renamed(value, pairs))
