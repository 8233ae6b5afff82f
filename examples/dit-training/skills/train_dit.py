"""A small class-conditional diffusion transformer (DiT) in torch, trained by flow matching on
scikit-learn's 8x8 handwritten digits; one run is one seed of one setting.

The model follows DiT (Peebles & Xie, 2023) at toy size: the 8x8 image is cut into 2x2
patches (16 tokens), each linearly embedded and given a fixed 2-D sine-cosine position;
transformer blocks (multi-head self-attention and an MLP) are conditioned on the timestep and
the digit class through adaLN-Zero (a LayerNorm without affine weights whose shift, scale and
residual gate come from the conditioning vector, the gates initialised to zero); a final
adaLN layer maps each token back to its patch. The objective is flow matching on the straight
path x_t = (1 - t) x_0 + t noise (rectified flow): the model predicts the velocity
noise - x_0, and samples are drawn by 20 Euler steps from t = 1 to t = 0.

The data: `sklearn.datasets.load_digits` (1,797 images of 10 digits, 16 grey levels), scaled
to [-1, 1], split once (the same split in every run) into 1,437 training and 360 held-out
images. The judge: a logistic-regression classifier trained on the same training images
(about 96 % accurate on the held-out ones). At step 0 (the untrained model) and at each
checkpoint the run draws 30 samples of each class from fixed noise and writes:

- `eval_loss`: the flow-matching loss on the held-out images at fixed t and noise;
- `sample_score`: the Inception-Score analogue exp(E_x KL(p(y|x) || p(y))) of the judge's
  predictions (1: every sample looks alike or like nothing; 10: each is confidently one
  digit and all ten digits appear equally);
- `sample_confidence` (the judge's mean top probability), `sample_classes` (exp of the
  entropy of its mean prediction: how many digits the samples spread over) and
  `sample_label_match` (the share of samples the judge reads as the class they were drawn
  for);
- `samples/step-K.png`: a 10 x 10 grid (one row per digit, the first 10 of its samples),
  and `samples/progress.png`, every grid of the run so far side by side, for a human.

A run whose training loss blows up (non-finite, or above `DIVERGED`) stops and, under wild
(`$WILD_DIR` set), raises a critical alert with `wild --alert`.

Parameters arrive as `--key=value`: `lr`, `seed`, `scale` (`cpu`: a model of width 48 and
depth 2, 1,200 steps of batch 64 on one CPU thread; `gpu`: width 256 and depth 6, 3,000 steps
of batch 512, on CUDA when present) and `steps` (to override the scale's). Each checkpoint
appends `{"step": K, ...}` to `$WILD_RUN_DIR/metrics.jsonl`; the end writes `metrics.json`.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per run: wild runs several side by side

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from torch import Tensor, nn  # noqa: E402

SIDE, PATCH, CLASSES = 8, 2, 10
TOKENS = (SIDE // PATCH) ** 2
EULER_STEPS = 20
PER_CLASS = 30  # samples per digit at each checkpoint; the grid shows the first GRID_COLUMNS
GRID_COLUMNS = 10
DIVERGED = 1e3  # a training loss this large (the first is about 1.7) means the run blew up
CHECK_EVERY = 25  # steps between looks at the training loss
SPLIT_SEED, SAMPLE_SEED, EVAL_SEED = 0, 1234, 4321  # the same in every run: like for like


@dataclass(frozen=True)
class Scale:
    width: int
    depth: int
    heads: int
    steps: int
    batch: int
    checkpoints: int


SCALES = {
    "cpu": Scale(width=48, depth=2, heads=4, steps=1200, batch=64, checkpoints=4),
    "gpu": Scale(width=256, depth=6, heads=8, steps=3000, batch=512, checkpoints=5),
}


def sincos(positions: Tensor, dim: int) -> Tensor:
    """Sine-cosine features of `positions` (any real values), `dim` of them."""
    half = dim // 2
    freqs = torch.exp(-math.log(10_000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * freqs.to(positions.device)[None, :]
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def position_table(dim: int) -> Tensor:
    """DiT's fixed 2-D position embedding: half the features for the row, half the column."""
    side = SIDE // PATCH
    rows, cols = torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij")
    return torch.cat([sincos(rows.flatten(), dim // 2), sincos(cols.flatten(), dim // 2)], 1)


def modulate(x: Tensor, shift: Tensor, scale: Tensor) -> Tensor:
    return x * (1 + scale[:, None, :]) + shift[:, None, :]


class Block(nn.Module):
    """A DiT block with adaLN-Zero: the conditioning sets each sub-layer's shift, scale, gate."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(approximate="tanh"), nn.Linear(4 * width, width)
        )
        modulation = nn.Linear(width, 6 * width)
        nn.init.zeros_(modulation.weight)  # adaLN-Zero: every block starts as the identity
        nn.init.zeros_(modulation.bias)
        self.ada = nn.Sequential(nn.SiLU(), modulation)

    def attend(self, x: Tensor) -> Tensor:
        batch, tokens, width = x.shape
        q, k, v = self.qkv(x).view(batch, tokens, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        out = nn.functional.scaled_dot_product_attention(q, k, v)
        mixed: Tensor = self.proj(out.transpose(1, 2).reshape(batch, tokens, width))
        return mixed

    def forward(self, x: Tensor, c: Tensor) -> Tensor:
        shift1, scale1, gate1, shift2, scale2, gate2 = self.ada(c).chunk(6, dim=1)
        x = x + gate1[:, None, :] * self.attend(modulate(self.norm1(x), shift1, scale1))
        out: Tensor = x + gate2[:, None, :] * self.mlp(modulate(self.norm2(x), shift2, scale2))
        return out


class DiT(nn.Module):
    """Patchify, embed, adaLN-Zero blocks conditioned on (t, class), unpatchify."""

    def __init__(self, width: int, depth: int, heads: int) -> None:
        super().__init__()
        self.width = width
        self.embed = nn.Linear(PATCH * PATCH, width)
        self.register_buffer("position", position_table(width)[None])
        self.time = nn.Sequential(nn.Linear(width, width), nn.SiLU(), nn.Linear(width, width))
        self.label = nn.Embedding(CLASSES, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(width, elementwise_affine=False, eps=1e-6)
        modulation = nn.Linear(width, 2 * width)
        self.ada = nn.Sequential(nn.SiLU(), modulation)
        self.out = nn.Linear(width, PATCH * PATCH)
        for layer in (modulation, self.out):  # the model's first prediction is zero
            nn.init.zeros_(layer.weight)
            nn.init.zeros_(layer.bias)

    def forward(self, x: Tensor, t: Tensor, y: Tensor) -> Tensor:
        tokens = patchify(x)
        h = self.embed(tokens) + self.position
        c = self.time(sincos(1000.0 * t, self.width)) + self.label(y)
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.ada(c).chunk(2, dim=1)
        out: Tensor = self.out(modulate(self.norm(h), shift, scale))
        return unpatchify(out)


def patchify(x: Tensor) -> Tensor:
    """(B, 64) images → (B, 16, 4): 2x2 patches in row-major order."""
    side = SIDE // PATCH
    grid = x.view(-1, side, PATCH, side, PATCH).permute(0, 1, 3, 2, 4)
    return grid.reshape(-1, TOKENS, PATCH * PATCH)


def unpatchify(tokens: Tensor) -> Tensor:
    side = SIDE // PATCH
    grid = tokens.view(-1, side, side, PATCH, PATCH).permute(0, 1, 3, 2, 4)
    return grid.reshape(-1, SIDE * SIDE)


def flow_loss(model: DiT, x0: Tensor, y: Tensor, t: Tensor, noise: Tensor) -> Tensor:
    """Flow matching: the mean squared error of the predicted velocity on the straight path."""
    xt = (1 - t)[:, None] * x0 + t[:, None] * noise
    velocity: Tensor = model(xt, t, y)
    return ((velocity - (noise - x0)) ** 2).mean()


@torch.no_grad()
def sample(model: DiT, noise: Tensor, y: Tensor) -> Tensor:
    """Euler steps of the learned flow from t = 1 (noise) to t = 0, clipped to [-1, 1]."""
    x = noise.clone()
    for k in range(EULER_STEPS, 0, -1):
        t = torch.full((len(x),), k / EULER_STEPS, device=x.device)
        velocity: Tensor = model(x, t, y)
        x = x - velocity / EULER_STEPS
    return x.clamp(-1.0, 1.0)


def digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's digits in [-1, 1]: train images and labels, held-out images and labels."""
    data = load_digits()
    images = data.images.reshape(-1, SIDE * SIDE) / 8.0 - 1.0
    order = np.random.default_rng(SPLIT_SEED).permutation(len(images))
    cut = len(images) - 360
    train, held = order[:cut], order[cut:]
    return images[train], data.target[train], images[held], data.target[held]


def judge(images: np.ndarray, labels: np.ndarray) -> LogisticRegression:
    """The classifier that scores samples: trained on the real training digits only."""
    return LogisticRegression(max_iter=2000, C=0.1).fit(images, labels)


def sample_scores(
    classifier: LogisticRegression, samples: np.ndarray, y: np.ndarray
) -> dict[str, float]:
    """The judge's view of the samples: the Inception-Score analogue and its two parts."""
    probs = np.clip(classifier.predict_proba(samples), 1e-12, 1.0)
    marginal = probs.mean(axis=0)
    kl = (probs * (np.log(probs) - np.log(marginal)[None, :])).sum(axis=1)
    return {
        "sample_score": float(np.exp(kl.mean())),
        "sample_confidence": float(probs.max(axis=1).mean()),
        "sample_classes": float(np.exp(-(marginal * np.log(marginal)).sum())),
        "sample_label_match": float((probs.argmax(axis=1) == y).mean()),
    }


def grid(samples: np.ndarray, zoom: int = 4) -> Image.Image:
    """One row per digit, its first GRID_COLUMNS samples, each pixel a zoom-square, 2px gaps."""
    cell = SIDE * zoom + 2
    canvas = np.full((CLASSES * cell + 2, GRID_COLUMNS * cell + 2), 90, dtype=np.uint8)
    for digit in range(CLASSES):
        for column in range(GRID_COLUMNS):
            image = samples[digit * PER_CLASS + column].reshape(SIDE, SIDE)
            tile = np.kron((image + 1.0) * 127.5, np.ones((zoom, zoom)))
            top, left = 2 + digit * cell, 2 + column * cell
            canvas[top : top + SIDE * zoom, left : left + SIDE * zoom] = tile.astype(np.uint8)
    return Image.fromarray(canvas, mode="L")


def side_by_side(grids: list[tuple[str, Image.Image]]) -> Image.Image:
    """The checkpoints' grids left to right, each under its label (step and score)."""
    width, height = grids[0][1].size
    sheet = Image.new("L", (len(grids) * (width + 12) + 12, height + 34), 255)
    draw = ImageDraw.Draw(sheet)
    for n, (label, image) in enumerate(grids):
        left = 12 + n * (width + 12)
        draw.text((left, 8), label, fill=0)
        sheet.paste(image, (left, 28))
    return sheet


def raise_alert(run: str, description: str) -> None:
    """A critical alert through wild's CLI, when this run is one of wild's."""
    if "WILD_DIR" not in os.environ:
        return
    command = [sys.executable, "-m", "wild", "--alert", "--severity", "critical"]
    command += ["--source", run, "--type", "divergence", "--description", description]
    command += ["--choice", "stop_run", "--choice", "ignore"]
    subprocess.run(command, check=False, stdout=subprocess.DEVNULL)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    parser.add_argument("--steps", type=int, help="training steps (default: the scale's)")
    return parser.parse_args(argv)


Line = dict[str, float | int | str | bool]


class Checker:
    """What every checkpoint measures, fixed for the whole run (and the same in every run):
    the held-out digits with their t and noise, the judge, the noise samples start from."""

    def __init__(self, device: torch.device) -> None:
        train_x, train_y, held_x, held_y = digits()
        self.train_x, self.train_y = train_x, train_y
        self.classifier = judge(train_x, train_y)
        self.judge_accuracy = float(self.classifier.score(held_x, held_y))
        fixed = torch.Generator().manual_seed(EVAL_SEED)
        self.held = torch.tensor(held_x, dtype=torch.float32).to(device)
        self.held_labels = torch.tensor(held_y, dtype=torch.long).to(device)
        self.held_t = torch.rand(len(self.held), generator=fixed).to(device)
        self.held_noise = torch.randn(self.held.shape, generator=fixed).to(device)
        self.wanted = torch.arange(CLASSES).repeat_interleave(PER_CLASS)
        start = torch.Generator().manual_seed(SAMPLE_SEED)
        self.noise = torch.randn((len(self.wanted), SIDE * SIDE), generator=start).to(device)
        self.grids: list[tuple[str, Image.Image]] = []

    def __call__(self, model: DiT, step: int, run_dir: Path) -> Line:
        """The checkpoint's numbers; its grid is saved, and the progress sheet redrawn."""
        model.eval()
        with torch.no_grad():
            loss = flow_loss(model, self.held, self.held_labels, self.held_t, self.held_noise)
        samples = sample(model, self.noise, self.wanted.to(self.noise.device)).cpu().numpy()
        model.train()
        scores = sample_scores(self.classifier, samples, self.wanted.numpy())
        name = f"samples/step-{step}.png"
        picture = grid(samples)
        picture.save(run_dir / name)
        self.grids.append((f"step {step}: score {scores['sample_score']:.2f}", picture))
        side_by_side(self.grids).save(run_dir / "samples" / "progress.png")
        return {"step": step, "eval_loss": float(loss), **scores, "sample": name}


def blown_up(losses: list[float]) -> float | None:
    """The worst of the latest losses if the run has blown up, else None."""
    worst = max(losses[-CHECK_EVERY:], key=lambda v: v if math.isfinite(v) else math.inf)
    return worst if not math.isfinite(worst) or worst > DIVERGED else None


def train(
    args: argparse.Namespace, device: torch.device, run_dir: Path
) -> tuple[DiT, list[Line], Checker]:
    """The training loop: a checkpoint at step 0 and every steps/checkpoints steps, a stop
    (and an alert) as soon as the loss blows up; returns the model and its metric lines."""
    scale = SCALES[args.scale]
    steps = args.steps or scale.steps
    check = Checker(device)
    torch.manual_seed(args.seed)
    model = DiT(scale.width, scale.depth, scale.heads).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    data = torch.tensor(check.train_x, dtype=torch.float32, device=device)
    labels = torch.tensor(check.train_y, dtype=torch.long, device=device)
    batches = torch.Generator(device=device).manual_seed(args.seed)
    every = max(1, steps // scale.checkpoints)
    history: list[Line] = []
    losses: list[float] = []
    pending: list[Tensor] = []  # read back every CHECK_EVERY steps: a read waits for the GPU
    with (run_dir / "metrics.jsonl").open("w") as out:  # a rerun starts its curve afresh
        for step in range(steps + 1):
            if step:
                pick = torch.randint(0, len(data), (scale.batch,), device=device, generator=batches)
                t = torch.rand(scale.batch, device=device, generator=batches)
                eps = torch.randn((scale.batch, SIDE * SIDE), device=device, generator=batches)
                loss = flow_loss(model, data[pick], labels[pick], t, eps)
                optimizer.zero_grad(set_to_none=True)
                loss.backward()  # type: ignore[no-untyped-call]
                optimizer.step()
                pending.append(loss.detach())
            if pending and (step % CHECK_EVERY == 0 or step % every == 0 or step == steps):
                losses += torch.stack(pending).tolist()
                pending = []
                worst = blown_up(losses)
                if worst is not None:
                    raise_alert(
                        os.environ.get("WILD_RUN_ID", "dit"),
                        f"training loss diverged by step {step} (lr={args.lr}): {worst:.3g}",
                    )
                    # the loss itself (inf, NaN or huge) and a flag: the run is diverged
                    history.append({"step": step, "train_loss": worst, "diverged": True})
                    out.write(json.dumps(history[-1]) + "\n")
                    break
            if step % every == 0 or step == steps:
                line = check(model, step, run_dir)
                recent = losses[-every:]
                line["train_loss"] = float(np.mean(recent)) if recent else line["eval_loss"]
                history.append(line)
                out.write(json.dumps(line) + "\n")
                out.flush()
    return model, history, check


def main(argv: list[str]) -> int:
    args = parse(argv)
    device = torch.device("cuda" if args.scale == "gpu" and torch.cuda.is_available() else "cpu")
    if device.type == "cpu":
        torch.set_num_threads(1)  # one core per run: wild runs several side by side
    torch.backends.cuda.matmul.allow_tf32 = True
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    (run_dir / "samples").mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    model, history, check = train(args, device, run_dir)
    last = history[-1]
    checkpoints = [h for h in history if "sample_score" in h]
    summary = {
        "diverged": bool(last.get("diverged")),
        "steps": int(last["step"]),
        "checkpoints": len(checkpoints),
        **{
            k: None if last.get("diverged") else checkpoints[-1][k]
            for k in ("eval_loss", "sample_score", "sample_label_match")
        },
        "judge_accuracy": check.judge_accuracy,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device),
        "seconds": round(time.monotonic() - started, 1),
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
