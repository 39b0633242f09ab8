"""Reference tests for the loss math, against values computed by hand."""

import math

import pytest
import torch

from lightning_genenv import losses


def test_group_advantages_group_scaling():
    r = torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    adv = losses.group_advantages(r, num_generations=3, scale_rewards="group", eps=0.0)
    # group 1: mean 1/3, unbiased std sqrt(1/3); group 2: mean 2/3, same std
    s = math.sqrt(1 / 3)
    expected = [2 / 3 / s, -1 / 3 / s, -1 / 3 / s, -2 / 3 / s, 1 / 3 / s, 1 / 3 / s]
    assert adv.tolist() == pytest.approx(expected, rel=1e-5)


def test_group_advantages_batch_and_none():
    r = torch.tensor([1.0, 0.0, 1.0, 1.0])
    none = losses.group_advantages(r, 2, "none")
    assert none.tolist() == pytest.approx([0.5, -0.5, 0.0, 0.0])
    batch = losses.group_advantages(r, 2, "batch", eps=0.0)
    assert batch.tolist() == pytest.approx([0.5 / 0.5, -0.5 / 0.5, 0.0, 0.0])  # batch std = 0.5


def test_group_advantages_constant_group_is_zero():
    adv = losses.group_advantages(torch.ones(4), 4, "group")
    assert adv.abs().max() == 0


def test_group_advantages_rejects_bad_input():
    with pytest.raises(ValueError, match="groups of 3"):
        losses.group_advantages(torch.ones(4), 3)
    with pytest.raises(ValueError, match="scale_rewards"):
        losses.group_advantages(torch.ones(4), 2, "std")


def test_token_logprobs_matches_log_softmax_and_chunks():
    torch.manual_seed(0)
    logits = torch.randn(3, 5, 11)
    tokens = torch.randint(0, 11, (3, 5))
    ref = torch.log_softmax(logits, -1).gather(-1, tokens[..., None]).squeeze(-1)
    for chunk in (1, 4, 1024):
        assert torch.allclose(losses.token_logprobs(logits, tokens, chunk_size=chunk), ref, atol=1e-6)
    ref_t = torch.log_softmax(logits / 0.7, -1).gather(-1, tokens[..., None]).squeeze(-1)
    assert torch.allclose(losses.token_logprobs(logits, tokens, temperature=0.7), ref_t, atol=1e-6)


def test_k3_kl_hand_values():
    logp = torch.tensor([math.log(0.5), math.log(0.2)])
    ref = torch.tensor([math.log(0.25), math.log(0.2)])
    # r = ref/p = 0.5 -> 0.5 - log(0.5) - 1
    expected = [0.5 - math.log(0.5) - 1, 0.0]
    assert losses.k3_kl(logp, ref).tolist() == pytest.approx(expected, abs=1e-7)


def _hand_case():
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.1], [0.3, 0.9, 0.9]]))
    old = torch.log(torch.tensor([[0.25, 0.5, 0.1], [0.5, 0.9, 0.9]]))
    mask = torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]])
    adv = torch.tensor([1.0, -2.0])
    return logp, old, mask, adv


def test_grpo_loss_clipping_and_loss_types_by_hand():
    logp, old, mask, adv = _hand_case()
    # ratios: row0 = [2, 1, 1]; row1 = [0.6, 1, 1]
    # row0 (A=1): -min(r*A, clip(r)*A) -> token0: -min(2, 1.2) = -1.2 ; token1: -1
    # row1 (A=-2): token0: -min(-1.2, clip(0.6)=0.8 -> -1.6) = 1.6 ; tokens1,2: 2
    per_tok = torch.tensor([[-1.2, -1.0, 0.0], [1.6, 2.0, 2.0]])
    kw = dict(epsilon=0.2)
    loss, m = losses.grpo_loss(logp, old, adv, mask, loss_type="grpo", **kw)
    assert loss.item() == pytest.approx(((-2.2 / 2) + (5.6 / 3)) / 2, rel=1e-5)
    loss, _ = losses.grpo_loss(logp, old, adv, mask, loss_type="bnpo", **kw)
    assert loss.item() == pytest.approx((per_tok * mask).sum().item() / 5, rel=1e-5)
    loss, _ = losses.grpo_loss(logp, old, adv, mask, loss_type="dr_grpo", max_completion_length=4, **kw)
    assert loss.item() == pytest.approx(3.4 / (2 * 4), rel=1e-5)
    loss, _ = losses.grpo_loss(logp, old, adv, mask, loss_type="dapo", num_items_in_batch=10, **kw)
    assert loss.item() == pytest.approx(3.4 / 10, rel=1e-5)
    # clip fractions: token (0,0) clipped high (r=2>1.2, A>0), token (1,0) clipped low (0.6<0.8, A<0)
    assert m["clip_ratio/high"].item() == pytest.approx(1 / 5)
    assert m["clip_ratio/low"].item() == pytest.approx(1 / 5)
    assert m["clip_ratio/region"].item() == pytest.approx(2 / 5)


def test_grpo_loss_epsilon_high_widens_upper_clip():
    logp, old, mask, adv = _hand_case()
    loss, m = losses.grpo_loss(logp, old, adv, mask, epsilon=0.2, epsilon_high=1.5, loss_type="bnpo")
    # token (0,0) now unclipped: -min(2, 2) = -2 -> sum = -2 - 1 + 1.6 + 2 + 2 = 2.6
    assert loss.item() == pytest.approx(2.6 / 5, rel=1e-5)
    assert m["clip_ratio/high"].item() == 0


def test_grpo_loss_kl_penalty_and_gradient():
    logp, old, mask, adv = _hand_case()
    logp = logp.clone().requires_grad_(True)
    ref = old.clone()
    loss0, _ = losses.grpo_loss(logp, old, adv, mask, epsilon=0.2, loss_type="bnpo")
    loss1, m = losses.grpo_loss(logp, old, adv, mask, ref_logp=ref, beta=0.5, epsilon=0.2, loss_type="bnpo")
    kl = losses.k3_kl(logp, ref)
    assert m["kl"].item() == pytest.approx(((kl * mask).sum() / 5).item(), rel=1e-5)
    assert (loss1 - loss0).item() == pytest.approx(0.5 * m["kl"].item(), rel=1e-5)
    loss1.backward()
    assert logp.grad[0, 2] == 0  # masked token gets no gradient


def test_grpo_on_policy_gradient_is_policy_gradient():
    # with old == logp (detached), ratio = 1 and d loss / d logp = -A / n_tokens (bnpo)
    logp = torch.zeros(2, 2, requires_grad=True)
    adv = torch.tensor([1.0, -1.0])
    loss, _ = losses.grpo_loss(logp, logp.detach(), adv, torch.ones(2, 2), epsilon=0.2, loss_type="bnpo")
    loss.backward()
    assert logp.grad.tolist() == [[-0.25, -0.25], [0.25, 0.25]]


def test_truncated_is_weights_by_hand():
    trainer = torch.log(torch.tensor([[0.5, 0.9, 0.2]]))
    sampler = torch.log(torch.tensor([[0.25, 0.9, 0.8]]))
    # exp(trainer - sampler) = [2.0, 1.0, 0.25]; the cap truncates from above only
    w = losses.truncated_is_weights(trainer, sampler, cap=1.5)
    assert torch.allclose(w, torch.tensor([[1.5, 1.0, 0.25]]))
    assert torch.allclose(losses.truncated_is_weights(trainer, sampler, cap=3.0), torch.tensor([[2.0, 1.0, 0.25]]))
    t = trainer.clone().requires_grad_(True)
    assert not losses.truncated_is_weights(t, sampler).requires_grad


def test_grpo_loss_is_weights_scale_the_policy_term_only():
    """TRL's order: per_token = -min(r A, clip(r) A) * is_ratio + beta * kl (the KL is not weighted)."""
    logp, old, mask, adv = _hand_case()
    ref = old - 0.3  # a KL that is not 0, so weighting it would show
    w = torch.tensor([[0.5, 2.0, 7.0], [1.0, 0.0, 1.5]])
    loss, _ = losses.grpo_loss(logp, old, adv, mask, ref_logp=ref, beta=0.1, epsilon=0.2, loss_type="bnpo",
                               is_weights=w)
    per_tok = torch.tensor([[-1.2, -1.0, 0.0], [1.6, 2.0, 2.0]]) * w + 0.1 * losses.k3_kl(logp, ref)
    assert loss.item() == pytest.approx(((per_tok * mask).sum() / 5).item(), rel=1e-5)
    ones, _ = losses.grpo_loss(logp, old, adv, mask, ref_logp=ref, beta=0.1, epsilon=0.2, loss_type="bnpo",
                               is_weights=torch.ones_like(w))
    plain, _ = losses.grpo_loss(logp, old, adv, mask, ref_logp=ref, beta=0.1, epsilon=0.2, loss_type="bnpo")
    assert ones.item() == pytest.approx(plain.item(), rel=1e-6)  # switched off == all-ones weights


def test_aggregate_rejects_unknown_and_missing_length():
    x, m = torch.ones(1, 2), torch.ones(1, 2)
    with pytest.raises(ValueError, match="loss_type"):
        losses.aggregate(x, m, "ppo")
    with pytest.raises(ValueError, match="max_completion_length"):
        losses.aggregate(x, m, "dr_grpo")


def test_rwr_loss_by_hand():
    logp = torch.log(torch.tensor([[0.5, 0.25], [0.1, 1.0]]))
    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0]])
    w = torch.tensor([1.5, 0.5])
    loss, m = losses.rwr_loss(logp, mask, w)
    nll0 = -(math.log(0.5) + math.log(0.25)) / 2
    nll1 = -math.log(0.1)
    assert loss.item() == pytest.approx((1.5 * nll0 + 0.5 * nll1) / 2, rel=1e-6)
    init = logp.clone()
    loss_kl, m = losses.rwr_loss(logp, mask, w, init_logp=init, kl_coef=3.0)
    assert m["kl"].item() == pytest.approx(0.0, abs=1e-7)
    assert loss_kl.item() == pytest.approx(loss.item(), rel=1e-6)
    init2 = torch.log(torch.tensor([[0.25, 0.25], [0.1, 0.5]]))
    _, m2 = losses.rwr_loss(logp, mask, w, init_logp=init2, kl_coef=1.0)
    k = 0.5 - math.log(0.5) - 1  # token (0,0); others equal or masked
    assert m2["kl"].item() == pytest.approx((k / 2 + 0.0) / 2, rel=1e-5)


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(cfg).eval()


def _batch():
    from lightning_genenv.epoch_values import pad_batch

    # group 0: prompt [5, 6, 7] with completions [8, 9] and [10]; group 1: prompt [3, 4] (left-padded)
    return pad_batch([[5, 6, 7], [3, 4]], [[8, 9], [10], [11, 12], [13, 14]], pad_id=0)


def test_sequence_logprobs_matches_unpadded_full_forward():
    model = _tiny_llama()
    batch = _batch()
    for share in (True, False):
        lp = losses.sequence_logprobs(model, batch, share_prefix=share)
        with torch.no_grad():
            full = torch.log_softmax(model(torch.tensor([[5, 6, 7, 8, 9]])).logits, -1)
            full1 = torch.log_softmax(model(torch.tensor([[3, 4, 13, 14]])).logits, -1)
        assert lp[0].tolist() == pytest.approx([full[0, 2, 8].item(), full[0, 3, 9].item()], abs=1e-5)
        assert lp[3].tolist() == pytest.approx([full1[0, 1, 13].item(), full1[0, 2, 14].item()], abs=1e-5)


def test_shared_prefix_gives_the_same_values_and_gradients():
    model = _tiny_llama().train()
    batch = _batch()
    grads = []
    for share in (True, False):
        model.zero_grad()
        lp = losses.sequence_logprobs(model, batch, temperature=0.8, share_prefix=share)
        (lp * batch["completion_mask"]).sum().backward()
        grads.append((lp.detach(), [p.grad.clone() for p in model.parameters()]))
    assert torch.allclose(grads[0][0] * batch["completion_mask"], grads[1][0] * batch["completion_mask"], atol=1e-5)
    for a, b in zip(grads[0][1], grads[1][1]):
        assert torch.allclose(a, b, atol=1e-5)
