"""A tiny PPO-style policy-gradient learner on a toy "math answers" task, one CPU run in a second.

The task is a contextual bandit standing in for RL fine-tuning of a language model: each of
32 problems (4 problem types) has one correct answer among 6; reward is 1 for it, else 0.
The policy is a softmax over a linear score of shared features (the problem's type and the
problem itself), so one update moves the answers of every problem of that type.

Off-policiness is real: a batch of `batch_size` samples is drawn from the current policy,
then cut into `batch_size / mini_batch_size` mini-batches that update the policy one after
another, so every mini-batch after the first is scored by a policy newer than the one that
sampled it. The PPO ratio pi/pi_old and its clip (`clip_coef`) act on exactly that
staleness. `model` sets the prior: the math base model starts knowing part of the answers.

Parameters arrive as `--key=value` (wild appends them per run). Every step appends one line
`{"step": N, ...}` to `$WILD_RUN_DIR/metrics.jsonl`; the end writes `metrics.json`.
`--crash_once_on=MODEL/CLIP/BSxMBS` simulates a crash (exit 1) on the first attempt of the
matching run only: a marker in the run folder remembers it crashed, so a rerun goes through.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

PROBLEMS = 32
TYPES = 4
ANSWERS = 6
SEEDS_PER_RUN = 4  # each run averages a few seeds so one unlucky draw does not decide
PRIORS = {"qwen2.5-7b-base": 0.0, "qwen2.5-7b-math-base": 1.5}
CRASH_MARKER = ".crashed-once"

Floats = NDArray[np.float64]


def correct_answers() -> NDArray[np.int64]:
    """Most problems of a type share its answer; every fourth one is an exception to learn."""
    kinds = np.arange(PROBLEMS) % TYPES
    answers = (2 * kinds + 1) % ANSWERS
    exceptions = np.arange(PROBLEMS) % 4 == 3
    answers[exceptions] = (answers[exceptions] + 3) % ANSWERS
    return answers


def features() -> Floats:
    """One row per problem: one-hot type, one-hot problem, so types generalise."""
    kinds = np.arange(PROBLEMS) % TYPES
    phi = np.zeros((PROBLEMS, TYPES + PROBLEMS))
    phi[np.arange(PROBLEMS), kinds] = 1.0
    phi[np.arange(PROBLEMS), TYPES + np.arange(PROBLEMS)] = 1.0
    return phi


def softmax(logits: Floats) -> Floats:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    result: Floats = weights / weights.sum(axis=-1, keepdims=True)
    return result


def train_one_seed(args: argparse.Namespace, seed: int) -> list[dict[str, float]]:
    """One learner from scratch: a list of per-step statistics."""
    rng = np.random.default_rng(seed)
    phi, answers = features(), correct_answers()
    weights = rng.normal(0.0, 0.3, size=(TYPES + PROBLEMS, ANSWERS))
    # The prior: the math model has seen these problem types, so leans to their usual answer.
    weights[np.arange(TYPES), (2 * np.arange(TYPES) + 1) % ANSWERS] += PRIORS[args.model]
    steps: list[dict[str, float]] = []
    for _ in range(args.steps):
        old_probs = softmax(phi @ weights)
        problems = rng.integers(0, PROBLEMS, size=args.batch_size)
        # Inverse-CDF sampling of every problem's answer at once (vectorised rng.choice).
        cumulative = np.cumsum(old_probs[problems], axis=1)
        draws = rng.random(args.batch_size)[:, None]
        choices = np.minimum((cumulative < draws).sum(axis=1), ANSWERS - 1)
        rewards = (choices == answers[problems]).astype(np.float64)
        # Group-normalised advantage over the whole batch (GRPO-like), fixed while it is reused.
        advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)
        old_pick = old_probs[problems, choices]
        clipped = 0
        for start in range(0, args.batch_size, args.mini_batch_size):
            part = slice(start, start + args.mini_batch_size)
            p, a, adv = problems[part], choices[part], advantages[part]
            probs = softmax(phi[p] @ weights)
            ratio = probs[np.arange(len(p)), a] / old_pick[part]
            # The clipped surrogate has no gradient where the ratio left the trust region
            # in the direction the advantage pushes it.
            outside = ((adv > 0) & (ratio > 1 + args.clip_coef)) | (
                (adv < 0) & (ratio < 1 - args.clip_coef)
            )
            clipped += int(outside.sum())
            coef = np.where(outside, 0.0, adv * ratio)
            grad_logits = -probs * coef[:, None]
            grad_logits[np.arange(len(p)), a] += coef
            weights += args.lr * phi[p].T @ grad_logits / len(p)
        new_probs = softmax(phi @ weights)
        kl = float(np.mean(np.sum(old_probs * np.log(old_probs / new_probs), axis=1)))
        steps.append(
            {
                "reward": float(rewards.mean()),
                "accuracy": float(new_probs[np.arange(PROBLEMS), answers].mean()),
                "clip_frac": clipped / args.batch_size,
                "kl": kl,
                "entropy": float(-np.mean(np.sum(new_probs * np.log(new_probs), axis=1))),
            }
        )
    return steps


def run_key(args: argparse.Namespace) -> str:
    return f"{args.model}/{args.clip_coef:g}/{args.batch_size}x{args.mini_batch_size}"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(PRIORS), default="qwen2.5-7b-base")
    parser.add_argument("--clip_coef", type=float, default=0.2)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--mini_batch_size", type=int, default=64)
    parser.add_argument("--offpolicy", type=json.loads, default=None, help="a pair as JSON")
    parser.add_argument("--lr", type=float, default=2.0)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crash_once_on", default="")
    args = parser.parse_args(argv)
    if isinstance(args.offpolicy, dict):  # `--offpolicy={"batch_size": 64, ...}` also works
        args.batch_size = int(args.offpolicy.get("batch_size", args.batch_size))
        args.mini_batch_size = int(args.offpolicy.get("mini_batch_size", args.mini_batch_size))
    if args.mini_batch_size < 1 or args.batch_size % args.mini_batch_size:
        parser.error("mini_batch_size must divide batch_size")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    run_dir.mkdir(parents=True, exist_ok=True)
    seeds = [train_one_seed(args, args.seed * 1000 + k) for k in range(SEEDS_PER_RUN)]
    marker = run_dir / CRASH_MARKER
    crash_at = (
        args.steps // 3 if args.crash_once_on == run_key(args) and not marker.exists() else -1
    )
    with (run_dir / "metrics.jsonl").open("w") as out:  # a rerun starts its curve afresh
        for step in range(args.steps):
            if step == crash_at:
                marker.write_text("crashed once on purpose; the rerun will go through\n")
                print(f"step {step}: CUDA error: an illegal memory access (simulated)", flush=True)
                return 1
            line = {k: float(np.mean([s[step][k] for s in seeds])) for k in seeds[0][step]}
            out.write(json.dumps({"step": step + 1, **line}) + "\n")
            out.flush()
    last = [np.mean([s[i]["accuracy"] for s in seeds]) for i in range(args.steps)]
    tail = max(1, args.steps // 6)
    summary = {
        "run": run_key(args),
        "final_accuracy": float(np.mean(last[-tail:])),
        "auc_accuracy": float(np.mean(last)),
        "final_reward": float(np.mean([s[-1]["reward"] for s in seeds])),
        "steps": args.steps,
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{summary['run']}: final accuracy {summary['final_accuracy']:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
