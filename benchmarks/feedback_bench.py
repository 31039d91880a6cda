"""The feedback reader's accuracy: how often a person's answer to "Is the task completed to your
satisfaction? Did I miss anything?" is read as they meant it (satisfied or not).

The answers are `benchmarks/data/feedback_answers.jsonl`: a `calibration` split (written first;
the reader's prompt and its few-shot turns were chosen on it) and a `heldout` split (written
separately and never used to change the reader). Each answer goes through `read_feedback` with the
chat model under the reader's grammar, as the HELPER graph's `ask_feedback` does.

Run: `python benchmarks/feedback_bench.py [--llm local] [--split heldout] [--json PATH]`. The JSON is
flat: `<split>_accuracy`, `<split>_answers`, `<split>_wrong` (the misread answers, joined by " | "),
`<split>_seconds_per_answer`, plus `llm`.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from helper_agent.graphs.helper.feedback import read_feedback
from helper_agent.llm import grammar_decoding, invoke_with_retry, make_chat_model

DATA = Path(__file__).parent / "data" / "feedback_answers.jsonl"


def load(split: str | None = None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if split in (None, r["split"])]


def reader(chat: Any) -> Any:
    def ask(messages: list[Any], grammar: str) -> str:
        kwargs = {**grammar_decoding(chat, grammar, kind="feedback"), "max_tokens": 32}
        return str(invoke_with_retry(chat.bind(**kwargs), messages).content)

    return ask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llm", default="local")
    parser.add_argument("--split", choices=("calibration", "heldout"), default=None, help="default: both")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    ask = reader(make_chat_model(args.llm))
    figures: dict[str, Any] = {"llm": args.llm}
    for split in ("calibration", "heldout"):
        if args.split not in (None, split):
            continue
        rows = load(split)
        wrong = []
        started = time.perf_counter()
        for row in rows:
            reading = read_feedback(row["answer"], ask)
            verdict = "satisfied" if reading.satisfied else f"not satisfied: {reading.missing}"
            ok = reading.satisfied == row["satisfied"]
            print(f"{split:11s} {'ok ' if ok else 'BAD'} {row['answer']!r:50s} -> {verdict}")
            if not ok:
                wrong.append(row["answer"])
        seconds = time.perf_counter() - started
        figures.update({f"{split}_answers": len(rows), f"{split}_accuracy": round(1 - len(wrong) / len(rows), 3),
                        f"{split}_wrong": " | ".join(wrong), f"{split}_seconds_per_answer": round(seconds / len(rows), 3)})
        print(f"{split}: {len(rows) - len(wrong)}/{len(rows)} read as meant ({figures[f'{split}_accuracy']:.1%}), "
              f"{figures[f'{split}_seconds_per_answer']} s per answer")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
