"""A plain torch loop logging to TensorBoard with SummaryWriter (a huge lr diverges)."""

import argparse
import os

import torch
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float)
parser.add_argument("--seed", type=int)
args = parser.parse_args()
torch.manual_seed(args.seed)
x = torch.randn(64, 4)
y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0])
net = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=args.lr)
writer = SummaryWriter(os.path.join(os.environ["WILD_RUN_DIR"], "tb"))
for step in range(20):
    loss = torch.nn.functional.mse_loss(net(x).squeeze(-1), y)
    opt.zero_grad()
    loss.backward()  # type: ignore[no-untyped-call]
    opt.step()
    writer.add_scalar("train/loss", loss.item(), step)
    if step % 5 == 4:
        writer.add_scalar("val/loss", loss.item(), step, new_style=True)
writer.close()
