"""The transformers rollout engine (:mod:`lightning_genenv.rollout.hf`) on the tiny model: groups,
log-probs equal to the trainer's, truncation, greedy decoding against a token-by-token reference, the
shared-prefix path for groups, EOS and padding ids, the training mode kept, the progress bar."""

from types import SimpleNamespace

import pytest
import torch

from lightning_genenv.epoch_values import Group, collate_groups
from lightning_genenv.models import load_causal_lm
from lightning_genenv.rollout import HFEngine, SamplingParams, build_engine


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    torch.manual_seed(0)
    return load_causal_lm(tiny_dir)


def test_engine_groups_logprobs_and_truncation(tiny):
    model, tok = tiny
    engine = HFEngine(model, tok, batch_size=2)
    texts = ("hello world", "a", "the weather in paris")
    prompts = [tok(text, add_special_tokens=False)["input_ids"] for text in texts]
    groups = engine.generate(prompts, SamplingParams(n=3, max_new_tokens=6, temperature=0.9))
    assert [len(g) for g in groups] == [3, 3, 3]
    for prompt, group in zip(prompts, groups):
        for s in group:
            assert s.prompt_ids == prompt and len(s.logprobs) == len(s.completion_ids) <= 6
            assert s.truncated == (len(s.completion_ids) == 6 and s.completion_ids[-1] not in engine.eos_ids)
    # sampling log-probs equal the trainer's log-probs of the same tokens at the same temperature
    s = groups[2][0]
    batch = collate_groups([Group(task=None, prompt_ids=s.prompt_ids, completion_ids=[s.completion_ids],
                                  rewards=[0.0], logprobs=[s.logprobs], truncated=[s.truncated], texts=[s.text],
                                  advantages=[0.0])], tok.pad_token_id)
    from lightning_genenv.losses import sequence_logprobs
    with torch.no_grad():
        lp = sequence_logprobs(model, batch, 0.9)
    assert lp[0, :len(s.logprobs)].tolist() == pytest.approx(s.logprobs, abs=1e-4)


def test_engine_greedy_is_deterministic_and_batch_independent(tiny):
    model, tok = tiny
    prompts = [tok(text, add_special_tokens=False)["input_ids"] for text in ("one two", "three four five six")]
    p = SamplingParams(n=1, greedy=True, max_new_tokens=5)
    together = HFEngine(model, tok, batch_size=2).generate(prompts, p)
    alone = HFEngine(model, tok, batch_size=1).generate(prompts, p)
    assert [g[0].completion_ids for g in together] == [g[0].completion_ids for g in alone]


def test_a_seeded_call_repeats_its_samples_and_leaves_torchs_stream_as_it_was(tiny):
    model, tok = tiny
    engine = HFEngine(model, tok, batch_size=2)
    prompts = [tok(text, add_special_tokens=False)["input_ids"] for text in ("one two", "three four five six")]
    seeded = SamplingParams(n=4, max_new_tokens=8, temperature=1.5, seed=7)
    torch.manual_seed(123)
    first = engine.generate(prompts, seeded)
    after_seeded = torch.rand(3)
    torch.manual_seed(123)
    second = engine.generate(prompts, seeded)
    assert [[s.completion_ids for s in g] for g in first] == [[s.completion_ids for s in g] for g in second]
    torch.manual_seed(123)
    assert torch.equal(torch.rand(3), after_seeded)  # the seeded call drew nothing from the global stream
    other = engine.generate(prompts, SamplingParams(n=4, max_new_tokens=8, temperature=1.5, seed=8))
    assert [[s.completion_ids for s in g] for g in other] != [[s.completion_ids for s in g] for g in first]
    torch.manual_seed(123)  # unseeded: the global stream is advanced, as every training rollout does
    engine.generate(prompts, SamplingParams(n=4, max_new_tokens=8, temperature=1.5))
    assert not torch.equal(torch.rand(3), after_seeded)


def _greedy_by_hand(model, prompt, max_new_tokens, eos_ids):
    """Greedy decoding one token at a time with full forwards (no cache, no padding): the reference."""
    ids, out, logprobs = list(prompt), [], []
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits = model(torch.tensor([ids])).logits[0, -1].float()
            token = int(logits.argmax())
            out.append(token)
            logprobs.append(torch.log_softmax(logits, -1)[token].item())
            ids.append(token)
            if token in eos_ids:
                break
    return out, logprobs


def test_greedy_matches_token_by_token_decoding_with_left_padding(tiny):
    model, tok = tiny
    prompts = [[5, 6, 7, 8, 9, 10, 11], [12], [13, 14, 15]]  # different lengths: two are left-padded
    groups = HFEngine(model, tok, batch_size=3).generate(prompts, SamplingParams(n=1, greedy=True, max_new_tokens=6))
    engine_eos = HFEngine(model, tok).eos_ids
    for prompt, (sample,) in zip(prompts, groups):
        want, want_lp = _greedy_by_hand(model, prompt, 6, engine_eos)
        assert sample.completion_ids == want
        assert sample.logprobs == pytest.approx(want_lp, abs=1e-4)
        assert sample.truncated == (want[-1] not in engine_eos)
        assert sample.text == tok.decode(want, skip_special_tokens=True)


def test_a_greedy_group_shares_the_prompt_and_matches_a_single_sample(tiny):
    """n > 1 prefills each prompt once and shares its cache: greedy, every sample equals n=1's."""
    model, tok = tiny
    prompts = [[5, 6, 7, 8], [9, 10]]
    one = HFEngine(model, tok).generate(prompts, SamplingParams(n=1, greedy=True, max_new_tokens=5))
    three = HFEngine(model, tok).generate(prompts, SamplingParams(n=3, greedy=True, max_new_tokens=5))
    assert [len(g) for g in three] == [3, 3]
    for single, group in zip(one, three):
        for s in group:
            assert s.completion_ids == single[0].completion_ids and s.prompt_ids == single[0].prompt_ids
            assert s.logprobs == pytest.approx(single[0].logprobs, abs=1e-4)


def test_a_greedy_group_of_one_token_prompts(tiny):
    """Once a ValueError: with nothing to prefill, n > 1 went to transformers as num_return_sequences,
    which greedy decoding refuses."""
    model, tok = tiny
    (group,) = HFEngine(model, tok).generate([[5]], SamplingParams(n=2, greedy=True, max_new_tokens=2))
    assert group[0].completion_ids == group[1].completion_ids


def test_max_new_tokens_bounds_every_completion(tiny):
    model, tok = tiny
    groups = HFEngine(model, tok).generate([[5, 6, 7]], SamplingParams(n=4, max_new_tokens=1, temperature=1.0))
    for s in groups[0]:
        assert len(s.completion_ids) == len(s.logprobs) == 1
        assert s.truncated == (s.completion_ids[0] not in HFEngine(model, tok).eos_ids)
        assert s.logprobs[0] <= 0.0


def test_generate_keeps_the_models_mode_and_handles_no_prompts(tiny):
    model, tok = tiny
    engine = HFEngine(model, tok)
    params = SamplingParams(n=1, greedy=True, max_new_tokens=2)
    for training in (True, False):
        model.train(training)
        engine.generate([[5, 6]], params)
        assert model.training is training
    model.eval()
    assert engine.generate([], params) == []
    engine.sync()  # a no-op: it samples from the live weights
    assert engine.pop_sync_times() == []


def _fake(eos, tok_eos, pad, with_config=True):
    model = SimpleNamespace(generation_config=SimpleNamespace(eos_token_id=eos) if with_config else None)
    return model, SimpleNamespace(eos_token_id=tok_eos, pad_token_id=pad)


@pytest.mark.parametrize("eos,tok_eos,pad,with_config,eos_ids,pad_id", [
    ([3, 4], 5, 0, True, {3, 4, 5}, 0),  # the generation config's EOS ids and the tokenizer's
    (4, 4, None, True, {4}, 4),  # one id; no pad token: pad with EOS
    (None, 7, 1, True, {7}, 1),  # the config names none: the tokenizer's
    ([3], 7, None, False, {7}, 7),  # no generation config at all
])
def test_eos_and_pad_ids(eos, tok_eos, pad, with_config, eos_ids, pad_id):
    engine = HFEngine(*_fake(eos, tok_eos, pad, with_config))
    assert engine.eos_ids == eos_ids and engine.pad_id == pad_id


def test_the_tiny_models_eos_is_im_end(tiny):
    model, tok = tiny
    engine = HFEngine(model, tok, batch_size=4)
    assert tok.convert_tokens_to_ids("<|im_end|>") in engine.eos_ids and engine.pad_id == tok.pad_token_id
    assert engine.batch_size == 4 and engine.progress


def test_a_labelled_generation_shows_a_bar_counting_samples(tiny, capsys):
    model, tok = tiny
    params = SamplingParams(n=2, greedy=True, max_new_tokens=2)
    HFEngine(model, tok, batch_size=1).generate([[5, 6], [7, 8], [9, 10]], params, desc="agent: attempts")
    err = capsys.readouterr().err
    assert "agent: attempts" in err and "/6" in err and "sample" in err
    HFEngine(model, tok, batch_size=1, progress=False).generate([[5, 6]], params, desc="agent: attempts")
    HFEngine(model, tok).generate([[5, 6]], params)  # no label: no bar
    assert capsys.readouterr().err == ""


def test_build_engine_makes_an_hf_engine_and_rejects_an_unknown_backend(tiny):
    model, tok = tiny
    engine = build_engine("hf", model, tok, batch_size=3, progress=False)
    assert isinstance(engine, HFEngine) and engine.batch_size == 3 and not engine.progress and engine.model is model
    with pytest.raises(ValueError, match=r"rollout.backend='sglang': unknown backend \(available: auto, hf, vllm\)"):
        build_engine("sglang", model, tok, batch_size=1)
