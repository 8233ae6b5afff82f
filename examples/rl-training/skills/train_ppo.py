"""PPO on gymnasium's CartPole-v1, in numpy: one run is one seed of one setting, on one CPU.

The learner is textbook PPO (Schulman et al., 2017): a policy net and a value net (each one
tanh hidden layer of 64 units, hand-written backprop), the clipped surrogate objective, GAE
(gamma 0.99, lambda 0.95), advantage normalisation per minibatch, an entropy bonus, Adam,
global gradient-norm clipping. The environment is gymnasium's own vectorised CartPole-v1
(`gymnasium.make_vec`): 64 copies in 4 groups of 16.

A rollout batch is `batch_size` = 64 trajectory segments (one per environment copy) of
`horizon` steps each, as an LLM batch is 64 sampled sequences. It is cut into
`batch_size / mini_batch_size` minibatches of whole segments, each one optimizer step
(`epochs` passes, 1 by default), so with 64/16 the later minibatches are scored by a policy
one to three updates newer than the one that sampled them: the PPO ratio pi/pi_old and its
clip act on exactly that staleness. `--sampling=fresh` is the control at equal updates:
the same minibatches and optimizer steps, but each group of segments is sampled by the
current policy just before its update, so no sample is stale.

`--init` is where the policy starts: `random` (a fresh network) or `bc` (behaviour cloning:
a few epochs of cross-entropy on the actions of a scripted CartPole controller, so the run
starts from a partly competent policy, as a fine-tuned base model would).

Parameters arrive as `--key=value` (wild appends them per run; `--setting={...}` JSON spreads
into its keys). Every update appends one line to `$WILD_RUN_DIR/metrics.jsonl`; the end
writes `metrics.json`. `--crash_once_on=KEY` (KEY as `run_key` writes it) crashes the first
attempt of the matching run only: a marker in the run folder remembers it, so a rerun goes
through.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one core per run: wild runs several side by side

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gymnasium  # noqa: E402
import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

ENV_ID = "CartPole-v1"
ENVS, GROUPS = 64, 4  # 64 environment copies; minibatches are made of whole groups of 16
HIDDEN = 64
GAMMA, LAMBDA = 0.99, 0.95
ENT_COEF, MAX_GRAD_NORM = 0.01, 0.5
CRASH_MARKER = ".crashed-once"

Floats = NDArray[np.float64]
Params = dict[str, Floats]


def mlp(rng: np.random.Generator, outputs: int, out_scale: float) -> Params:
    """4 -> 64 (tanh) -> outputs; a small last layer so the first policy is near uniform."""
    return {
        "w1": rng.normal(0.0, 1.0, (4, HIDDEN)) / 2.0,
        "b1": np.zeros(HIDDEN),
        "w2": rng.normal(0.0, out_scale, (HIDDEN, outputs)) / np.sqrt(HIDDEN),
        "b2": np.zeros(outputs),
    }


def forward(net: Params, obs: Floats) -> tuple[Floats, Floats]:
    hidden = np.tanh(obs @ net["w1"] + net["b1"])
    return hidden, hidden @ net["w2"] + net["b2"]


def backward(net: Params, obs: Floats, hidden: Floats, d_out: Floats) -> Params:
    """The gradient of the loss whose derivative w.r.t. the net's output is `d_out`."""
    d_hidden = (d_out @ net["w2"].T) * (1.0 - hidden**2)
    return {
        "w1": obs.T @ d_hidden,
        "b1": d_hidden.sum(axis=0),
        "w2": hidden.T @ d_out,
        "b2": d_out.sum(axis=0),
    }


def log_softmax(logits: Floats) -> Floats:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    result: Floats = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return result


@dataclass
class Adam:
    """Adam (Kingma & Ba) over one net's arrays, with the gradient's global norm clipped."""

    lr: float
    m: Params = field(default_factory=dict)
    v: Params = field(default_factory=dict)
    t: int = 0

    def step(self, net: Params, grads: Params) -> None:
        norm = float(np.sqrt(sum(float((g**2).sum()) for g in grads.values())))
        scale = min(1.0, MAX_GRAD_NORM / (norm + 1e-8))
        self.t += 1
        for key, grad in grads.items():
            g = grad * scale
            self.m[key] = 0.9 * self.m.get(key, np.zeros_like(g)) + 0.1 * g
            self.v[key] = 0.999 * self.v.get(key, np.zeros_like(g)) + 0.001 * g**2
            m_hat = self.m[key] / (1 - 0.9**self.t)
            v_hat = self.v[key] / (1 - 0.999**self.t)
            net[key] -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def expert_action(obs: Floats) -> NDArray[np.int64]:
    """The scripted controller behaviour cloning imitates: push toward where the pole falls."""
    result: NDArray[np.int64] = (obs[:, 2] + 0.3 * obs[:, 3] + 0.02 * obs[:, 1] > 0).astype(
        np.int64
    )
    return result


def behaviour_cloning(policy: Params, rng: np.random.Generator, seed: int, epochs: int) -> None:
    """A few epochs of cross-entropy on the expert's actions in states the expert visits."""
    env = gymnasium.make_vec(ENV_ID, num_envs=16, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=seed + 10_000)
    states = []
    for _ in range(64):
        states.append(obs.astype(np.float64))
        obs, *_ = env.step(expert_action(obs.astype(np.float64)))
    env.close()
    data = np.concatenate(states)
    labels = expert_action(data)
    adam = Adam(lr=3e-3)
    for _ in range(epochs):
        order = rng.permutation(len(data))
        for start in range(0, len(data), 256):
            part = order[start : start + 256]
            hidden, logits = forward(policy, data[part])
            d_logits = np.exp(log_softmax(logits))
            d_logits[np.arange(len(part)), labels[part]] -= 1.0
            adam.step(policy, backward(policy, data[part], hidden, d_logits / len(part)))


def first_episodes(policy: Params, seed: int, rng: np.random.Generator) -> Floats:
    """One whole episode per environment copy with the starting policy: the curve's step 0,
    and what the monitor shows until each copy's first training episode ends."""
    env = gymnasium.make_vec(ENV_ID, num_envs=ENVS, vectorization_mode="vector_entry_point")
    obs, _ = env.reset(seed=seed + 20_000)
    returns, alive = np.zeros(ENVS), np.ones(ENVS, dtype=bool)
    while alive.any():
        log_probs = log_softmax(forward(policy, obs.astype(np.float64))[1])
        actions = (rng.random(ENVS) < np.exp(log_probs[:, 1])).astype(np.int64)
        obs, reward, term, trunc, _ = env.step(actions)
        returns += reward * alive
        alive &= ~(term | trunc)
    env.close()
    return returns


@dataclass
class Batch:
    """One group's rollout: `valid` is False on the step an environment spends resetting."""

    obs: Floats  # (T, n, 4)
    actions: NDArray[np.int64]
    logp: Floats
    advantages: Floats
    returns: Floats
    valid: NDArray[np.bool_]


@dataclass
class Group:
    """16 copies of the environment and what the monitor knows about their episodes."""

    env: Any
    obs: Floats
    was_done: NDArray[np.bool_]
    running: Floats
    last_return: Floats


def rollout(
    groups: list[Group], policy: Params, value: Params, horizon: int, rng: Any
) -> list[Batch]:
    """`horizon` steps of every copy in `groups` (one policy pass per step for all of them);
    GAE per group (next-step autoreset: the step after an episode's end only resets that
    copy, so it is masked out)."""
    size = groups[0].obs.shape[0]
    n = size * len(groups)
    obs = np.zeros((horizon + 1, n, 4))
    actions = np.zeros((horizon, n), dtype=np.int64)
    logp = np.zeros((horizon, n))
    rewards = np.zeros((horizon, n))
    terminated = np.zeros((horizon, n), dtype=bool)
    done = np.zeros((horizon, n), dtype=bool)
    valid = np.zeros((horizon, n), dtype=bool)
    for t in range(horizon):
        obs[t] = np.concatenate([g.obs for g in groups])
        valid[t] = np.concatenate([~g.was_done for g in groups])
        log_probs = log_softmax(forward(policy, obs[t])[1])
        actions[t] = (rng.random(n) < np.exp(log_probs[:, 1])).astype(np.int64)
        logp[t] = log_probs[np.arange(n), actions[t]]
        for k, group in enumerate(groups):
            part = slice(k * size, (k + 1) * size)
            next_obs, reward, term, trunc, _ = group.env.step(actions[t, part])
            rewards[t, part], terminated[t, part], done[t, part] = reward, term, term | trunc
            group.running += reward
            finished = done[t, part] & valid[t, part]
            group.last_return[finished] = group.running[finished]
            group.running[done[t, part] | group.was_done] = 0.0
            group.was_done = done[t, part].copy()
            group.obs = next_obs.astype(np.float64)
    obs[horizon] = np.concatenate([g.obs for g in groups])
    values = forward(value, obs.reshape(-1, 4))[1].reshape(horizon + 1, n)
    advantages = np.zeros((horizon, n))
    following = np.zeros(n)
    for t in reversed(range(horizon)):
        delta = rewards[t] + GAMMA * values[t + 1] * ~terminated[t] - values[t]
        following = delta + GAMMA * LAMBDA * ~done[t] * following
        advantages[t] = following
    returns = advantages + values[:-1]
    return [
        Batch(obs[:-1, p], actions[:, p], logp[:, p], advantages[:, p], returns[:, p], valid[:, p])
        for p in (slice(k * size, (k + 1) * size) for k in range(len(groups)))
    ]


@dataclass
class UpdateStats:
    clipped: int = 0
    samples: int = 0
    kl: float = 0.0
    entropy: float = 0.0
    steps: int = 0


def ppo_step(
    policy: Params, value: Params, opts: tuple[Adam, Adam], part: list[Batch], clip: float
) -> tuple[int, int, float, float]:
    """One optimizer step of each net on the minibatch `part` (whole segments)."""
    mask = np.concatenate([b.valid.reshape(-1) for b in part])
    obs = np.concatenate([b.obs.reshape(-1, 4) for b in part])[mask]
    actions = np.concatenate([b.actions.reshape(-1) for b in part])[mask]
    old_logp = np.concatenate([b.logp.reshape(-1) for b in part])[mask]
    adv = np.concatenate([b.advantages.reshape(-1) for b in part])[mask]
    returns = np.concatenate([b.returns.reshape(-1) for b in part])[mask]
    count = len(actions)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    hidden, logits = forward(policy, obs)
    log_probs = log_softmax(logits)
    probs = np.exp(log_probs)
    new_logp = log_probs[np.arange(count), actions]
    log_ratio = new_logp - old_logp
    ratio = np.exp(log_ratio)
    clipped = np.abs(ratio - 1.0) > clip
    # d/dlogp of -min(r A, clip(r) A): -r A where the unclipped term is the smaller, else 0.
    unclipped = ratio * adv <= np.clip(ratio, 1 - clip, 1 + clip) * adv
    d_logp = np.where(unclipped, -ratio * adv, 0.0) / count
    d_logits = -probs * d_logp[:, None]
    d_logits[np.arange(count), actions] += d_logp
    entropy = -(probs * log_probs).sum(axis=1)
    d_logits += ENT_COEF * probs * (log_probs + entropy[:, None]) / count
    opts[0].step(policy, backward(policy, obs, hidden, d_logits))
    v_hidden, v_out = forward(value, obs)
    d_value = (v_out[:, 0] - returns)[:, None] / count
    opts[1].step(value, backward(value, obs, v_hidden, d_value))
    approx_kl = float(np.mean(ratio - 1.0 - log_ratio))  # the k3 estimator of KL(old||new)
    return int(clipped.sum()), count, approx_kl, float(entropy.mean())


def train(args: argparse.Namespace) -> list[dict[str, float]]:
    """One run: its metrics after each update."""
    rng = np.random.default_rng(args.seed)
    policy, value = mlp(rng, 2, 0.01), mlp(rng, 1, 1.0)
    if args.init == "bc":
        behaviour_cloning(policy, rng, args.seed, args.bc_epochs)
    opts = (Adam(args.lr), Adam(args.lr))
    size = ENVS // GROUPS
    start = first_episodes(policy, args.seed, rng)
    groups = []
    for g in range(GROUPS):
        env = gymnasium.make_vec(ENV_ID, num_envs=size, vectorization_mode="vector_entry_point")
        obs, _ = env.reset(seed=args.seed * 100 + g)
        none, known = np.zeros(size, dtype=bool), start[g * size : (g + 1) * size].copy()
        groups.append(Group(env, obs.astype(np.float64), none, np.zeros(size), known))
    per_step = args.mini_batch_size // size  # groups per minibatch
    first = float(start.mean())
    history: list[dict[str, float]] = [
        {"step": 0, "env_steps": 0, "return": first, "episode_length": first}
    ]
    env_steps = 0
    for update in range(1, args.updates + 1):
        stats = UpdateStats()
        chunks = [groups[i : i + per_step] for i in range(0, GROUPS, per_step)]
        if args.sampling == "stale":  # the whole batch sampled once, by this policy
            batches = rollout(groups, policy, value, args.horizon, rng)
        for _ in range(args.epochs):
            for n, chunk in enumerate(chunks):
                if args.sampling == "fresh":  # sampled by the policy this step updates
                    part = rollout(chunk, policy, value, args.horizon, rng)
                else:
                    part = batches[n * per_step : (n + 1) * per_step]
                clipped, count, kl, entropy = ppo_step(policy, value, opts, part, args.clip_coef)
                stats.clipped += clipped
                stats.samples += count
                stats.kl += kl
                stats.entropy += entropy
                stats.steps += 1
        env_steps += ENVS * args.horizon
        # The monitor: each copy's last finished episode (under a recent policy), averaged.
        episode = float(np.concatenate([g.last_return for g in groups]).mean())
        history.append(
            {
                "step": update,
                "env_steps": env_steps,
                # CartPole pays 1 per step alive, so an episode's return is its length.
                "return": episode,
                "episode_length": episode,
                "clip_frac": stats.clipped / max(stats.samples, 1),
                "approx_kl": stats.kl / stats.steps,
                "entropy": stats.entropy / stats.steps,
            }
        )
    for group in groups:
        group.env.close()
    return history


def run_key(args: argparse.Namespace) -> str:
    return (
        f"{args.init}/{args.clip_coef:g}/{args.batch_size}x{args.mini_batch_size}"
        f"/{args.sampling}/seed{args.seed}"
    )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--init", choices=("random", "bc"), default="random")
    parser.add_argument("--clip_coef", type=float, default=0.2)
    parser.add_argument("--batch_size", type=int, default=ENVS)
    parser.add_argument("--mini_batch_size", type=int, default=ENVS)
    parser.add_argument("--sampling", choices=("stale", "fresh"), default="stale")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--setting", type=json.loads, default=None, help="keys as JSON")
    parser.add_argument("--offpolicy", type=json.loads, default=None, help="a pair as JSON")
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--horizon", type=int, default=16, help="steps per segment")
    parser.add_argument("--updates", type=int, default=24)
    parser.add_argument("--bc_epochs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--crash_once_on", default="")
    args = parser.parse_args(argv)
    for bundle in (args.offpolicy, args.setting):  # `--setting={"clip_coef": 0.2, ...}`
        for key, value in (bundle or {}).items():
            if not hasattr(args, key) or key in ("setting", "offpolicy"):
                parser.error(f"unknown key {key!r} in a JSON parameter")
            setattr(args, key, type(getattr(args, key))(value))
    if args.batch_size != ENVS:
        parser.error(f"batch_size is the {ENVS} environment copies: it must be {ENVS}")
    if args.mini_batch_size not in (16, 32, 64):
        parser.error("mini_batch_size must be 16, 32 or 64 (whole groups of 16 segments)")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    run_dir = Path(os.environ.get("WILD_RUN_DIR", "."))
    run_dir.mkdir(parents=True, exist_ok=True)
    history = train(args)
    marker = run_dir / CRASH_MARKER
    crash = args.crash_once_on == run_key(args) and not marker.exists()
    with (run_dir / "metrics.jsonl").open("w") as out:  # a rerun starts its curve afresh
        for line in history:
            if crash and line["step"] == args.updates // 3:
                marker.write_text("crashed once on purpose; the rerun will go through\n")
                print(f"update {line['step']}: RuntimeError: NaN in the policy loss (simulated)")
                return 1
            out.write(json.dumps(line) + "\n")
    returns = [line["return"] for line in history]
    tail = max(1, len(returns) // 10)
    summary = {
        "run": run_key(args),
        "final_return": float(np.mean(returns[-tail:])),
        "return_auc": float(np.mean(returns)),
        "updates": args.updates,
        "env_steps": history[-1]["env_steps"],
    }
    (run_dir / "metrics.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"{summary['run']}: final return {summary['final_return']:.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
