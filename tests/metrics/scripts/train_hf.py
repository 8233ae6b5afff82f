"""A tiny BERT built from a config (no weights downloaded) trained by transformers.Trainer."""

import argparse
import os

import torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float)
parser.add_argument("--seed", type=int)
args = parser.parse_args()
torch.manual_seed(args.seed)
config = BertConfig(
    vocab_size=32,
    hidden_size=8,
    num_hidden_layers=1,
    num_attention_heads=2,
    intermediate_size=16,
    max_position_embeddings=16,
)
config.num_labels = 2  # a keyword its typed signature does not list
ids = torch.randint(0, 32, (32, 8))
labels = (ids[:, 0] > 15).long()


class Data(torch.utils.data.Dataset[dict[str, torch.Tensor]]):
    def __len__(self) -> int:
        return len(ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": ids[i], "labels": labels[i]}


out = os.path.join(os.environ["WILD_RUN_DIR"], "hf")
trainer = Trainer(
    model=BertForSequenceClassification(config),
    args=TrainingArguments(
        output_dir=out,
        learning_rate=args.lr,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        logging_steps=2,
        eval_strategy="steps",
        eval_steps=4,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        seed=args.seed,
        disable_tqdm=True,
    ),
    train_dataset=Data(),
    eval_dataset=Data(),
)
trainer.train()
trainer.save_state()
