"""A run's metric files found and followed: appended bytes only, rewrites read again,
metrics.json merged with the curves, sweep globs with placeholders."""

from __future__ import annotations

import math
import os
from pathlib import Path

from wild.metrics.follow import FileFollower, RunMetrics, run_summary
from wild.metrics.readers import JSONL, LIGHTNING_CSV
from wild.parsers.runs import RunRecord
from wild.paths import WildPaths


def _setup(tmp_path: Path, **params: object) -> tuple[WildPaths, RunRecord]:
    paths = WildPaths(tmp_path / ".wild")
    run = RunRecord("s1-000", "s1", params, "true", "running")
    paths.run_dir(run.id).mkdir(parents=True)
    return paths, run


def test_the_whole_history_and_metrics_json_merged(tmp_path: Path) -> None:
    # Today's reader kept only the last line, and ignored metrics.json when metrics.jsonl was there.
    paths, run = _setup(tmp_path)
    folder = paths.run_dir(run.id)
    (folder / "metrics.jsonl").write_text(
        '{"step": 1, "loss": 2.0}\n{"step": 2, "eval_acc": 0.4}\n{"step": 3, "loss": 1.0}\n'
    )
    (folder / "metrics.json").write_text('{"final_accuracy": 0.9}')
    view = RunMetrics(paths, run, None).refresh()
    assert dict(view.series) == {"loss": [(1, 2.0), (3, 1.0)], "eval_acc": [(2, 0.4)]}
    summary = run_summary(paths, run, None)
    assert dict(summary.last) == {"loss": 1.0, "eval_acc": 0.4, "final_accuracy": 0.9}
    assert summary.step == 3 and not summary.diverged


def test_a_nan_is_kept_and_judged_divergence(tmp_path: Path) -> None:
    # Today's last_metrics skipped the NaN line and reported the last good value.
    paths, run = _setup(tmp_path)
    (paths.run_dir(run.id) / "metrics.jsonl").write_text(
        '{"step": 1, "loss": 0.5}\n{"step": 2, "loss": NaN}\n'
    )
    summary = run_summary(paths, run, {"objective": {"metric": "loss", "mode": "min"}})
    assert math.isnan(summary.last["loss"]) and summary.diverged
    assert (summary.best, summary.best_step) == (0.5, 1)


def test_only_appended_bytes_are_read(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_bytes(b'{"step": 1, "loss": 1}\n{"step": 2, "lo')
    follower = FileFollower(str(path), JSONL)
    assert follower.read() and follower.series == {"loss": [(1, 1.0)]}
    assert not follower.read()  # unchanged: not read at all
    with path.open("ab") as out:
        out.write(b'ss": 2}\n')
    before = follower.offset
    follower.read()
    assert follower.series == {"loss": [(1, 1.0), (2, 2.0)]}
    assert follower.offset == before + len(b'ss": 2}\n')


def test_a_rewritten_csv_with_a_new_column_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "metrics.csv"
    path.write_text("step,train_loss\n0,1.0\n")
    follower = FileFollower(str(path), LIGHTNING_CSV)
    follower.read()
    path.write_text("step,train_loss,val_loss\n0,1.0,\n1,,0.5\n")  # Lightning rewrites it so
    os.utime(path, ns=(1, 1))
    follower.read()
    assert follower.series == {"train_loss": [(0, 1.0)], "val_loss": [(1, 0.5)]}


def test_sweep_globs_with_placeholders_in_the_workdir_and_a_param_folder(tmp_path: Path) -> None:
    paths, run = _setup(tmp_path, lr=0.1, out="outputs/a")
    project = paths.project
    logs = project / "logs" / "s1-000" / "version_0"
    logs.mkdir(parents=True)
    (logs / "metrics.csv").write_text("step,val_loss\n5,0.25\n")
    other = project / "logs" / "s1-001" / "version_0"
    other.mkdir(parents=True)
    (other / "metrics.csv").write_text("step,val_loss\n5,9.0\n")  # another run's: not read
    hf = project / "outputs" / "a" / "checkpoint-2"
    hf.mkdir(parents=True)
    (hf / "trainer_state.json").write_text('{"log_history": [{"step": 2, "loss": 3.0}]}')
    spec = {"metrics": ["logs/{run_id}/**/metrics.csv"]}
    reader = RunMetrics(paths, run, spec)
    view = reader.refresh()
    assert dict(view.series) == {"val_loss": [(5, 0.25)], "loss": [(2, 3.0)]}
    # A newer checkpoint repeats the history and adds to it: only the newest counts.
    newer = project / "outputs" / "a" / "checkpoint-4"
    newer.mkdir()
    (newer / "trainer_state.json").write_text(
        '{"log_history": [{"step": 2, "loss": 3.0}, {"step": 4, "loss": 2.0}]}'
    )
    os.utime(newer / "trainer_state.json", ns=(2**62, 2**62))
    assert reader.refresh().series["loss"] == [(2, 3.0), (4, 2.0)]


def test_an_earlier_attempts_files_are_not_this_attempts(tmp_path: Path) -> None:
    paths, run = _setup(tmp_path)
    earlier = paths.run_dir(run.id) / "attempt-1" / "lightning_logs" / "version_0"
    earlier.mkdir(parents=True)
    (earlier / "metrics.csv").write_text("step,loss\n1,5\n")
    assert dict(RunMetrics(paths, run, None).refresh().series) == {}


def test_a_metrics_file_that_is_a_link_is_never_read_through(tmp_path: Path) -> None:
    """An agent links a run's metrics.jsonl to a file outside the project: nothing of that
    file is read (so the dashboard never shows it), and the link is named as a problem."""
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"step": 1, "password": 1234}\n')
    link = tmp_path / "metrics.jsonl"
    link.symlink_to(secret)
    follower = FileFollower(str(link), JSONL)
    follower.read()
    assert follower.series == {}
    assert follower.problems == [f"{link}: a symbolic link; metrics are never read through one"]
