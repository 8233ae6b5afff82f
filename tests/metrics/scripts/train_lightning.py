"""A tiny model trained with Lightning, logged by its CSVLogger into the run's folder."""

import argparse
import os

import lightning as L
import torch
from lightning.pytorch.loggers import CSVLogger

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float)
parser.add_argument("--seed", type=int)
args = parser.parse_args()
L.seed_everything(args.seed, verbose=False)
x = torch.randn(64, 4)
y = x @ torch.tensor([1.0, -2.0, 0.5, 3.0]) + 0.1 * torch.randn(64)
data = torch.utils.data.TensorDataset(x, y)


class Model(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def training_step(self, batch: list[torch.Tensor], _index: int) -> torch.Tensor:
        loss = torch.nn.functional.mse_loss(self.net(batch[0]).squeeze(-1), batch[1])
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: list[torch.Tensor], _index: int) -> None:
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(batch[0]).squeeze(-1), batch[1]))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=args.lr)


loader = torch.utils.data.DataLoader(data, batch_size=16)
trainer = L.Trainer(
    max_epochs=3,
    logger=CSVLogger(os.environ["WILD_RUN_DIR"], name="logs"),
    log_every_n_steps=1,
    accelerator="cpu",
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(Model(), loader, loader)
