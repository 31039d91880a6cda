"""Which episodes two runs of the same episodes answer differently: the program text and the outcome.

    python results/runtime50/compare.py RUN_A RUN_B   (folders holding results.jsonl)
"""
import json
import sys
from pathlib import Path


def records(folder: str) -> dict[str, dict]:
    lines = (Path(folder) / "results.jsonl").read_text().splitlines()
    return {r["instance_id"]: r for r in map(json.loads, filter(None, lines))}


a, b = records(sys.argv[1]), records(sys.argv[2])
common = sorted(set(a) & set(b))
other_program = [k for k in common if a[k].get("program") != b[k].get("program")]
won = [k for k in common if not a[k]["success"] and b[k]["success"]]
lost = [k for k in common if a[k]["success"] and not b[k]["success"]]
print(f"{len(common)} episodes in both; other program in {len(other_program)}")
print(f"success only in {sys.argv[2]}: {', '.join(won) or 'none'}")
print(f"success only in {sys.argv[1]}: {', '.join(lost) or 'none'}")
