"""Convert a GGUF model to an OpenVINO model folder (int8 weights), once, in the converter's own venv.

Run by `helper_agent.llm.openvino_models` with the converter venv's Python, never imported by the
package at run time:

    CONVERTER_PYTHON convert_gguf.py MODEL.gguf OUT_DIR [--weight-format int8]

Why a venv of its own: the conversion needs transformers (to read the GGUF into a checkpoint), accelerate,
gguf, optimum-intel and nncf, and optimum-intel pins transformers and huggingface-hub below what
sentence-transformers takes in the project's venv, and pulls a torchvision that breaks transformers'
model imports beside the CPU build of torch. None of that is needed to run the converted model, which
needs only openvino-genai.

OpenVINO GenAI reads some GGUF files itself, but not ours: the 0.5B's Q4_K_M file keeps its
embedding and several layers in Q5_0, which its reader refuses. So the weights go through
transformers (dequantized to float32), then optimum-intel writes the stateful OpenVINO model with
int8 weights (nncf) and the tokenizer and detokenizer models openvino-genai reads.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def convert(gguf: Path, out: Path, weight_format: str) -> None:
    # deferred: these live in the converter venv only (see the module docstring), never in the package's.
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gguf-checkpoint-") as checkpoint:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        model.save_pretrained(checkpoint)
        tokenizer.save_pretrained(checkpoint)
        del model
        print(f"read {gguf.name} into a checkpoint in {time.perf_counter() - started:.0f} s", flush=True)
        # optimum-cli, not `main_export`: the command applies the weight compression after the export
        # (`main_export` with a quantization config wrote float32 weights).
        subprocess.run([str(Path(sys.executable).with_name("optimum-cli")), "export", "openvino", "--model", checkpoint,
                        "--task", "text-generation-with-past", "--weight-format", weight_format, str(out)], check=True)
    print(f"wrote {out} in {time.perf_counter() - started:.0f} s", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gguf", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--weight-format", choices=("int8", "int4"), default="int8")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    convert(args.gguf, args.out, args.weight_format)
    return 0


if __name__ == "__main__":
    sys.exit(main())
