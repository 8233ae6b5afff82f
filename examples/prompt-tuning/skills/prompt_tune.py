"""Soft-prompt tuning of a frozen tiny transformer, in torch: one run is one seed of one setting.

Prompt tuning as Lester et al. (2021) define it: the model's weights stay frozen and only a
"soft prompt", `prompt_len` vectors in the model's embedding space prepended to the input, is
trained by gradient descent.

The frozen model is a small causal transformer (pre-LayerNorm blocks, learned absolute
positions) that this story pre-trains on the spot on four digit-sequence tasks, each named by
a task token before the input: `copy`, `reverse`, `sort` (ascending) and `shift` (every digit
+1 mod 10). A sequence is `[task] x1 … xn [sep] y1 … yn`; positions count so that x1 is always at
position 16, so a soft prompt of up to 16 vectors takes the task token's place and the input
stays where the model learned to read it. The
first run to need the model pre-trains it (seed 0) and saves it under `pretrained/`; every
other run waits for that file (a lock) and loads it, so the sweep pre-trains once.

The prompt-tuning task is `sort` with its task token withheld: the soft prompt takes the task
token's place and must steer the frozen model to sort from (input, sorted output) examples
alone. It is scored by exact match (every output digit right, greedy decoding) on a fixed
held-out set of inputs that no prompt-training batch contains. For reference, each run also
scores the frozen model with the withheld token itself and with no prompt at all.

`--init` is where the prompt starts: `random` (normal, the scale of the model's embeddings)
or `vocab` (the embeddings of tokens sampled from the vocabulary, the withheld `sort` token
excluded, as Lester et al. initialise from sampled vocabulary). `--lr` is Adam's learning
rate. `--scale` is `cpu` (the default) or `gpu` (a larger model,
longer inputs, more steps; CUDA when present).

Every `eval_every` steps one line goes to `$WILD_RUN_DIR/metrics.jsonl` (`step`, `loss`,
`exact_match` on the held-out set); the end writes `outputs.jsonl` (every held-out input, the
model's output and the expected one), `prompt.pt` (the trained prompt) and `metrics.json`.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import torch
from torch import Tensor, nn

DIGITS = 10
PAD, SEP = 10, 11
TASKS = ("copy", "reverse", "sort", "shift")
TASK_TOKEN = {name: 12 + i for i, name in enumerate(TASKS)}
VOCAB = 12 + len(TASKS)
TOKEN_NAMES = [str(d) for d in range(DIGITS)] + ["<pad>", "<sep>"] + [f"<{t}>" for t in TASKS]
TARGET = "sort"  # the task whose token is withheld
MAX_PREFIX = 16  # the input starts at this position: prompts of up to 16 vectors
PRETRAIN_SEED, HELD_OUT_SEED = 0, 12345


@dataclass(frozen=True)
class Scale:
    d_model: int
    layers: int
    heads: int
    min_digits: int
    max_digits: int
    pretrain_steps: int
    pretrain_batch: int
    pretrain_lr: float
    prompt_steps: int
    prompt_batch: int
    eval_every: int
    held_out: int


SCALES = {
    "cpu": Scale(
        d_model=64, layers=2, heads=4, min_digits=3, max_digits=6, pretrain_steps=800,
        pretrain_batch=128, pretrain_lr=3e-3, prompt_steps=150, prompt_batch=64,
        eval_every=30, held_out=256,
    ),
    "gpu": Scale(
        d_model=256, layers=4, heads=8, min_digits=4, max_digits=10, pretrain_steps=6000,
        pretrain_batch=256, pretrain_lr=1e-3, prompt_steps=400, prompt_batch=256,
        eval_every=50, held_out=1024,
    ),
}  # fmt: skip


def answer(task: str, digits: list[int]) -> list[int]:
    if task == "copy":
        return list(digits)
    if task == "reverse":
        return digits[::-1]
    if task == "sort":
        return sorted(digits)
    return [(d + 1) % DIGITS for d in digits]


class FrozenLM(nn.Module):
    """A causal transformer that reads token embeddings (so a soft prompt can be prepended)."""

    def __init__(self, scale: Scale) -> None:
        super().__init__()
        self.max_len = MAX_PREFIX + 2 * scale.max_digits + 1
        self.embed = nn.Embedding(VOCAB, scale.d_model)
        self.position = nn.Embedding(self.max_len, scale.d_model)
        layer = nn.TransformerEncoderLayer(
            scale.d_model, scale.heads, 4 * scale.d_model, dropout=0.0,
            batch_first=True, norm_first=True,
        )  # fmt: skip
        self.blocks = nn.TransformerEncoder(layer, scale.layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(scale.d_model)
        self.head = nn.Linear(scale.d_model, VOCAB)

    def forward(self, embeds: Tensor, prefix: int) -> Tensor:
        """Logits for `embeds`, whose first `prefix` vectors are the prompt (or task token):
        positions count so that the input always starts at MAX_PREFIX, whatever the prompt's
        length, so the frozen model sees its inputs where it was trained to."""
        length = embeds.shape[1]
        positions = torch.arange(length, device=embeds.device) + (MAX_PREFIX - prefix)
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=embeds.device)
        hidden = self.blocks(embeds + self.position(positions), mask=mask, is_causal=True)
        logits: Tensor = self.head(self.norm(hidden))
        return logits


# --- data ---------------------------------------------------------------------------------


def random_inputs(gen: torch.Generator, count: int, n: int) -> list[list[int]]:
    return torch.randint(0, DIGITS, (count, n), generator=gen).tolist()


def held_out_set(scale: Scale) -> list[list[int]]:
    """The fixed held-out inputs, the same in every run (their own seed), lengths in turn."""
    gen = torch.Generator().manual_seed(HELD_OUT_SEED)
    lengths = range(scale.min_digits, scale.max_digits + 1)
    per = scale.held_out // len(lengths)
    return [x for n in lengths for x in random_inputs(gen, per, n)]


def teacher_batch(
    prefixes: list[list[int]], inputs: list[list[int]], targets: list[list[int]]
) -> tuple[Tensor, Tensor]:
    """Token ids `prefix x sep y` right-padded, and the next-token labels (-100: no loss)."""
    seqs = [p + x + [SEP] + y for p, x, y in zip(prefixes, inputs, targets, strict=True)]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), PAD, dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    for row, (p, x, y) in enumerate(zip(prefixes, inputs, targets, strict=True)):
        seq = seqs[row]
        ids[row, : len(seq)] = torch.tensor(seq)
        start = len(p) + len(x)  # the sep position predicts y1
        labels[row, start : start + len(y)] = torch.tensor(y)
    return ids, labels


def loss_of(logits: Tensor, labels: Tensor) -> Tensor:
    return nn.functional.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))


# --- pre-training, once per scale ---------------------------------------------------------


def pretrain(scale: Scale, device: torch.device, log: Callable[[str], None]) -> FrozenLM:
    torch.manual_seed(PRETRAIN_SEED)
    gen = torch.Generator().manual_seed(PRETRAIN_SEED)
    model = FrozenLM(scale).to(device)
    optim = torch.optim.AdamW(model.parameters(), lr=scale.pretrain_lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        optim, scale.pretrain_lr, total_steps=scale.pretrain_steps, pct_start=0.1
    )
    for step in range(1, scale.pretrain_steps + 1):
        n = int(torch.randint(scale.min_digits, scale.max_digits + 1, (1,), generator=gen))
        inputs = random_inputs(gen, scale.pretrain_batch, n)
        tasks = torch.randint(0, len(TASKS), (scale.pretrain_batch,), generator=gen).tolist()
        prefixes = [[TASK_TOKEN[TASKS[t]]] for t in tasks]
        targets = [answer(TASKS[t], x) for t, x in zip(tasks, inputs, strict=True)]
        ids, labels = teacher_batch(prefixes, inputs, targets)
        ids, labels = ids.to(device), labels.to(device)
        loss = loss_of(model(model.embed(ids), prefix=1), labels)
        optim.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optim.step()
        sched.step()
        if step % 250 == 0:
            log(f"pretrain step {step}: loss {loss.item():.4f}")
    return model


@contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # the other runs wait while one pre-trains
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def frozen_model(
    scale_name: str, cache: Path, device: torch.device, log: Callable[[str], None]
) -> tuple[FrozenLM, dict[str, Any]]:
    """The pre-trained model of this scale: loaded from `cache`, or pre-trained and saved
    there by the first run that needs it. Also its pre-training record (per-task scores)."""
    scale = SCALES[scale_name]
    weights, record = cache / f"frozen-{scale_name}.pt", cache / f"frozen-{scale_name}.json"
    with locked(cache / f"frozen-{scale_name}.lock"):
        if not weights.exists():
            log(f"pre-training the frozen model ({scale_name} scale) once for the sweep")
            started = time.monotonic()
            model = pretrain(scale, device, log)
            model.eval()
            held = held_out_set(scale)
            scores = {
                t: exact_match(decode(model, [[TASK_TOKEN[t]]] * len(held), held, device), t, held)
                for t in TASKS
            }
            info = {
                "scale": asdict(scale),
                "parameters": sum(p.numel() for p in model.parameters()),
                "pretrain_seconds": round(time.monotonic() - started, 1),
                "exact_match_with_task_token": scores,
            }
            tmp = weights.with_suffix(".tmp")
            torch.save(model.state_dict(), tmp)
            tmp.replace(weights)
            record.write_text(json.dumps(info, indent=2) + "\n")
    model = FrozenLM(scale).to(device)
    model.load_state_dict(torch.load(weights, map_location=device, weights_only=True))
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, json.loads(record.read_text())


# --- decoding and scoring -----------------------------------------------------------------


@torch.no_grad()
def decode(
    model: FrozenLM,
    prefixes: list[list[int]] | Tensor,
    inputs: list[list[int]],
    device: torch.device,
) -> list[list[int]]:
    """Greedy outputs, as many digits as each input has; `prefixes` are token ids per input,
    or one soft prompt (L × d) for all. Inputs of one length are decoded as one batch."""
    outputs: list[list[int]] = [[] for _ in inputs]
    for n in sorted({len(x) for x in inputs}):
        rows = [i for i, x in enumerate(inputs) if len(x) == n]
        body = torch.tensor([[*inputs[i], SEP] for i in rows], device=device)
        embeds = model.embed(body)
        if isinstance(prefixes, Tensor):
            prefix = prefixes.shape[0]
            embeds = torch.cat([prefixes.expand(len(rows), -1, -1), embeds], dim=1)
        else:
            ids = torch.tensor([prefixes[i] for i in rows], device=device)
            prefix = ids.shape[1]
            embeds = torch.cat([model.embed(ids), embeds], dim=1)
        for _ in range(n):
            nxt = model(embeds, prefix)[:, -1, :DIGITS].argmax(dim=-1)  # the answer is digits only
            embeds = torch.cat([embeds, model.embed(nxt)[:, None, :]], dim=1)
            for k, i in enumerate(rows):
                outputs[i].append(int(nxt[k]))
    return outputs


def exact_match(outputs: list[list[int]], task: str, inputs: list[list[int]]) -> float:
    right = sum(o == answer(task, x) for o, x in zip(outputs, inputs, strict=True))
    return right / len(inputs)


def failure_kind(x: list[int], output: list[int]) -> str | None:
    """What a wrong `sort` output did instead (None: it is right)."""
    if output == sorted(x):
        return None
    for task in ("copy", "reverse", "shift"):
        if output == answer(task, x):
            return f"did {task} instead"
    if sorted(output) == sorted(x):
        return "right digits, wrong order"
    if sorted(output) == output:
        return "sorted, but digits changed"
    return "unsorted, digits changed"


# --- prompt tuning ------------------------------------------------------------------------


def initial_prompt(model: FrozenLM, length: int, init: str, gen: torch.Generator) -> Tensor:
    weight = model.embed.weight.detach().cpu()
    if init == "vocab":
        allowed = torch.tensor([t for t in range(VOCAB) if t != TASK_TOKEN[TARGET]])
        picks = allowed[torch.randint(0, len(allowed), (length,), generator=gen)]
        return weight[picks].clone()
    if init == "random":
        return torch.randn(length, weight.shape[1], generator=gen) * weight.std()
    raise SystemExit(f"--init must be random or vocab, not {init!r}")


def nearest_tokens(model: FrozenLM, prompt: Tensor) -> list[str]:
    """Each prompt vector's nearest vocabulary token by cosine similarity (as Lester et al.
    read their prompts)."""
    sims = (
        nn.functional.normalize(prompt, dim=-1)
        @ nn.functional.normalize(model.embed.weight, dim=-1).T
    )
    return [TOKEN_NAMES[int(i)] for i in sims.argmax(dim=-1)]


@dataclass(frozen=True)
class Tuning:
    """What one prompt-tuning run trains with."""

    scale: Scale
    steps: int
    lr: float
    gen: torch.Generator
    held: list[list[int]]
    device: torch.device


def tune(model: FrozenLM, prompt: nn.Parameter, t: Tuning, out: TextIO) -> float | None:
    """Train `prompt` on the target task (the model frozen), logging the held-out exact match
    every `eval_every` steps to `out`; the last loss, or None when the loss is not finite."""
    held_keys = {tuple(x) for x in t.held}
    optim = torch.optim.Adam([prompt], lr=t.lr)
    length = prompt.shape[0]

    def held_out_score() -> float:
        return exact_match(decode(model, prompt.detach(), t.held, t.device), TARGET, t.held)

    out.write(json.dumps({"step": 0, "exact_match": held_out_score()}) + "\n")
    last = math.nan
    for step in range(1, t.steps + 1):
        n = int(torch.randint(t.scale.min_digits, t.scale.max_digits + 1, (1,), generator=t.gen))
        inputs = [
            x for x in random_inputs(t.gen, t.scale.prompt_batch, n) if tuple(x) not in held_keys
        ]  # never a held-out input
        ids, labels = teacher_batch([[]] * len(inputs), inputs, [sorted(x) for x in inputs])
        ids, labels = ids.to(t.device), labels.to(t.device)
        embeds = torch.cat([prompt.expand(len(inputs), -1, -1), model.embed(ids)], dim=1)
        pad = torch.full((len(inputs), length), -100, device=t.device)
        loss = loss_of(model(embeds, length), torch.cat([pad, labels], dim=1))
        optim.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optim.step()
        last = loss.item()
        if not math.isfinite(last):
            print(f"step {step}: RuntimeError: the prompt-tuning loss is {last}", flush=True)
            return None
        if step % t.scale.eval_every == 0 or step == t.steps:
            line = json.dumps({"step": step, "loss": last, "exact_match": held_out_score()})
            out.write(line + "\n")
            out.flush()
            print(line, flush=True)
    return last


Examples = dict[str, list[dict[str, list[int]]]]


def write_outputs(
    path: Path, held: list[list[int]], outputs: list[list[int]]
) -> tuple[dict[str, int], Examples]:
    """Every held-out output to `path`; the wrong ones counted by kind, 3 examples of each."""
    failures: dict[str, int] = {}
    examples: Examples = {}
    with path.open("w") as out:
        for x, o in zip(held, outputs, strict=True):
            out.write(json.dumps({"input": x, "output": o, "expected": sorted(x)}) + "\n")
            kind = failure_kind(x, o)
            if kind is not None:
                failures[kind] = failures.get(kind, 0) + 1
                if len(examples.setdefault(kind, [])) < 3:
                    examples[kind].append({"input": x, "output": o, "expected": sorted(x)})
    return failures, examples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt_len", type=int, required=True)
    parser.add_argument("--init", choices=("random", "vocab"), required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", choices=tuple(SCALES), default="cpu")
    parser.add_argument("--steps", type=int, default=None, help="prompt-tuning steps")
    parser.add_argument("--cache", type=Path, default=Path("pretrained"))
    args = parser.parse_args(argv)
    scale_name = args.scale
    if not 1 <= args.prompt_len <= MAX_PREFIX:
        raise SystemExit(f"--prompt_len must be 1 to {MAX_PREFIX}")
    scale = SCALES[scale_name]
    steps = args.steps if args.steps is not None else scale.prompt_steps
    torch.set_num_threads(1)  # one core per run: wild runs several side by side
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    run_dir.mkdir(parents=True, exist_ok=True)

    def log(line: str) -> None:
        print(line, flush=True)

    log(f"device {device}, scale {scale_name}")
    model, record = frozen_model(scale_name, args.cache, device, log)
    held = held_out_set(scale)
    gen = torch.Generator().manual_seed(args.seed)
    torch.manual_seed(args.seed)
    prompt = nn.Parameter(initial_prompt(model, args.prompt_len, args.init, gen).to(device))
    started = time.monotonic()
    with (run_dir / "metrics.jsonl").open("w") as out:
        final_loss = tune(model, prompt, Tuning(scale, steps, args.lr, gen, held, device), out)
    if final_loss is None:
        return 1
    outputs = decode(model, prompt.detach(), held, device)
    failures, examples = write_outputs(run_dir / "outputs.jsonl", held, outputs)
    torch.save(prompt.detach().cpu(), run_dir / "prompt.pt")
    token = decode(model, [[TASK_TOKEN[TARGET]]] * len(held), held, device)
    none = decode(model, [[PAD]] * len(held), held, device)
    summary = {
        "run": f"len{args.prompt_len}/{args.init}/lr{args.lr:g}/seed{args.seed}",
        "task": TARGET,
        "scale": scale_name,
        "device": str(device),
        "prompt_len": args.prompt_len,
        "init": args.init,
        "lr": args.lr,
        "seed": args.seed,
        "steps": steps,
        "exact_match": exact_match(outputs, TARGET, held),
        "held_out": len(held),
        "final_loss": final_loss,
        "exact_match_task_token": exact_match(token, TARGET, held),
        "exact_match_no_prompt": exact_match(none, TARGET, held),
        "failures": failures,
        "failure_examples": examples,
        "nearest_tokens": nearest_tokens(model, prompt.detach()),
        "frozen_model": record,
        "tune_seconds": round(time.monotonic() - started, 2),
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(json.dumps({k: summary[k] for k in ("run", "exact_match", "exact_match_task_token")}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
