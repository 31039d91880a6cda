#!/bin/bash
# HELPER on the first 50 valid_unseen TfD episodes of the seed-0 benchmark (packaged memory, workers 1),
# with the portable build (the venv's llama-cpp-python, -DGGML_NATIVE=OFF) and the AVX-512 build
# (-DGGML_NATIVE=OFF -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON,
# what tools/llama_cmake_args.py gives this CPU), swapped in through LLAMA_CPP_LIB_PATH. One LLM job at a time.
#   DATA=folder written by `helper bench generate` (seed 0)  AVX512_LIB=folder with the AVX-512 build's libraries
set -eu
OUT=${OUT:-results/planner-builds}
run() {  # name llm [VAR=value ...]
  local name=$1 llm=$2; shift 2
  env "$@" python benchmarks/planner_bench.py --data "$DATA" --limit 50 --llm "$llm" \
      --out "$OUT/$name" --json "$OUT/$name/figures.json"
}
run 0.5b-today local
run 0.5b-avx512 local LLAMA_CPP_LIB_PATH="$AVX512_LIB" LD_LIBRARY_PATH="$AVX512_LIB"
run 1.5b-avx512 local:1.5b LLAMA_CPP_LIB_PATH="$AVX512_LIB" LD_LIBRARY_PATH="$AVX512_LIB"
