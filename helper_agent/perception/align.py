"""Image-based failure diagnosis with ALIGN (Jia et al., 2021) through `transformers`.

HELPER diagnoses a failed action by asking a vision-language model which of a fixed list of
failure descriptions best matches the current egocentric image. `AlignDiagnoser` does that with
ALIGN's image-text similarity and has the `FailureDiagnoser` interface of `perception/diagnosis.py`,
so it can replace the default `TextDiagnoser` where frames and weights exist.

* Each failure description becomes a prompt, ``"a photo where <description>"`` by default
  ("The object is already turned on." -> "a photo where the object is already turned on").
  The prompts' text embeddings are computed once, on first use, and cached.
* `diagnose(error, image)` embeds the image and scores it against every prompt with ALIGN's
  logits, exactly as `AlignModel.forward` computes `logits_per_image`: cosine similarity of the
  L2-normalised embeddings divided by the learnt temperature. The best kind wins; the reported
  score is its softmax probability over the kinds.
* Without an image it delegates to the `fallback` diagnoser (typically the `TextDiagnoser`) and
  raises `ValueError` when there is none.
* Combine mode (``text_weight`` > 0, needs a fallback): the fallback's text diagnosis is mixed in
  as a one-hot vote, ``score = (1 - w) * softmax(image logits) + w * [kind == text kind]``.
  With ``w > 0.5`` the text diagnosis always wins and the image only matters when the text
  diagnosis names a kind outside this diagnoser's list; with small ``w`` the text vote decides
  between kinds the image scores nearly alike. ``w = 0`` (the default) is image only.

Weights are never downloaded: `from_pretrained` reads a local directory (e.g. a saved
``kakaobrain/align-base``) with ``local_files_only=True`` unless told otherwise, and raises
`DiagnoserUnavailable` when the weights or the optional ``vlm`` extra (`transformers`) are missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from helper_agent.perception.diagnosis import FAILURE_KINDS, Diagnosis, FailureDiagnoser, FailureKind

DEFAULT_PROMPT = "a photo where {description}"


class DiagnoserUnavailable(RuntimeError):
    """The diagnoser cannot be built here: its weights or its optional dependencies are missing."""


class AlignDiagnoser:
    """Picks the failure description that ALIGN scores highest against the current image."""

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        fallback: FailureDiagnoser | None = None,
        kinds: Sequence[FailureKind] = FAILURE_KINDS,
        prompt: str = DEFAULT_PROMPT,
        text_weight: float = 0.0,
        device: Any | None = None,
    ) -> None:
        if not 0.0 <= text_weight <= 1.0:
            raise ValueError(f"text_weight must lie in [0, 1], got {text_weight}")
        if text_weight > 0.0 and fallback is None:
            raise ValueError("combine mode (text_weight > 0) needs a fallback text diagnoser")
        if "{description}" not in prompt:
            raise ValueError(f"prompt must contain '{{description}}', got {prompt!r}")
        self.kinds = tuple(kinds)
        if not self.kinds:
            raise ValueError("AlignDiagnoser needs at least one failure kind")
        self.model = model
        self.processor = processor
        self.fallback = fallback
        self.text_weight = float(text_weight)
        self.prompts = tuple(prompt.format(description=_as_clause(k.description)) for k in self.kinds)
        self.device = device if device is not None else _model_device(model)
        self.model.eval()
        self._text_embeds: Any | None = None  # torch.Tensor (kinds x dim), L2-normalised

    @classmethod
    def from_pretrained(
        cls,
        path_or_name: str | Path,
        *,
        device: str = "cpu",
        local_files_only: bool = True,
        **kwargs: Any,
    ) -> AlignDiagnoser:
        """Load `AlignModel` + `AlignProcessor` from a directory (or, if allowed, a hub cache).

        Extra keyword arguments (``fallback``, ``kinds``, ``prompt``, ``text_weight``) go to the
        constructor. Raises `DiagnoserUnavailable` naming the path when the weights cannot be
        loaded, and when `transformers`/`torch` are not installed.
        """
        try:
            import torch  # noqa: F401
            from transformers import AlignModel, AlignProcessor
        except ImportError as exc:
            raise DiagnoserUnavailable(
                "the ALIGN diagnoser needs `transformers` and `torch` "
                f"(install the optional extra: pip install 'helper-agent[vlm]'): {exc}"
            ) from exc
        source = str(path_or_name)
        local = Path(source).expanduser()
        if local_files_only and _looks_like_path(source) and not local.is_dir():
            raise DiagnoserUnavailable(f"no ALIGN weights at {source}: no such directory")
        where = str(local) if local.is_dir() else source
        try:
            model = AlignModel.from_pretrained(where, local_files_only=local_files_only)
            processor = AlignProcessor.from_pretrained(where, local_files_only=local_files_only)
        except (OSError, ValueError) as exc:
            note = " (local_files_only=True: nothing is downloaded)" if local_files_only else ""
            raise DiagnoserUnavailable(f"cannot load ALIGN weights from {source}{note}: {exc}") from exc
        model.to(device)
        return cls(model, processor, device=device, **kwargs)

    # -- scoring -----------------------------------------------------------------------------

    def text_embeddings(self) -> Any:
        """The prompts' L2-normalised ALIGN text embeddings (kinds x dim), computed once."""
        if self._text_embeds is None:
            import torch

            inputs = self.processor(text=list(self.prompts), return_tensors="pt")
            inputs = {k: v.to(self.device) for k, v in inputs.items()}
            with torch.inference_mode():
                embeds = _features(self.model.get_text_features(**inputs))
                self._text_embeds = embeds / embeds.norm(p=2, dim=-1, keepdim=True)
        return self._text_embeds

    def image_logits(self, image: Any) -> np.ndarray:
        """ALIGN's image-text logits of `image` against each kind's prompt, in `self.kinds` order."""
        import torch

        text = self.text_embeddings()
        pixels = self.processor(images=_to_pil(image), return_tensors="pt")["pixel_values"].to(self.device)
        with torch.inference_mode():
            embeds = _features(self.model.get_image_features(pixel_values=pixels))
            embeds = embeds / embeds.norm(p=2, dim=-1, keepdim=True)
            logits = embeds @ text.t() / self.model.temperature
        return logits[0].float().cpu().numpy()

    def diagnose(self, error: str, image: Any | None = None) -> Diagnosis:
        if image is None:
            if self.fallback is None:
                raise ValueError(
                    "AlignDiagnoser needs an image to diagnose a failure and has no fallback diagnoser"
                )
            return self.fallback.diagnose(error)
        logits = self.image_logits(image).astype(np.float64)
        scores = np.exp(logits - logits.max())
        scores /= scores.sum()
        if self.text_weight > 0.0 and self.fallback is not None:
            vote = self.fallback.diagnose(error)
            onehot = np.array([k.key == vote.kind for k in self.kinds], dtype=np.float64)
            scores = (1.0 - self.text_weight) * scores + self.text_weight * onehot
        best = int(np.argmax(scores))
        kind = self.kinds[best]
        return Diagnosis(kind.key, kind.description, float(scores[best]), error)


def _as_clause(description: str) -> str:
    """Turn a description sentence into a clause: 'The object is on.' -> 'the object is on'."""
    text = description.strip().rstrip(".")
    return text[:1].lower() + text[1:]


def _features(output: Any) -> Any:
    """`get_*_features` return a tensor in transformers 4 and a model output in transformers 5."""
    pooled = getattr(output, "pooler_output", None)
    return output if pooled is None else pooled


def _model_device(model: Any) -> Any:
    device = getattr(model, "device", None)
    if device is not None:
        return device
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration):
        return "cpu"


def _looks_like_path(source: str) -> bool:
    """Absolute, home- or dot-relative names are paths; ``owner/name`` may be a cached hub id."""
    return source.startswith(("/", "~", ".")) or Path(source).expanduser().is_absolute()


def _to_pil(image: Any) -> Any:
    """A PIL image or an HxWx3 (HxWx4, HxW) uint8 array -> an RGB PIL image."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    if isinstance(image, np.ndarray):
        if image.dtype != np.uint8:
            raise ValueError(f"image arrays must be uint8 (HxWx3), got dtype {image.dtype}")
        if image.ndim == 2:
            return Image.fromarray(image).convert("RGB")
        if image.ndim == 3 and image.shape[2] in (3, 4):
            return Image.fromarray(np.ascontiguousarray(image[:, :, :3]))
        raise ValueError(f"image arrays must be HxWx3 uint8, got shape {image.shape}")
    raise TypeError(f"expected a PIL.Image or a numpy HxWx3 uint8 array, got {type(image).__name__}")
