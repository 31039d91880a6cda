#!/usr/bin/env bash
# The EAI table with issue 62's rows (no LLM: the records and the peers' cached scores).
set -euo pipefail
cd "$(dirname "$0")/../.."
HELPER=${HELPER:-helper}
R=results/eai100
$HELPER eval eai-table \
    $R/helper-closed-k3 $R/helper-open-k3 $R/llm-planner-open-k3 $R/llm-planner-closed-k3 \
    $R/llm-planner-closed-k3-cross-goalsteps $R/llm-planner-open-k3-cross-goalsteps $R/llm-planner-open-k3-cross \
    $R/llm-planner-closed-k3-cross $R/llm-planner-closed-k3-cross-goals $R/helper-closed-k3-cross-1.5b \
    $R/helper-open-k0 $R/helper-closed-k0 $R/llm-planner-open-k0 $R/llm-planner-closed-k0 \
    $R/helper-open-k3-cross $R/helper-closed-k3-cross $R/embodiedrag-subgraph $R/embodiedrag-full \
    $R/prag-self-goal+scene/iter_0/run $R/prag-self-goal+scene/iter_3/run \
    $R/helper-closed-k3-cross-subgoals $R/embodiedrag-subgraph-subgoals $R/llm-planner-closed-k3-cross-subgoals \
    $R/prag-self-subgoals/iter_0/run $R/prag-self-subgoals/iter_3/run \
    --out $R/table --peers-dir "${PEERS_DIR:-runs/eai-peers}"
