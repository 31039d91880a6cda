"""An OpenVINO model folder made from a GGUF file's weights, with no torch and no converter venv.

OpenVINO GenAI builds a model from a GGUF file itself, but its reader takes only some tensor types:
the 0.5B's Q4_K_M file keeps its embedding and most feed-forward matrices in Q5_0, which it refuses
("gguf_tensor_to_f16 failed"). The 1.5B's file (Q4_K and Q6_K only) it reads as it is. So:

1. `write_readable_gguf` copies the file, re-encoding tensors as Q8_0 (8-bit, blocks of 32: a Q5_0
   block's 32 levels fit in it with an error under half a percent of the block's largest value).
   Which ones, `KEPT_TYPES` says per folder: `gguf` re-encodes only the types the reader refuses, so
   the model keeps its authors' 4- and 6-bit blocks wherever OpenVINO can run them; `q8` re-encodes
   every quantized tensor, which agrees best with llama.cpp's greedy output on the same file
   (`benchmarks/weights_agreement_bench.py`). `openvino_models.DEFAULT_WEIGHTS` says which each model
   runs on. Metadata and the tensors kept are copied byte for byte.
2. `save_openvino_folder` has GenAI read that file and save what it built (`enable_save_ov_model`):
   the model, the tokenizer and the detokenizer, with the chat template in the tokenizer's metadata.
   Later loads read the folder, which takes about 2 s instead of 10.

Both steps need only numpy, the `gguf` package and openvino-genai, which the `local` extra installs:
a fresh machine needs no second venv and no torch for the model (`docs/guides/local-model.md` has the
cold-start figures). The transformers-based conversion (`convert_gguf.py`) stays for the `int8` and
`int4` folders that `benchmarks/llm_bench.py` compares against.
"""

from __future__ import annotations

import gc
import shutil
from collections import Counter
from pathlib import Path

READABLE_TYPES = frozenset({"F32", "Q8_0", "Q4_K", "Q6_K"})
"""Tensor types OpenVINO GenAI 2026.4's GGUF reader was checked to load here (the 0.5B's and the
1.5B's files); any other type is re-encoded as Q8_0."""

KEPT_TYPES = {"gguf": READABLE_TYPES, "q8": frozenset({"F32", "Q8_0"})}
"""Which tensor types each folder keeps as the file has them; the rest are re-encoded as Q8_0.
`gguf` keeps every type GenAI reads (the file's own 4- and 6-bit blocks); `q8` re-encodes every
quantized tensor as Q8_0, 8-bit blocks of 32 made from the file's dequantized values."""

SAVED_FILES = ("openvino_model.xml", "openvino_model.bin", "openvino_tokenizer.xml", "openvino_detokenizer.xml")
"""What a folder GenAI saved from a GGUF file must hold to be loaded again."""


def write_readable_gguf(source: Path, target: Path, keep: frozenset[str] = READABLE_TYPES) -> Counter[str]:
    """Copy GGUF `source` to `target`, re-encoding tensors of types outside `keep` (a subset of
    `READABLE_TYPES`) as Q8_0. Returns how many tensors were re-encoded, by their original type."""
    from gguf import (  # deferred: `local` extra
        GGMLQuantizationType,
        GGUFReader,
        GGUFValueType,
        GGUFWriter,
        quants,
    )

    reader = GGUFReader(source)
    writer = GGUFWriter(target, reader.fields["general.architecture"].contents())
    for name, field in reader.fields.items():
        # the writer sets the architecture itself; GGUF.* are the reader's own view of the header
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        kind = field.types[0]
        item = field.types[1] if kind == GGUFValueType.ARRAY else None
        writer.add_key_value(name, field.contents(), kind, sub_type=item)
    re_encoded: Counter[str] = Counter()
    for tensor in reader.tensors:
        kind = tensor.tensor_type
        if kind.name in keep:
            writer.add_tensor(tensor.name, tensor.data, raw_dtype=kind)
            continue
        values = quants.dequantize(tensor.data, kind)
        writer.add_tensor(tensor.name, quants.quantize(values, GGMLQuantizationType.Q8_0),
                          raw_dtype=GGMLQuantizationType.Q8_0)
        re_encoded[kind.name] += 1
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return re_encoded


def save_openvino_folder(gguf: Path, folder: Path) -> None:
    """Have OpenVINO GenAI build the model from `gguf` and save it into `folder` (a new folder).

    GenAI saves beside the file it read, so the file is moved into `folder` for the build and removed
    after: the folder keeps only what GenAI wrote."""
    import openvino_genai  # deferred: the `local` extra

    folder.mkdir(parents=True, exist_ok=True)
    staged = folder / gguf.name
    shutil.move(str(gguf), staged)
    pipeline = openvino_genai.LLMPipeline(str(staged), "CPU", enable_save_ov_model=True)
    del pipeline
    gc.collect()
    staged.unlink()
    missing = [name for name in SAVED_FILES if not (folder / name).exists()]
    if missing:
        raise RuntimeError(f"OpenVINO GenAI read {gguf.name} but did not save {', '.join(missing)} into {folder}")
