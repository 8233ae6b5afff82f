"""A tiny diffusion denoiser (numpy) on 8x8 synthetic shapes, standing in for a DiT run.

The data are 8x8 images of four shapes (square outline, plus, filled disc, diagonal bar) at
small random offsets. The model is a one-hidden-layer MLP that reads a noisy image and its
noise level and predicts the noise (DDPM's epsilon objective, 20 noise levels). Training is
cut into 5 stages; before the first (step 0) and after each one it is evaluated and draws 8
samples with fixed noise, saved as `samples/step-K.png`, so a human can compare step 0 with
step 5. Quality is `sample_nn_mse`: each sample's mean squared distance to its nearest
training image (lower is better: the samples look like the data).

A run whose loss blows up stops early and, when it runs under wild (`$WILD_DIR` set), raises
a critical alert with `wild --alert`, so the policy decides whom to page.

Parameters arrive as `--key=value`. Each step appends `{"step": K, ...}` to
`$WILD_RUN_DIR/metrics.jsonl`; the end writes `metrics.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
SIDE = 8
LEVELS = 20
STAGES = 5
SAMPLES = 8
BETAS = np.linspace(1e-3, 0.25, LEVELS)
ALPHA_BAR = np.cumprod(1.0 - BETAS)
DIVERGED = 1e3  # a loss this large means the run has blown up


def shapes(rng: np.random.Generator, count: int) -> Floats:
    """`count` images in [-1, 1], one of four shapes each at a random offset of 0 or 1 pixel."""
    yy, xx = np.mgrid[0:6, 0:6]
    square = ((yy == 0) | (yy == 5) | (xx == 0) | (xx == 5)).astype(float)
    plus = ((yy == 2) | (yy == 3) | (xx == 2) | (xx == 3)).astype(float)
    disc = ((yy - 2.5) ** 2 + (xx - 2.5) ** 2 <= 6.5).astype(float)
    bar = (np.abs(yy - xx) <= 1).astype(float)
    kinds = (square, plus, disc, bar)
    images = np.zeros((count, SIDE, SIDE))
    for n in range(count):
        dy, dx = rng.integers(0, 3, size=2)
        images[n, dy : dy + 6, dx : dx + 6] = kinds[n % len(kinds)]
    flat: Floats = images.reshape(count, SIDE * SIDE) * 2.0 - 1.0
    return flat


class Denoiser:
    """x_t and the noise level in, predicted noise out; plain numpy, backprop by hand."""

    def __init__(self, rng: np.random.Generator, width: int) -> None:
        inputs = SIDE * SIDE + 2
        self.w1 = rng.normal(0.0, 1.0 / np.sqrt(inputs), size=(inputs, width))
        self.b1 = np.zeros(width)
        self.w2 = rng.normal(0.0, 1.0 / np.sqrt(width), size=(width, SIDE * SIDE))
        self.b2 = np.zeros(SIDE * SIDE)

    @staticmethod
    def _inputs(x: Floats, level: NDArray[np.int64]) -> Floats:
        t = (level / (LEVELS - 1))[:, None]
        return np.hstack([x, np.sin(np.pi * t), np.cos(np.pi * t)])

    def predict(self, x: Floats, level: NDArray[np.int64]) -> Floats:
        hidden = np.tanh(self._inputs(x, level) @ self.w1 + self.b1)
        out: Floats = hidden @ self.w2 + self.b2
        return out

    def step(self, x: Floats, level: NDArray[np.int64], noise: Floats, lr: float) -> float:
        """One SGD step on the mean squared error of the predicted noise; returns the loss."""
        inputs = self._inputs(x, level)
        hidden = np.tanh(inputs @ self.w1 + self.b1)
        error = hidden @ self.w2 + self.b2 - noise
        grad_out = 2.0 * error / error.size
        grad_hidden = (grad_out @ self.w2.T) * (1.0 - hidden**2)
        self.w2 -= lr * hidden.T @ grad_out
        self.b2 -= lr * grad_out.sum(axis=0)
        self.w1 -= lr * inputs.T @ grad_hidden
        self.b1 -= lr * grad_hidden.sum(axis=0)
        return float(np.mean(error**2))


def noised(rng: np.random.Generator, clean: Floats) -> tuple[Floats, NDArray[np.int64], Floats]:
    level = rng.integers(0, LEVELS, size=len(clean))
    noise = rng.normal(size=clean.shape)
    bar = ALPHA_BAR[level][:, None]
    return np.sqrt(bar) * clean + np.sqrt(1.0 - bar) * noise, level, noise


def sample(model: Denoiser, seed: int) -> Floats:
    """DDPM ancestral sampling from fixed noise, so checkpoints are compared like for like."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(SAMPLES, SIDE * SIDE))
    for level in range(LEVELS - 1, -1, -1):
        levels = np.full(SAMPLES, level)
        eps = model.predict(x, levels)
        alpha = 1.0 - BETAS[level]
        x = (x - BETAS[level] / np.sqrt(1.0 - ALPHA_BAR[level]) * eps) / np.sqrt(alpha)
        if level > 0:
            x += np.sqrt(BETAS[level]) * rng.normal(size=x.shape)
    clipped: Floats = np.clip(x, -1.0, 1.0)
    return clipped


def nearest_mse(samples: Floats, data: Floats) -> float:
    distances = ((samples[:, None, :] - data[None, :, :]) ** 2).mean(axis=2)
    return float(distances.min(axis=1).mean())


def png(pixels: NDArray[np.uint8]) -> bytes:
    """An 8-bit greyscale PNG (stdlib only: zlib for IDAT, struct for chunk framing)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    height, width = pixels.shape
    raw = b"".join(b"\x00" + pixels[row].tobytes() for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def sheet(samples: Floats, scale: int = 6) -> NDArray[np.uint8]:
    """The samples side by side, 4 per row, each pixel a `scale`-square, 2px gaps."""
    cell = SIDE * scale + 2
    rows = (len(samples) + 3) // 4
    canvas = np.full((rows * cell + 2, 4 * cell + 2), 128, dtype=np.uint8)
    for n, image in enumerate(samples):
        tile = np.kron((image.reshape(SIDE, SIDE) + 1.0) * 127.5, np.ones((scale, scale)))
        top, left = 2 + (n // 4) * cell, 2 + (n % 4) * cell
        canvas[top : top + SIDE * scale, left : left + SIDE * scale] = tile.astype(np.uint8)
    return canvas


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
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--updates_per_step", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    (run_dir / "samples").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    data, held_out = shapes(rng, 256), shapes(np.random.default_rng(10_000 + args.seed), 64)
    model = Denoiser(rng, args.width)
    eval_rng = np.random.default_rng(7)
    eval_batch = noised(eval_rng, held_out)
    history: list[dict[str, float | int | str]] = []
    # A diverging run overflows on purpose; it is detected below, not warned about.
    with np.errstate(over="ignore", invalid="ignore"), (run_dir / "metrics.jsonl").open("w") as out:
        for step in range(STAGES + 1):
            losses = []
            for _ in range(args.updates_per_step if step else 0):
                batch = data[rng.integers(0, len(data), size=args.batch)]
                losses.append(model.step(*noised(rng, batch), args.lr))
            eval_x, eval_level, eval_noise = eval_batch
            eval_loss = float(np.mean((model.predict(eval_x, eval_level) - eval_noise) ** 2))
            if not np.isfinite(eval_loss) or eval_loss > DIVERGED:
                raise_alert(
                    os.environ.get("WILD_RUN_ID", "denoiser"),
                    f"loss diverged at step {step} (lr={args.lr}): {eval_loss:.3g}",
                )
                history.append({"step": step, "eval_loss": float("inf"), "diverged": 1})
                out.write(json.dumps({"step": step, "eval_loss": None, "diverged": True}) + "\n")
                break
            samples = sample(model, seed=123)
            name = f"samples/step-{step}.png"
            (run_dir / name).write_bytes(png(sheet(samples)))
            line: dict[str, float | int | str] = {
                "step": step,
                "train_loss": float(np.mean(losses)) if losses else eval_loss,
                "eval_loss": eval_loss,
                "sample_nn_mse": nearest_mse(samples, data),
                "sample": name,
            }
            history.append(line)
            out.write(json.dumps(line) + "\n")
            out.flush()
    last = history[-1]
    summary = {
        "diverged": bool(last.get("diverged")),
        "steps": int(last["step"]),
        "eval_loss": last["eval_loss"] if not last.get("diverged") else None,
        "sample_nn_mse": last.get("sample_nn_mse"),
        "first_sample_nn_mse": history[0].get("sample_nn_mse"),
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
