"""The GGUF file made readable for OpenVINO GenAI (`helper_agent.llm.gguf_openvino`), and the `gguf`
folders `prepare_openvino_model` builds from it: small files in the real GGUF format, written with
the `gguf` package; GenAI's own build is replaced where a test needs no real model."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from helper_agent.llm.errors import LLMUnavailable  # noqa: E402
from helper_agent.llm.gguf_openvino import READABLE_TYPES, write_readable_gguf  # noqa: E402
from helper_agent.llm.openvino_models import STAMP, is_prepared, openvino_model_dir, prepare_openvino_model  # noqa: E402

Q = gguf.GGMLQuantizationType


def small_gguf(path: Path, values: dict[str, np.ndarray], kinds: dict[str, object]) -> None:
    """A GGUF file in the layout of the shipped models: qwen2 metadata, tokens, tensors of `kinds`."""
    writer = gguf.GGUFWriter(path, "qwen2")
    writer.add_block_count(2)
    writer.add_context_length(4096)
    writer.add_string("tokenizer.chat_template", "{{ messages }} ünïcode")
    writer.add_token_list(["<a>", "b", "ĠHello"])
    writer.add_array("tokenizer.ggml.token_type", [1, 1, 3])
    writer.add_float32("qwen2.attention.layer_norm_rms_epsilon", 1e-6)
    for name, array in values.items():
        kind = kinds[name]
        if kind == Q.F32:
            writer.add_tensor(name, array)
        elif kind == Q.Q4_K:  # gguf-py cannot quantize K types: random blocks stand in (copied, never read)
            block, size = gguf.GGML_QUANT_SIZES[Q.Q4_K]
            raw = np.random.default_rng(7).integers(0, 256, (array.shape[0], array.shape[1] // block * size), np.uint8)
            writer.add_tensor(name, raw, raw_dtype=kind)
        else:
            writer.add_tensor(name, gguf.quants.quantize(array, kind), raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def field_value(reader: object, key: str) -> object:
    return reader.fields[key].contents()  # type: ignore[attr-defined]


def test_refused_types_are_re_encoded_as_q8_0_and_everything_else_is_copied(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    values = {"token_embd.weight": rng.normal(size=(8, 64)).astype(np.float32),
              "blk.0.ffn_up.weight": rng.normal(size=(4, 256)).astype(np.float32),
              "blk.0.attn_norm.weight": rng.normal(size=(64,)).astype(np.float32),
              "output.weight": rng.normal(size=(8, 64)).astype(np.float32)}
    kinds = {"token_embd.weight": Q.Q5_0, "blk.0.ffn_up.weight": Q.Q4_K, "blk.0.attn_norm.weight": Q.F32,
             "output.weight": Q.Q5_1}
    source, target = tmp_path / "model.gguf", tmp_path / "readable.gguf"
    small_gguf(source, values, kinds)

    re_encoded = write_readable_gguf(source, target)

    assert re_encoded == {"Q5_0": 1, "Q5_1": 1}
    before, after = gguf.GGUFReader(source), gguf.GGUFReader(target)
    assert {t.name: t.tensor_type.name for t in after.tensors} == {
        "token_embd.weight": "Q8_0", "blk.0.ffn_up.weight": "Q4_K", "blk.0.attn_norm.weight": "F32",
        "output.weight": "Q8_0"}
    assert all(t.tensor_type.name in READABLE_TYPES for t in after.tensors)
    old = {t.name: t for t in before.tensors}
    for tensor in after.tensors:
        original = old[tensor.name]
        if tensor.tensor_type == original.tensor_type:  # copied byte for byte
            assert np.array_equal(np.asarray(tensor.data), np.asarray(original.data))
            continue
        want = gguf.quants.dequantize(original.data, original.tensor_type)
        got = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        assert got.shape == want.shape
        # Q8_0 keeps every block of 32 within half a step of 1/127 of the block's largest value
        blocks_want, blocks_got = want.reshape(-1, 32), got.reshape(-1, 32)
        bound = np.abs(blocks_want).max(axis=1, keepdims=True) / 127 * 0.51 + 1e-3
        assert (np.abs(blocks_got - blocks_want) <= bound).all()
    for key in ("qwen2.block_count", "qwen2.context_length", "tokenizer.chat_template", "tokenizer.ggml.tokens",
                "tokenizer.ggml.token_type", "qwen2.attention.layer_norm_rms_epsilon", "general.architecture"):
        assert field_value(after, key) == field_value(before, key), key


def test_a_file_with_only_readable_types_keeps_every_tensor(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    values = {"blk.0.ffn_down.weight": rng.normal(size=(4, 256)).astype(np.float32),
              "blk.0.ffn_gate.weight": rng.normal(size=(2, 64)).astype(np.float32)}
    source, target = tmp_path / "model.gguf", tmp_path / "readable.gguf"
    small_gguf(source, values, {"blk.0.ffn_down.weight": Q.Q4_K, "blk.0.ffn_gate.weight": Q.Q8_0})
    assert write_readable_gguf(source, target) == {}
    for a, b in zip(gguf.GGUFReader(source).tensors, gguf.GGUFReader(target).tensors, strict=True):
        assert (a.name, a.tensor_type) == (b.name, b.tensor_type)
        assert np.array_equal(np.asarray(a.data), np.asarray(b.data))


@pytest.fixture
def models_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache with a small GGUF file standing in for the assembled 0.5B."""
    import helper_agent.llm.openvino_models as models

    monkeypatch.setenv("HELPER_MODEL_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HELPER_CONVERTER_DIR", str(tmp_path / "no-converter"))
    source = tmp_path / "m.gguf"
    small_gguf(source, {"token_embd.weight": np.ones((2, 64), np.float32)}, {"token_embd.weight": Q.Q5_0})
    monkeypatch.setattr(models, "assemble_local_model", lambda size: source)
    return source


def test_a_gguf_folder_is_built_without_the_converter_and_stamped(models_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import helper_agent.llm.openvino_models as models

    seen: list[list[str]] = []

    def fake_build(readable: Path, folder: Path) -> None:  # GenAI's build: records what it was handed
        seen.append([t.tensor_type.name for t in gguf.GGUFReader(readable).tensors])
        folder.mkdir(parents=True)
        (folder / "openvino_model.xml").write_text("<net/>")

    monkeypatch.setattr(models, "save_openvino_folder", fake_build)
    folder = prepare_openvino_model("0.5b", "gguf")

    assert seen == [["Q8_0"]]  # GenAI was handed the readable file, not the shipped one
    assert folder == openvino_model_dir("0.5b", "gguf") and folder.name.endswith("-gguf")
    assert json.loads((folder / STAMP).read_text())["weight_format"] == "gguf"
    assert is_prepared("0.5b", "gguf") and not is_prepared("0.5b", "int8")
    assert sorted(p.name for p in folder.parent.iterdir() if not p.name.endswith(".lock")) == [folder.name]
    assert prepare_openvino_model("0.5b", "gguf") == folder and len(seen) == 1  # made once


def test_a_failed_build_names_the_file_and_leaves_nothing_half_made(models_home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import helper_agent.llm.openvino_models as models

    def failing_build(readable: Path, folder: Path) -> None:
        folder.mkdir(parents=True)
        (folder / "openvino_model.bin").write_bytes(b"half")
        raise RuntimeError("gguf_tensor_to_f16 failed")

    monkeypatch.setattr(models, "save_openvino_folder", failing_build)
    with pytest.raises(LLMUnavailable, match=r"m\.gguf failed: gguf_tensor_to_f16 failed"):
        prepare_openvino_model("0.5b", "gguf")
    root = openvino_model_dir("0.5b", "gguf").parent
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock")] == []
    assert not is_prepared("0.5b", "gguf")


def test_converted_weights_still_need_the_converter_and_say_how_to_get_it(models_home: Path) -> None:
    with pytest.raises(LLMUnavailable, match="make install-converter"):
        prepare_openvino_model("0.5b", "int8")
    with pytest.raises(LLMUnavailable, match="unknown weight format 'fp4'"):
        prepare_openvino_model("0.5b", "fp4")


def test_the_q8_folder_re_encodes_every_quantized_tensor_and_keeps_float_ones(tmp_path: Path) -> None:
    from helper_agent.llm.gguf_openvino import KEPT_TYPES

    rng = np.random.default_rng(2)
    values = {"a.weight": rng.normal(size=(4, 256)).astype(np.float32), "b.weight": rng.normal(size=(64,)).astype(np.float32),
              "c.weight": rng.normal(size=(2, 64)).astype(np.float32)}
    source, target = tmp_path / "model.gguf", tmp_path / "q8.gguf"
    small_gguf(source, values, {"a.weight": Q.Q4_K, "b.weight": Q.F32, "c.weight": Q.Q5_0})
    assert write_readable_gguf(source, target, KEPT_TYPES["q8"]) == {"Q4_K": 1, "Q5_0": 1}
    assert {t.name: t.tensor_type.name for t in gguf.GGUFReader(target).tensors} == {
        "a.weight": "Q8_0", "b.weight": "F32", "c.weight": "Q8_0"}
    assert KEPT_TYPES["q8"] <= READABLE_TYPES and KEPT_TYPES["gguf"] == READABLE_TYPES
