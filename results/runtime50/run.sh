#!/bin/bash
# HELPER on the first 50 valid_unseen TfD episodes of the seed-0 benchmark (packaged memory, workers 1,
# one round of feedback), each local model on each runtime: OpenVINO (int8, the default) and llama.cpp
# (the AVX-512 build `make install-llama` makes here). One LLM job at a time (flock /tmp/llm.lock).
#   DATA=folder written by `helper bench generate --out DATA` (seed 0)
set -eu
OUT=${OUT:-results/runtime50}
run() {  # name llm
  flock /tmp/llm.lock python benchmarks/planner_bench.py --data "$DATA" --limit 50 --llm "$2" \
      --out "$OUT/$1" --json "$OUT/$1/figures.json"
}
for cell in ${CELLS:-openvino-0.5b openvino-1.5b llama.cpp-0.5b llama.cpp-1.5b}; do
  runtime=${cell%-*}; size=${cell##*-}
  run "$cell" "local:$size@$runtime"
done
