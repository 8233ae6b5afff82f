"""Score one prompt variant over the fixed task set, with a deterministic local model and scorer.

No network: `toy_model` stands in for an LLM and follows its prompt the way small models do.
It adds two numbers right whatever the prompt; it gets "add, then multiply" right only when
told to work step by step (else it multiplies first); it converts hours to minutes only when
the prompt shows a worked example; it answers in JSON when asked to, pads the reply with a
greeting on long questions unless told "only JSON", and wraps its answer in prose when asked
to explain. The scorer is strict: a reply must be exactly a JSON object `{"answer": <int>}`
(the output schema); anything else is a schema violation, scored wrong, and noted with what
a lenient reader would have found in it.

`--variant=NAME` reads `fixtures/variants/NAME.md` and `fixtures/tasks.json` (relative to the
working directory). Each task appends `{"step": N, ...}` to `$WILD_RUN_DIR/metrics.jsonl`;
the end writes `metrics.json` with the score and the violations.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

LONG_QUESTION = 80


def toy_model(prompt: str, question: str, kind: str, numbers: list[int]) -> str:
    """The deterministic stand-in model's reply to `prompt` followed by the question."""
    text = prompt.lower()
    if kind == "single":
        value = numbers[0] + numbers[1]
    elif kind == "multi":
        a, b, c = numbers
        value = (a + b) * c if "step by step" in text else a + b * c
    else:
        value = numbers[0] * 60 if "example:" in text else numbers[0]
    body = json.dumps({"answer": value})
    if "explain" in text:
        return f"First I read the problem carefully. Working it through gives {value}.\n{body}"
    if "only json" in text:
        return body
    if "json" in text:
        return f"Sure! {body}" if len(question) > LONG_QUESTION else body
    return f"The answer is {value}."


def score(reply: str, answer: int) -> dict[str, Any]:
    """Strict schema check and correctness; `lenient` is the last integer in the reply."""
    try:
        parsed = json.loads(reply)
    except ValueError:
        parsed = None
    valid = (
        isinstance(parsed, dict)
        and set(parsed) == {"answer"}
        and isinstance(parsed["answer"], int)
        and not isinstance(parsed["answer"], bool)
    )
    numbers = re.findall(r"-?\d+", reply)
    lenient = int(numbers[-1]) if numbers else None
    return {
        "valid": valid,
        "correct": bool(valid and isinstance(parsed, dict) and parsed["answer"] == answer),
        "lenient_correct": lenient == answer,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--fixtures", type=Path, default=Path("fixtures"))
    args = parser.parse_args(argv)
    prompt = (args.fixtures / "variants" / f"{args.variant}.md").read_text()
    tasks = json.loads((args.fixtures / "tasks.json").read_text())["tasks"]
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    run_dir.mkdir(parents=True, exist_ok=True)
    results = []
    with (run_dir / "metrics.jsonl").open("w") as out:
        for step, task in enumerate(tasks, start=1):
            reply = toy_model(prompt, task["question"], task["kind"], task["numbers"])
            line = {"step": step, "task": task["id"], "kind": task["kind"], "reply": reply}
            line.update(score(reply, task["answer"]))
            results.append(line)
            out.write(json.dumps(line) + "\n")
    by_kind: dict[str, int] = {}
    for line in results:
        by_kind[line["kind"]] = by_kind.get(line["kind"], 0) + int(line["correct"])
    summary = {
        "variant": args.variant,
        "tasks": len(results),
        "correct": sum(int(r["correct"]) for r in results),
        "score": sum(int(r["correct"]) for r in results) / len(results),
        "violations": sum(int(not r["valid"]) for r in results),
        "lenient_correct": sum(int(r["lenient_correct"]) for r in results),
        "correct_by_kind": by_kind,
        "prompt_chars": len(prompt.strip()),
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
