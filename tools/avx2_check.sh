#!/usr/bin/env bash
# Does this .venv's llama.cpp run on a CPU without AVX-512? Runs a 4-token greedy completion under QEMU's
# user-mode emulation of an Intel Haswell (AVX2, FMA, F16C; QEMU 7.2+ emulates AVX2 but no AVX-512), so any
# AVX-512 instruction in the library stops it with SIGILL. The check is slow (emulated: a minute or two).
#   apt-get install -y qemu-user
#   tools/avx2_check.sh [PYTHON] [MODEL.gguf]
# Exit 0 and "ok" when it ran; the signal's status (132 for SIGILL) when it did not.
set -u
PY=${1:-.venv/bin/python}
MODEL=${2:-$HOME/.cache/helper-agent/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
command -v qemu-x86_64 >/dev/null || { echo "needs qemu-x86_64 (apt-get install -y qemu-user)" >&2; exit 2; }
[ -f "$MODEL" ] || { echo "no model at $MODEL (run make demo once, or pass a GGUF file)" >&2; exit 2; }
qemu-x86_64 -cpu Haswell "$PY" - "$MODEL" <<'PYEOF'
import sys

import llama_cpp

print("system info:", llama_cpp.llama_print_system_info().decode())
llm = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=64, n_threads=1, verbose=False)
out = llm("def add(a, b):", max_tokens=4, temperature=0.0)
print("ok:", repr(out["choices"][0]["text"]))
PYEOF
