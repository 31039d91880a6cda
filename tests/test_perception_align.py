"""AlignDiagnoser: a tiny randomly initialised ALIGN, saved and loaded back offline, wired right."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from helper_agent.perception.align import AlignDiagnoser, DiagnoserUnavailable
from helper_agent.perception.diagnosis import FAILURE_KINDS, Diagnosis

# tests/conftest.py keeps the hub offline for the whole suite.
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

KEYS = [k.key for k in FAILURE_KINDS]
DESCRIPTIONS = {k.key: k.description for k in FAILURE_KINDS}
IMAGE_SIZE = 32


class FakeFallback:
    """Stands in for the TextDiagnoser: always answers `kind`, records what it was asked."""

    def __init__(self, kind: str = "too_far") -> None:
        self.kind = kind
        self.calls: list[tuple[str, object]] = []

    def diagnose(self, error: str, image: object | None = None) -> Diagnosis:
        self.calls.append((error, image))
        return Diagnosis(self.kind, DESCRIPTIONS[self.kind], 0.5, error)


def _image_processor():
    # transformers 5 without torchvision: the PIL backend (EfficientNetImageProcessor would warn
    # and fall back to it); transformers 4: EfficientNetImageProcessor is the PIL one.
    cls = (
        getattr(transformers, "EfficientNetImageProcessorPil", None)
        or transformers.EfficientNetImageProcessor
    )
    # The preprocessing of kakaobrain/align-base, only at 32x32.
    return cls(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        do_center_crop=False,
        rescale_factor=1 / 127.5,
        rescale_offset=True,
        do_normalize=False,
        include_top=False,
    )


def _tiny_align(vocab_size: int):
    config = transformers.AlignConfig(
        text_config={
            "vocab_size": vocab_size,
            "hidden_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 37,
            "max_position_embeddings": 64,  # AlignProcessor pads text to 64 tokens
        },
        # One EfficientNet block after the stem: 32x32 -> 16x16 (stem) -> 8x8 (block), 16 channels,
        # which equal projection_dim because ALIGN uses the pooled vision features unprojected.
        vision_config={
            "image_size": IMAGE_SIZE,
            "width_coefficient": 1.0,
            "depth_coefficient": 1.0,
            "kernel_sizes": [3],
            "in_channels": [32],
            "out_channels": [16],
            "strides": [2],
            "num_block_repeats": [1],
            "expand_ratios": [1],
            "depthwise_padding": [],
            "hidden_dim": 64,  # the mean-pool kernel; must cover the final 8x8 map
        },
        projection_dim=16,
        temperature_init_value=0.05,  # sharper logits, as a trained ALIGN has
    )
    torch.manual_seed(0)
    model = transformers.AlignModel(config).eval()
    # The default init (std 0.02) leaves every prompt's embedding nearly the same, so all logits
    # tie; wider weights give well separated logits, so argmax comparisons are meaningful.
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if name != "temperature":
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return model


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("align")
    words = {w for k in FAILURE_KINDS for w in re.findall(r"\w+|[^\w\s]", k.description.lower())}
    vocab_dir = root / "vocab"
    vocab_dir.mkdir()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens = specials + sorted(words | {"a", "photo", "where"})
    (vocab_dir / "vocab.txt").write_text("\n".join(tokens) + "\n")
    # from_pretrained on the folder works in transformers 4 and 5; in 5 `BertTokenizer(vocab_file=...)`
    # silently ignores the file and maps every word to [UNK].
    tokenizer = transformers.BertTokenizer.from_pretrained(str(vocab_dir), local_files_only=True)
    assert tokenizer.unk_token_id not in tokenizer("a photo where the agent's hands are full")["input_ids"]
    processor = transformers.AlignProcessor(image_processor=_image_processor(), tokenizer=tokenizer)
    model = _tiny_align(len(tokenizer))
    target = root / "tiny-align"
    model.save_pretrained(target)
    processor.save_pretrained(target)
    return target


@pytest.fixture(scope="module")
def diagnoser(saved: Path) -> AlignDiagnoser:
    return AlignDiagnoser.from_pretrained(saved, fallback=FakeFallback())


def _images() -> list[np.ndarray]:
    rng = np.random.default_rng(7)
    frames = [rng.integers(0, 256, size=(48, 64, 3), dtype=np.uint8) for _ in range(5)]
    frames.append(np.full((40, 40, 3), 255, dtype=np.uint8))
    frames.append(np.zeros((40, 40, 3), dtype=np.uint8))
    return frames


def test_model_is_tiny(diagnoser: AlignDiagnoser) -> None:
    assert sum(p.numel() for p in diagnoser.model.parameters()) < 50_000


def test_image_diagnosis_is_a_failure_kind_with_its_description(diagnoser: AlignDiagnoser) -> None:
    for frame in _images():
        result = diagnoser.diagnose("Mug|+1.25|+0.90|-0.50 is too far away", Image.fromarray(frame))
        assert result.kind in KEYS
        assert result.description == DESCRIPTIONS[result.kind]
        assert result.error == "Mug|+1.25|+0.90|-0.50 is too far away"
        assert 0.0 < result.score <= 1.0
    assert diagnoser.fallback.calls == []  # images never consult the text fallback


def test_deterministic_and_array_equals_pil(diagnoser: AlignDiagnoser) -> None:
    frame = _images()[0]
    first = diagnoser.diagnose("failed", frame)
    assert diagnoser.diagnose("failed", frame) == first
    assert diagnoser.diagnose("failed", Image.fromarray(frame)) == first
    np.testing.assert_array_equal(diagnoser.image_logits(frame), diagnoser.image_logits(frame))


def test_matches_argmax_of_align_forward_logits(diagnoser: AlignDiagnoser) -> None:
    prompts = list(diagnoser.prompts)
    assert prompts[0] == "a photo where the object is already turned on"
    seen = []
    for frame in _images():
        image = Image.fromarray(frame)
        inputs = diagnoser.processor(text=prompts, images=image, return_tensors="pt")
        with torch.no_grad():
            direct = diagnoser.model(**inputs).logits_per_image[0].numpy()
        ranked = np.sort(direct)
        assert ranked[-1] - ranked[-2] > 1e-3, "logits tie; the argmax check would mean nothing"
        np.testing.assert_allclose(diagnoser.image_logits(image), direct, rtol=1e-4, atol=1e-4)
        result = diagnoser.diagnose("failed", image)
        assert result.kind == KEYS[int(np.argmax(direct))]
        seen.append(direct)
    # A random tiny model tends to favour one kind for every image, but the image must move the scores.
    assert np.ptp(np.stack(seen), axis=0).max() > 1e-2, "the image does not reach the scores"


def test_text_embeddings_are_computed_once(saved: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diagnoser = AlignDiagnoser.from_pretrained(saved)
    calls = []
    original = diagnoser.model.get_text_features

    def spy(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(diagnoser.model, "get_text_features", spy)
    for frame in _images()[:3]:
        diagnoser.diagnose("failed", frame)
    assert len(calls) == 1
    assert diagnoser.text_embeddings() is diagnoser.text_embeddings()
    assert tuple(diagnoser.text_embeddings().shape) == (len(FAILURE_KINDS), 16)


def test_constructor_takes_a_built_model(saved: Path) -> None:
    model = transformers.AlignModel.from_pretrained(saved, local_files_only=True)
    processor = transformers.AlignProcessor.from_pretrained(saved, local_files_only=True)
    built = AlignDiagnoser(model, processor)
    loaded = AlignDiagnoser.from_pretrained(saved)
    frame = _images()[1]
    assert built.diagnose("failed", frame) == loaded.diagnose("failed", frame)


def test_no_image_falls_back_to_the_text_diagnoser(saved: Path) -> None:
    fallback = FakeFallback("hands_full")
    diagnoser = AlignDiagnoser.from_pretrained(saved, fallback=fallback)
    result = diagnoser.diagnose("Agent's hand is already holding Mug")
    assert result.kind == "hands_full"
    assert fallback.calls == [("Agent's hand is already holding Mug", None)]


def test_no_image_and_no_fallback_is_a_clear_error(saved: Path) -> None:
    diagnoser = AlignDiagnoser.from_pretrained(saved)
    with pytest.raises(ValueError, match="needs an image"):
        diagnoser.diagnose("failed")


def test_combine_mode_mixes_the_text_vote(saved: Path) -> None:
    frame = _images()[0]
    image_only = AlignDiagnoser.from_pretrained(saved).diagnose("failed", frame)
    other = next(k for k in KEYS if k != image_only.kind)
    heavy = AlignDiagnoser.from_pretrained(saved, fallback=FakeFallback(other), text_weight=0.9)
    assert heavy.diagnose("failed", frame).kind == other
    agreeing = AlignDiagnoser.from_pretrained(saved, fallback=FakeFallback(image_only.kind), text_weight=0.3)
    assert agreeing.diagnose("failed", frame).kind == image_only.kind
    with pytest.raises(ValueError, match="fallback"):
        AlignDiagnoser.from_pretrained(saved, text_weight=0.5)


def test_missing_weights_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-align"
    with pytest.raises(DiagnoserUnavailable, match=re.escape(str(missing))):
        AlignDiagnoser.from_pretrained(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DiagnoserUnavailable, match=re.escape(str(empty))):
        AlignDiagnoser.from_pretrained(empty)


def test_missing_transformers_is_reported(monkeypatch: pytest.MonkeyPatch, saved: Path) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(DiagnoserUnavailable, match="vlm"):
        AlignDiagnoser.from_pretrained(saved)


def test_bad_images_are_rejected(diagnoser: AlignDiagnoser) -> None:
    with pytest.raises(ValueError, match="uint8"):
        diagnoser.diagnose("failed", np.zeros((8, 8, 3), dtype=np.float32))
    with pytest.raises(ValueError, match="HxWx3"):
        diagnoser.diagnose("failed", np.zeros((8, 8, 5), dtype=np.uint8))
    with pytest.raises(TypeError):
        diagnoser.diagnose("failed", [[0, 0, 0]])
