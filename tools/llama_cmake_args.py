"""CMake flags for a faster llama.cpp (llama-cpp-python) build on this machine: portable x86-64 code
plus the AVX-512 extensions this machine's CPU reports, and never AMX. `make install-local` builds with
them by default; on HELPER's 50-episode planner run they kept SR (76.0) and cut the median LLM seconds
per episode by a fifth (docs/guides/local-model.md).

Why not `GGML_NATIVE=ON`: llama.cpp's native build takes an AMX path that crashed on these CPUs (the
kernel here does not expose AMX). Why not plain `GGML_NATIVE=OFF` (AVX2/FMA/F16C) everywhere: on a CPU
with AVX-512 VNNI its kernels evaluate prompts faster (`benchmarks/llm_bench.py`). So the flags are
`-DGGML_NATIVE=OFF` plus `-DGGML_AVX512=ON` when the CPU reports AVX-512 F, CD, VL, DQ and BW (what
ggml's AVX512 option compiles for), and its VBMI, VNNI and BF16 options when reported too. A CPU
without AVX-512 (a plain AVX2 machine), a CPU that is not x86-64 and a system without /proc/cpuinfo
get `-DGGML_NATIVE=OFF` alone: today's portable build. The build is then for the CPU family it was
made on, as a native build is (`tools/avx2_check.sh` runs a build on an emulated AVX2-only CPU).

    python tools/llama_cmake_args.py [CPUINFO_FILE]

Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

BASE = "-DGGML_NATIVE=OFF"
AVX512_BASE = ("avx512f", "avx512cd", "avx512vl", "avx512dq", "avx512bw")
AVX512_EXTRAS = (("avx512vbmi", "-DGGML_AVX512_VBMI=ON"), ("avx512_vnni", "-DGGML_AVX512_VNNI=ON"),
                 ("avx512_bf16", "-DGGML_AVX512_BF16=ON"))


def cpu_flags(cpuinfo: str) -> set[str]:
    """The feature flags of the first CPU in /proc/cpuinfo text (x86: `flags`; empty elsewhere)."""
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "flags":
            return set(value.split())
    return set()


def cmake_args(flags: set[str]) -> str:
    """The flags for a CPU reporting `flags`: AVX-512 options only for what it reports; no AMX."""
    args = [BASE]
    if all(f in flags for f in AVX512_BASE):
        args.append("-DGGML_AVX512=ON")
        args += [arg for flag, arg in AVX512_EXTRAS if flag in flags]
    return " ".join(args)


def main(argv: list[str]) -> None:
    path = Path(argv[1] if len(argv) > 1 else "/proc/cpuinfo")
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    print(cmake_args(cpu_flags(text)))


if __name__ == "__main__":
    main(sys.argv)
