"""The held-out callback takes each validation as a value: from ``validation_step`` through Lightning's loop
(``on_validation_batch_end``'s ``outputs``), and from its own calls at step 0 and at the end; it writes the per-task
files and keeps the start and end means, and logs what it validated itself."""

import json
from types import SimpleNamespace

import lightning as L
import pytest

from lightning_genenv.callbacks.held_out import HeldOutValidation
from lightning_genenv.config import compose
from lightning_genenv.data import GenEnvDataModule
from lightning_genenv.models import load_causal_lm
from lightning_genenv.rollout.players import Rollouts
from lightning_genenv.validation import HeldOutValidator
from tests.fakes import ScriptedEngine, agent_module


def _script(i, n):
    return ["<answer>1</answer>" if (i + j) % 3 else "wrong" for j in range(n)]


def _setup(tmp_path, *overrides):
    cfg = compose(["model=tiny", "data.families=[qa_arith,weather]", "data.num_held_out=0", "data.num_val_subset=4",
                   "agent.val_num_generations=2", f"run_dir={tmp_path}", *overrides])
    dm = GenEnvDataModule(cfg.data, cfg.agent, pad_id=0)
    dm.setup()
    return cfg, dm


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_an_epochs_validation_reaches_the_callback_through_lightnings_loop(tiny_dir, tmp_path):
    """The agent's validation_step logs its result and returns it; Lightning hands it to the callback, which writes
    the epoch's file and, for the last epoch's whole-set validation, keeps the end means."""
    cfg, dm = _setup(tmp_path)
    model, tok = load_causal_lm(tiny_dir)
    agent = agent_module(model, tok, cfg.agent, rollouts=Rollouts.of(ScriptedEngine(_script)),
                         shots_for=lambda task: [])
    held_out = HeldOutValidation(cfg, dm)
    trainer = L.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_progress_bar=False,
                        enable_model_summary=False, enable_checkpointing=False, callbacks=[held_out])
    trainer.validate(agent, dataloaders=dm.val_dataloader())  # epoch 0 of 1: the last, the whole set
    records = _lines(tmp_path / "validation" / "epoch-0.jsonl")
    assert [r["task"] for r in records] == [t.id for t in dm.val] and dm.subset_ids is not None
    subset = [r["score"] for r in records if r["in_subset"]]
    logged = trainer.callback_metrics
    assert float(logged["val/score"]) == pytest.approx(sum(subset) / len(subset))
    assert float(logged["val_full/score"]) == pytest.approx(sum(r["score"] for r in records) / len(records))
    assert held_out.held_out["end"]["score"] == pytest.approx(float(logged["val_full/score"]))
    assert set(held_out.held_out["end"]) == {"score", "reward_mean"}


def test_step_0_and_the_end_are_validated_logged_and_written_by_the_callback(tmp_path):
    cfg, dm = _setup(tmp_path)
    validator = HeldOutValidator(cfg.agent, cfg.seed, lambda task: [1, 2, 3])
    agent = SimpleNamespace(validate=lambda batch, full: validator.validate(ScriptedEngine(_script), batch, full))
    written = []
    logger = SimpleNamespace(log_metrics=lambda metrics, step: written.append((step, metrics)))
    trainer = SimpleNamespace(global_step=0, current_epoch=0, max_epochs=3, is_global_zero=True, logger=logger,
                              sanity_checking=False)
    held_out = HeldOutValidation(cfg, dm)
    held_out.on_train_start(trainer, agent)
    (step, metrics), = written
    assert step == 0 and metrics["epoch"] == -1.0 and "time/validation" in metrics
    assert metrics["val_full/score"] == held_out.held_out["start"]["score"]
    assert len(_lines(tmp_path / "validation" / "step0.jsonl")) == len(dm.val)

    # an epoch's subset validation (not the whole set): its file, no end means
    epoch = validator.validate(ScriptedEngine(_script), dm.validation_batch(), full=False)
    held_out.on_validation_batch_end(SimpleNamespace(**{**vars(trainer), "current_epoch": 1}), agent, epoch, None, 0)
    assert len(_lines(tmp_path / "validation" / "epoch-1.jsonl")) == len(dm.val_subset) < len(dm.val)
    assert "end" not in held_out.held_out
    sanity = SimpleNamespace(**{**vars(trainer), "current_epoch": 2, "sanity_checking": True})
    held_out.on_validation_batch_end(sanity, agent, epoch, None, 0)
    assert not (tmp_path / "validation" / "epoch-2.jsonl").exists()

    # the last epoch did not validate: the whole set at its end, logged as that epoch's
    held_out.on_train_epoch_end(SimpleNamespace(**{**vars(trainer), "current_epoch": 2, "global_step": 6}), agent)
    assert written[-1][0] == 6 and written[-1][1]["epoch"] == 2.0
    assert held_out.held_out["end"] == {k.removeprefix("val_full/"): v for k, v in written[-1][1].items()
                                        if k in ("val_full/score", "val_full/reward_mean")}
    assert len(_lines(tmp_path / "validation" / "end.jsonl")) == len(dm.val)
    held_out.on_train_end(trainer, agent)  # the end is scored already
    assert len(written) == 2 and held_out.state_dict() == {"held_out": held_out.held_out}
