"""A vLLM failure mid-run (an exception from the engine's generate) stops the run with one line that
names vLLM and says how to continue, and the same command (``resume=auto``) resumes it from the last
checkpoint and finishes.

Twice: through a fake ``vllm.LLM`` that answers through the transformers backend in vLLM's output format
(vLLM itself not needed, the real :class:`~lightning_genenv.rollout.vllm.VLLMEngine` code runs around
it), and, where vLLM imports, with the real engine whose ``LLM.generate`` raises in epoch 1."""

import gc
import importlib.util
import json
import sys
import types
from types import SimpleNamespace

import pytest

import lightning_genenv.assemble as assemble
import train
from lightning_genenv.callbacks.coevolution import CoEvolutionCallback
from lightning_genenv.rollout import HFEngine, SamplingParams
from lightning_genenv.rollout import vllm as vllm_backend
from lightning_genenv.rollout.base import EngineError, engine_errors
from tests.shrunk import TINY_ARGS

ENGINE_DEAD = "EngineCore encountered an issue. See stack trace (above) for the root cause."


class FakeLLM:
    """``vllm.LLM.generate`` answered by the transformers backend; raises once ``state['armed']``."""

    def __init__(self, model, tokenizer, state):
        self.hf, self.state = HFEngine(model, tokenizer, batch_size=16, progress=False), state

    def generate(self, requests, sampling, use_tqdm=False):
        if self.state["armed"]:
            raise RuntimeError(f"{ENGINE_DEAD}\nsecond line of vLLM's message")
        params = SamplingParams(n=sampling.n, temperature=sampling.temperature or 1.0, top_p=sampling.top_p,
                                max_new_tokens=sampling.max_tokens, greedy=sampling.temperature == 0.0)
        groups = self.hf.generate([r["prompt_token_ids"] for r in requests], params)
        return [SimpleNamespace(outputs=[SimpleNamespace(
            index=i, token_ids=s.completion_ids,
            logprobs=[{t: SimpleNamespace(logprob=lp)} for t, lp in zip(s.completion_ids, s.logprobs)])
            for i, s in enumerate(group)]) for group in groups]


class FakeHost:
    def __init__(self, model, tokenizer, state):
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        self.config, self.loaded, self.llm = base.config, None, FakeLLM(model, tokenizer, state)

    def push(self, weights):  # the fake samples from the trained model itself: always current
        pass


def test_engine_errors_become_one_line_naming_the_engine():
    with pytest.raises(EngineError) as e:
        with engine_errors("vLLM", "generate (agent rollouts)"):
            raise RuntimeError(f"{ENGINE_DEAD}\nmore")
    assert str(e.value) == f"vLLM failed in generate (agent rollouts): RuntimeError: {ENGINE_DEAD}"
    assert isinstance(e.value.__cause__, RuntimeError)


@pytest.mark.slow
def test_a_vllm_failure_mid_run_stops_in_one_line_and_the_run_resumes(tiny_sft_dir, tmp_path, monkeypatch, capsys):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_sft_dir)
    state = {"fail_in_epoch": 1, "armed": False}
    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(SamplingParams=lambda **kw: SimpleNamespace(**kw)))
    monkeypatch.setattr(vllm_backend, "_Host", lambda model, cfg: FakeHost(model, tokenizer, state))
    monkeypatch.setattr(assemble, "choose_backend", lambda *a, **k: ("vllm", "a fake vLLM (test)"))
    _arm_in_epoch(state, monkeypatch)
    _fail_then_resume(tiny_sft_dir, tmp_path / "run", state, capsys)


def _arm_in_epoch(state, monkeypatch) -> None:
    """``state['armed']`` is true during epoch ``state['fail_in_epoch']``."""
    epoch_start = CoEvolutionCallback.on_train_epoch_start

    def arm(self, trainer, agent):
        state["armed"] = trainer.current_epoch == state["fail_in_epoch"]
        return epoch_start(self, trainer, agent)

    monkeypatch.setattr(CoEvolutionCallback, "on_train_epoch_start", arm)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vLLM is not installed")
def test_a_real_vllm_engine_failure_stops_in_one_line_and_the_run_resumes(tmp_path, monkeypatch, capsys):
    import vllm

    from lightning_genenv.models.tiny import tiny_model_dir

    model_dir = str(tiny_model_dir(num_heads=2))  # vLLM's CPU attention needs head size >= 32

    state = {"fail_in_epoch": 1, "armed": False}
    generate = vllm.LLM.generate

    def failing(self, *a, **k):
        if state["armed"]:
            raise RuntimeError(f"{ENGINE_DEAD}\nsecond line of vLLM's message")
        return generate(self, *a, **k)

    monkeypatch.setattr(vllm.LLM, "generate", failing)
    _arm_in_epoch(state, monkeypatch)
    _fail_then_resume(model_dir, tmp_path / "run", state, capsys)


def _fail_then_resume(model_dir, run_dir, state, capsys) -> None:
    """Two epochs with ``resume=auto`` on vLLM: the engine fails in epoch 1 (one line, the checkpoint of epoch 0
    kept), then works again and the same command resumes and finishes."""
    args = [f"model.agent={model_dir}", f"model.simulator={model_dir}", f"run_dir={run_dir}", "resume=auto",
            *[a for a in TINY_ARGS if a != "rollout=hf" and not a.startswith("trainer.max_epochs")],
            "rollout=vllm", "trainer.max_epochs=2"]
    with pytest.raises(SystemExit) as e:
        train.main(args)
    message = str(e.value)
    assert message.startswith("error: vLLM failed in generate (") and "\n" not in message, message
    assert f"RuntimeError: {ENGINE_DEAD}; the run stopped: resume it with resume={run_dir}" in message
    assert (run_dir / "checkpoints" / "last.ckpt").is_file() and not (run_dir / "summary.json").exists()

    state["fail_in_epoch"] = None  # the engine works again: the same command resumes
    capsys.readouterr()
    gc.collect()  # the failed run's engine, if a real one, is released before the next starts
    train.main(args)
    assert capsys.readouterr().out.splitlines()[0] == f"resume=auto: resuming {run_dir} from its checkpoints/last.ckpt"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["epochs"] == 2 and summary["agent_steps"] == 2 * (8 // 2)  # both epochs trained
