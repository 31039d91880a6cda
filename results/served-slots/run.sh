#!/bin/bash
# Issue 37: the 0.5B served by llama.cpp's llama-server with 1, 2, 4 parallel slots; HELPER with 1, 2, 4 workers on 10 episodes.
set -u
cd "$(git rev-parse --show-toplevel)"
export HELPER_LLM_TOKENIZER=local HELPER_LLM_GRAMMAR=llama.cpp HELPER_LLM_TIMEOUT=900
SERVER=${SERVER:?path of llama-server}
OUT=${OUT:-results/served-slots}
mkdir -p $OUT
uptime > $OUT/load.txt
flock /tmp/llm.lock .venv/bin/python benchmarks/cluster_bench.py --part served --data /tmp/sessions-served/bench \
  --served-episodes 10 --slots-list ${SLOTS:-1,2,4} --workers-list ${WORKERS:-1,2,4} --keep $OUT \
  --server-command "$SERVER -m {model} --host 127.0.0.1 --port {port} -np {slots} -c 16384 -t 2 --alias qwen" \
  --json $OUT/figures-s${SLOTS:-1,2,4}.json
uptime >> $OUT/load.txt
