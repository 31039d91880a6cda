#!/bin/bash
# The runs in results/served10: the same 10 valid_unseen TfD episodes in-process and behind
# llama-cpp-python's server (no grammar, whole-program grammar, line by line), then a run whose
# server is stopped mid-run and its resume. One LLM job on the machine at a time.
H=helper
PY=python
B=/tmp/bench10
O=/tmp/served10
[ -d $B ] || $H bench generate --out $B --seed 0 --train 0 --valid-seen 0 --valid-unseen 10
MODEL=$($PY -c "from helper_agent.llm import assemble_local_model; print(assemble_local_model())")
PORT=8766
URL="http://127.0.0.1:$PORT/v1#qwen"
load() { cut -d' ' -f1-3 /proc/loadavg; }
start_server() {
  $PY -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port $PORT --n_ctx 4096 --n_threads 2 \
      --interrupt_requests false > $O/server-$1.log 2>&1 &
  SERVER=$!
  for i in $(seq 1 120); do curl -sf http://127.0.0.1:$PORT/v1/models > /dev/null && return; sleep 1; done
  echo "server did not start"; exit 1
}
run() { # name, env..., then args
  local name=$1; shift
  echo "$name: start $(date +%T) load $(load)"
  env "$@" $H eval tfd --data $B --limit 10 --llm "${LLM:-$URL}" --out $O/$name > $O/$name.log 2>&1
  echo "$name: exit $? end $(date +%T) load $(load)"
  tail -4 $O/$name.log | tr '\r' '\n' | tail -3
}
LLM=local run inprocess HELPER_X=1
start_server 1
run served-plain HELPER_LLM_STREAM=true
run served-grammar HELPER_LLM_STREAM=true HELPER_LLM_GRAMMAR=llama.cpp
run served-lines HELPER_LLM_GRAMMAR=llama.cpp HELPER_LLM_TOKENIZER=local
# Stopped mid-run: kill the server once 2 episodes are recorded; the resumed run completes the rest.
S=$O/served-stopped
rm -rf $S
HELPER_LLM_GRAMMAR=llama.cpp HELPER_LLM_TOKENIZER=local HELPER_LLM_TIMEOUT=30 HELPER_LLM_RETRIES=1 \
  $H eval tfd --data $B --limit 6 --llm "$URL" --out $S > $O/stopped-1.log 2>&1 &
EVAL=$!
while [ "$(cat $S/results.jsonl 2>/dev/null | wc -l)" -lt 2 ]; do sleep 1; done
kill $SERVER; wait $SERVER 2>/dev/null
echo "server stopped at $(date +%T) after $(wc -l < $S/results.jsonl) episodes"
wait $EVAL; echo "stopped run: exit $?"
tail -12 $O/stopped-1.log | tr '\r' '\n' | tail -10
start_server 2
HELPER_LLM_GRAMMAR=llama.cpp HELPER_LLM_TOKENIZER=local $H eval tfd --data $B --limit 6 --llm "$URL" --out $S > $O/stopped-2.log 2>&1
echo "resumed run: exit $?"
tail -12 $O/stopped-2.log | tr '\r' '\n' | tail -10
kill $SERVER; wait $SERVER 2>/dev/null
echo "end $(date +%T) load $(load)"
