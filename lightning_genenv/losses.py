"""Loss math as pure tensor functions: GRPO for the agent, KL-regularized RWR for the simulator.

Names follow TRL's GRPOConfig (``beta``, ``epsilon``, ``epsilon_high``, ``loss_type``,
``scale_rewards``) and the normalizations follow TRL's definitions:

* ``grpo``    mean over tokens of each sequence, then mean over sequences;
* ``bnpo``    sum over all tokens of the micro-batch / number of tokens in the micro-batch;
* ``dr_grpo`` sum over all tokens / (number of sequences x ``max_completion_length``);
* ``dapo``    sum over all tokens / number of tokens in the whole optimizer-step batch
  (``num_items_in_batch``, summed over gradient-accumulation micro-batches).

The KL penalty uses the k3 estimator ``exp(ref - logp) - (ref - logp) - 1`` (Schulman), which is
unbiased and non-negative when tokens are sampled from the current policy. With
``use_bias_correction_kl`` (TRL's name, on by default in TRL 1.16 and in our agent config) the
per-token KL is multiplied by the importance ratio ``exp(logp - old_logp)``, gradient included, as
in DeepSeek-V3.2: the KL gradient is then the unbiased reverse-KL gradient even off-policy, and it
differs from plain k3's even on-policy (where the ratio is 1 but its gradient is not 0).

Deliberately left out: sequence-level importance sampling (GSPO), CISPO/SAPO losses, and entropy
bonuses. None is in the GenEnv paper; each would be a new ``loss_type`` here.
"""

from __future__ import annotations

import inspect

import torch

LOSS_TYPES = ("grpo", "bnpo", "dr_grpo", "dapo")
SCALE_REWARDS = ("group", "batch", "none")


def group_advantages(rewards: torch.Tensor, num_generations: int, scale_rewards: str = "group",
                     eps: float = 1e-4) -> torch.Tensor:
    """Group-relative advantages ``(r - mean_group) / (std + eps)``.

    ``rewards`` is flat, ordered group by group (``num_generations`` consecutive entries share a
    prompt). ``scale_rewards``: ``group`` divides by each group's std, ``batch`` by the std of all
    rewards, ``none`` does not divide (Dr. GRPO). Std is the unbiased one, as in TRL.
    """
    if scale_rewards not in SCALE_REWARDS:
        raise ValueError(f"scale_rewards must be one of {SCALE_REWARDS}, got {scale_rewards!r}")
    if rewards.numel() % num_generations:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {num_generations}")
    grouped = rewards.view(-1, num_generations)
    mean = grouped.mean(dim=1, keepdim=True)
    adv = grouped - mean
    if scale_rewards == "group":
        adv = adv / (grouped.std(dim=1, keepdim=True) + eps)
    elif scale_rewards == "batch":
        adv = adv / (rewards.std() + eps) if rewards.numel() > 1 else adv / (1 + eps)
    return adv.reshape(-1)


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor, temperature: float = 1.0,
                   chunk_size: int = 1024) -> torch.Tensor:
    """Log-probabilities of ``tokens`` under ``logits`` (shapes ``[B, T, V]`` and ``[B, T]``).

    Computed row-chunk by row-chunk as ``logit[token] - logsumexp(logits)`` so that no full
    float32 log-softmax over the vocabulary is materialized for the whole batch.
    """
    flat_logits = logits.reshape(-1, logits.size(-1))
    flat_tokens = tokens.reshape(-1)
    out = []
    for start in range(0, flat_logits.size(0), chunk_size):
        chunk = flat_logits[start:start + chunk_size].float()
        if temperature != 1.0:
            chunk = chunk / temperature
        picked = chunk.gather(-1, flat_tokens[start:start + chunk_size, None]).squeeze(-1)
        out.append(picked - torch.logsumexp(chunk, dim=-1))
    return torch.cat(out).view_as(tokens) if out else flat_logits.new_zeros(tokens.shape)


def k3_kl(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token k3 KL estimate of KL(pi || ref) for tokens sampled from pi."""
    delta = ref_logp - logp
    return torch.exp(delta) - delta - 1


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``x`` over positions where ``mask`` is 1 (0 if the mask is empty)."""
    return (x * mask).sum() / mask.sum().clamp(min=1)


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, loss_type: str,
              max_completion_length: int | None = None,
              num_items_in_batch: float | None = None) -> torch.Tensor:
    """Reduce a ``[B, T]`` per-token loss to a scalar the way TRL's ``loss_type`` does."""
    if loss_type == "grpo":
        return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()
    if loss_type == "bnpo":
        return masked_mean(per_token, mask)
    if loss_type == "dr_grpo":
        if not max_completion_length:
            raise ValueError("loss_type='dr_grpo' needs max_completion_length")
        return (per_token * mask).sum() / (per_token.size(0) * max_completion_length)
    if loss_type == "dapo":
        normalizer = mask.sum() if num_items_in_batch is None else num_items_in_batch
        return (per_token * mask).sum() / max(float(normalizer), 1.0)
    raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")


def truncated_is_weights(trainer_logp: torch.Tensor, sampler_logp: torch.Tensor,
                         cap: float = 2.0) -> torch.Tensor:
    """Per-token truncated importance-sampling weights ``min(exp(trainer - sampler), cap)``.

    Corrects for the rollout engine (vLLM) sampling from a slightly different distribution than
    the trainer computes (kernels, precision, a stale sync): TRL's
    ``vllm_importance_sampling_correction`` in its per-token truncate form (TIS), where
    ``trainer_logp`` are the old policy's log-probs as the trainer computes them and
    ``sampler_logp`` those the engine reported. Detached: the weights carry no gradient.
    """
    return torch.exp(trainer_logp.detach() - sampler_logp.detach()).clamp(max=cap)


def grpo_loss(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
              mask: torch.Tensor, *, epsilon: float, loss_type: str, ref_logp: torch.Tensor | None = None,
              beta: float = 0.0, epsilon_high: float | None = None,
              max_completion_length: int | None = None,
              num_items_in_batch: float | None = None,
              is_weights: torch.Tensor | None = None,
              use_bias_correction_kl: bool = False) -> tuple[torch.Tensor, dict]:
    """Clipped-ratio GRPO loss with an optional k3 KL penalty.

    ``logp``, ``old_logp``, ``ref_logp`` and ``mask`` are ``[B, T]`` over completion tokens;
    ``advantages`` is ``[B]``. ``is_weights`` (``[B, T]``, optional) multiplies the per-token policy
    term (not the KL term, which is added after, as in TRL), for importance-sampling correction of an
    external sampler (:func:`truncated_is_weights`). ``use_bias_correction_kl`` multiplies the k3 KL by the ratio
    (TRL's option of the same name). Returns the loss and detached metrics (KL as it enters the
    loss, clip fractions), each a masked token mean, as TRL logs them.
    """
    eps_high = epsilon if epsilon_high is None else epsilon_high
    mask = mask.to(logp.dtype)
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - epsilon, 1 + eps_high)
    adv = advantages.unsqueeze(1)
    per_token = -torch.min(ratio * adv, clipped * adv)
    if is_weights is not None:  # the policy term only: TRL adds the KL after the correction
        per_token = per_token * is_weights
    metrics = {}
    if ref_logp is not None:
        kl = k3_kl(logp, ref_logp)
        if use_bias_correction_kl:
            kl = kl * ratio
        if beta:
            per_token = per_token + beta * kl
        metrics["kl"] = masked_mean(kl.detach(), mask)
    loss = aggregate(per_token, mask, loss_type, max_completion_length, num_items_in_batch)
    with torch.no_grad():
        low = ((ratio < 1 - epsilon) & (adv < 0)).to(mask.dtype)
        high = ((ratio > 1 + eps_high) & (adv > 0)).to(mask.dtype)
        metrics["clip_ratio/low"] = masked_mean(low, mask)
        metrics["clip_ratio/high"] = masked_mean(high, mask)
        metrics["clip_ratio/region"] = masked_mean(low + high, mask)
    return loss, metrics


def rwr_loss(logp: torch.Tensor, mask: torch.Tensor, weights: torch.Tensor, *,
             init_logp: torch.Tensor | None = None, kl_coef: float = 0.0) -> tuple[torch.Tensor, dict]:
    """KL-regularized reward-weighted regression on generation tokens.

    ``loss = mean_i(w_i * NLL_i) + kl_coef * mean_i(KL_i)`` where ``NLL_i`` is the mean token NLL of
    generation ``i``, ``w_i`` its (self-normalized, mean 1) RWR weight, and ``KL_i`` the mean k3 KL
    of the current simulator to the frozen initial one on the same tokens.
    """
    mask = mask.to(logp.dtype)
    seq_nll = -(logp * mask).sum(-1) / mask.sum(-1).clamp(min=1)
    nll = (weights.to(logp.dtype) * seq_nll).mean()
    metrics = {"nll": seq_nll.detach().mean()}
    loss = nll
    if init_logp is not None:
        kl = sequence_kl(logp, init_logp, mask)
        metrics["kl"] = kl.detach()
        if kl_coef:
            loss = loss + kl_coef * kl
    return loss, metrics


def sequence_kl(logp: torch.Tensor, ref_logp: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean over sequences of each sequence's mean k3 KL of ``logp``'s policy to ``ref_logp``'s on its tokens:
    what the simulator's KL caps measure."""
    mask = mask.to(logp.dtype)
    return ((k3_kl(logp, ref_logp) * mask).sum(-1) / mask.sum(-1).clamp(min=1)).mean()


def cache_kwarg(model) -> str:
    """The name under which this transformers version passes a KV cache (``cache`` from 5.2x on)."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "cache" if "cache" in inspect.signature(base.forward).parameters else "past_key_values"


def output_cache(out):
    """The KV cache of a forward's output, under either name."""
    return out.cache if hasattr(out, "cache") else out.past_key_values


def sequence_logprobs(model, batch: dict, temperature: float = 1.0,
                      share_prefix: bool = True) -> torch.Tensor:
    """Per-token log-probs ``[R, C]`` of a batch's completion tokens under ``model``.

    ``batch`` holds ``G`` left-padded prompts (``prompt_ids``, ``prompt_mask``: ``[G, P]``) and
    ``R = G x n`` right-padded completions (``completion_ids``, ``completion_mask``: ``[R, C]``),
    group by group. With ``share_prefix`` each prompt is run once and its KV cache is shared by
    the group's ``n`` completions (gradients flow through the shared prefix), which divides the
    prompt cost by ``n``; without it every row is run as prompt + completion. Both give the same
    values and gradients. Only the logits that predict completion tokens are computed.
    """
    prompt_ids, prompt_mask = batch["prompt_ids"], batch["prompt_mask"]
    comp_ids, comp_mask = batch["completion_ids"], batch["completion_mask"].long()
    n = comp_ids.size(0) // prompt_ids.size(0)
    if not share_prefix or getattr(model, "is_gradient_checkpointing", False):
        ids = torch.cat([prompt_ids.repeat_interleave(n, 0), comp_ids], dim=1)
        att = torch.cat([prompt_mask.repeat_interleave(n, 0), comp_mask], dim=1)
        positions = (att.cumsum(-1) - 1).clamp(min=0)
        logits = model(input_ids=ids, attention_mask=att, position_ids=positions,
                       logits_to_keep=comp_ids.size(1) + 1, use_cache=False).logits[:, :-1]
        return token_logprobs(logits, comp_ids, temperature)
    positions = (prompt_mask.cumsum(-1) - 1).clamp(min=0)
    out = model(input_ids=prompt_ids, attention_mask=prompt_mask, position_ids=positions,
                use_cache=True, logits_to_keep=1)
    cache = output_cache(out)
    if n > 1:
        cache.batch_repeat_interleave(n)
    first = out.logits[:, -1:].repeat_interleave(n, 0)  # predicts each completion's first token
    if comp_ids.size(1) == 1:
        return token_logprobs(first, comp_ids, temperature)
    att = torch.cat([prompt_mask.repeat_interleave(n, 0), comp_mask], dim=1)[:, :-1]
    start = prompt_mask.sum(-1).repeat_interleave(n, 0)[:, None]
    comp_positions = start + torch.arange(comp_ids.size(1) - 1, device=comp_ids.device)
    rest = model(input_ids=comp_ids[:, :-1], attention_mask=att, position_ids=comp_positions,
                 use_cache=True, **{cache_kwarg(model): cache}).logits
    return token_logprobs(torch.cat([first, rest], dim=1), comp_ids, temperature)
