#!/usr/bin/env bash
# The four k=3 EAI rows again, under the example pool rule (helper_agent/evals/studies/eai/pool.py):
# examples only from tasks 101-342, never one sharing the task's goal text or task name. The old
# leave-one-out rows (helper-open-k3, ...) stay as they are, labelled "not comparable"; the new rows
# go to their own folders (a folder written before the rule refuses the new pool) and end `-k3-cross`.
#
# Same flags as the old rows' spec.json (agent, mode, --k 3, --limit 100, --llm local; max_steps 40,
# max_replans 2 and n_ctx 8192 are the defaults), one after the other (one local LLM at a time), each
# resumable per task: run the script again after a stop. Then the table is rebuilt with the new rows
# beside k=0, the other methods' rows and the 15 peers; rows whose examples share the task's goal or
# name (the old k3 rows, P-RAG's later self-iterations) are listed apart and left out of the plot.
#
#   bash results/eai100/rerun_crosstask.sh                 # from the repository root or anywhere
#   HELPER="python -m helper_agent.cli" PEERS_DIR=/tmp/eai-peers bash results/eai100/rerun_crosstask.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
HELPER=${HELPER:-helper}
PEERS_DIR=${PEERS_DIR:-runs/eai-peers}   # the 15 peers' cached scores (gitignored)
R=results/eai100

for row in "helper open-loop helper-open-k3-cross" \
           "helper closed-loop helper-closed-k3-cross" \
           "llm-planner open-loop llm-planner-open-k3-cross" \
           "llm-planner closed-loop llm-planner-closed-k3-cross"; do
    read -r agent mode folder <<<"$row"
    echo "== $folder ($(date -u +%H:%M:%S) UTC)"
    $HELPER eval eai --agent "$agent" --mode "$mode" --k 3 --limit 100 --llm local \
        --out "$R/$folder" --peers-dir "$PEERS_DIR"
done

# HELPER with the other local model (run 2026-12-06 08:23-08:52 UTC on main 58a7598's EAI adapter,
# the path issue-53-seq's equivalence test pins the registry graph to):
# $HELPER eval eai --agent helper --mode closed-loop --k 3 --limit 100 --llm local:1.5b \
#     --out "$R/helper-closed-k3-cross-1.5b" --peers-dir "$PEERS_DIR"

# LLM-Planner closed loop with the agent's own goal and precondition checks, chosen on tasks 101-160
# (results/eai100/goals53/README.md; run 2026-12-06 11:55-12:28 UTC on main 96df504):
# $HELPER eval eai --agent llm-planner --mode closed-loop --k 3 --limit 100 --llm local \
#     -o goal_check=on -o preconditions=on \
#     --out "$R/llm-planner-closed-k3-cross-goals" --peers-dir "$PEERS_DIR"

echo "== table ($(date -u +%H:%M:%S) UTC)"
$HELPER eval eai-table \
    "$R/helper-open-k0" \
    "$R/helper-open-k3-cross" "$R/llm-planner-open-k3-cross" \
    "$R/helper-closed-k3-cross" "$R/llm-planner-closed-k3-cross" "$R/llm-planner-closed-k3-cross-goals" \
    "$R/helper-closed-k3-cross-1.5b" \
    "$R/prag-self-goal+scene/iter_0/run" "$R/prag-self-goal+scene/iter_3/run" \
    "$R/embodiedrag-subgraph" "$R/embodiedrag-full" \
    "$R/helper-open-k3" "$R/llm-planner-open-k3" "$R/helper-closed-k3" "$R/llm-planner-closed-k3" \
    --out "$R/table" --peers-dir "$PEERS_DIR"
