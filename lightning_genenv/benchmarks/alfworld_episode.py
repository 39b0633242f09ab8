"""ALFWorld, full episodes: success rate in the real TextWorld environment.

    python evaluate.py benchmark=alfworld mode=episode model=<...> limit=N [max_steps=50]

Needs ``alfworld==0.3.5`` and TextWorld (see :mod:`lightning_genenv.benchmarks.alfworld_build`),
and the games themselves (``<data_root>/alfworld``, ``MANIFEST.jsonl``), not the step cache. Each of
the ``limit`` games (spread evenly over valid_seen) is played from reset with ALFWorld's own
wrappers. At every step the model gets the same prompt as a single-step item (the task, the last
:data:`~lightning_genenv.benchmarks.alfworld.HISTORY` steps, the admissible actions; greedy), its
reply is parsed by :func:`~lightning_genenv.benchmarks.alfworld.parse_action`, and the action is
sent to the environment as written (TextWorld answers "Nothing happens." to one it does not know).
A reply with no action sends ``look``, which changes nothing. An episode ends when the game is won
or after ``max_steps`` actions (50, ReAct's budget); one whose prompt outgrows the model's context
is lost (``prompt_too_long``).

Metrics: ``success_rate`` (won / games, the official episodic metric, here on valid_seen), per task
type, the mean steps of won games, and the share of replies whose action was admissible (a reply
with no action counts as not admissible).

Deliberately left out: ReAct thoughts and few-shot trajectories in the prompt, valid_unseen (not in
the shared data), batching steps across games (one game and one generate call at a time), and use
in the training validation hook (an episode takes minutes on a CPU).
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path
from typing import Callable

from lightning_genenv.benchmarks.alfworld import SYSTEM_PROMPT, normalize_action, parse_action, render
from lightning_genenv.benchmarks.alfworld_build import import_alfworld, strip_welcome
from lightning_genenv.benchmarks.common import BenchItem, BenchmarkDataError, ItemResult, grouped_mean, mean
from lightning_genenv.benchmarks.runner import select
from lightning_genenv.jsonl import iter_jsonl
from lightning_genenv.rollout import SamplingParams, encode_chat

MAX_STEPS = 50
Act = Callable[[list[dict]], "str | None"]  # chat messages -> reply (None: prompt too long)


def games(data_root: Path, limit: int | None) -> list[dict]:
    """The valid_seen games of the manifest, ``limit`` of them spread evenly. Checks first that
    TextWorld and alfworld are installed (one-line error otherwise)."""
    if importlib.util.find_spec("textworld") is None or importlib.util.find_spec("alfworld") is None:
        raise BenchmarkDataError("alfworld episodes need TextWorld and alfworld 0.3.5: pip install "
                                 "\"textworld[pddl]==1.7.0\" && pip install --no-deps alfworld==0.3.5")
    manifest = data_root / "alfworld" / "MANIFEST.jsonl"
    if not manifest.is_file():
        raise BenchmarkDataError(f"alfworld episodes: manifest not found: {manifest}")
    rows = [row for row in iter_jsonl(manifest)  # a bad line is skipped
            if row.get("split") == "valid_seen" and isinstance(row.get("game_file"), str)]
    if not rows:
        raise BenchmarkDataError(f"alfworld episodes: no valid_seen games in {manifest}")
    return select(rows, limit)


def model_actor(engine, tokenizer, max_new_tokens: int, max_context: int) -> Act:
    """Greedy replies from a rollout engine."""
    params = SamplingParams(n=1, greedy=True, max_new_tokens=max_new_tokens)

    def act(messages: list[dict]) -> str | None:
        ids = encode_chat(tokenizer, messages)
        if len(ids) + max_new_tokens > max_context:
            return None
        return engine.generate([ids], params)[0][0].text

    return act


def play(game_file: Path, act: Act, max_steps: int = MAX_STEPS) -> dict:
    """One episode; returns ``{won, steps: [{action, reply, admissible}], reason}``."""
    import textworld
    import textworld.gym

    tw_env = import_alfworld()
    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile"])
    wrappers = [tw_env.AlfredDemangler(shuffle=False), tw_env.AlfredInfos]
    env_id = textworld.gym.register_games([str(game_file)], infos, batch_size=1, asynchronous=False,
                                          max_episode_steps=max_steps, wrappers=wrappers)
    env = textworld.gym.make(env_id)
    history, won, reason = [], False, "max_steps"
    try:
        obs, info = env.reset()
        initial = strip_welcome(obs[0])
        for _ in range(max_steps):
            admissible = [a for a in info["admissible_commands"][0] if a != "help"]
            prompt = render(initial, history + [{"admissible": admissible}], len(history))
            reply = act([{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}])
            if reply is None:
                reason = "prompt_too_long"
                break
            action, _ = parse_action(reply)
            sent = action or "look"
            obs, _, dones, info = env.step([sent])
            history.append({"admissible": admissible, "action": sent, "observation": obs[0].strip(),
                            "reply": reply[:500], "parsed": action,  # None: no action, look was sent
                            "is_admissible": action in {normalize_action(a) for a in admissible}})
            if info["won"][0]:
                won, reason = True, None
                break
            if dones[0]:
                break
    finally:
        env.close()
    return {"won": won, "reason": reason, "steps": history}


def evaluate(data_root: Path, act: Act, limit: int | None, max_steps: int = MAX_STEPS,
             progress: Callable[[str], None] = print) -> tuple[list[dict], dict]:
    """Play ``limit`` games; returns (one record per game, summary)."""
    records = []
    for n, game in enumerate(games(data_root, limit), 1):
        try:
            result = play(data_root / "alfworld" / game["game_file"], act, max_steps)
        except (OSError, ValueError, RuntimeError) as e:  # a game the environment cannot load
            result = {"won": False, "reason": f"env_error: {type(e).__name__}", "steps": []}
        records.append({"game": game["game_file"], "task_type": game.get("task_type"), **result})
        progress(f"[{n}] {game['game_file']}: won={result['won']} steps={len(result['steps'])}")
    return records, summarize(records, max_steps)


def summarize(records: list[dict], max_steps: int) -> dict:
    items = [BenchItem(r["game"], [], None, {"task_type": r["task_type"]}) for r in records]
    results = [ItemResult(r["game"], float(r["won"])) for r in records]
    actions = [s["is_admissible"] for r in records for s in r["steps"]]
    return {
        "metric": "success_rate",
        "mode": "episode",
        "success_rate": mean([float(r["won"]) for r in records]),
        "success_by_task_type": grouped_mean(items, results, "task_type"),
        "games": len(records),
        "max_steps": max_steps,
        "mean_steps_won": mean([len(r["steps"]) for r in records if r["won"]]) if any(r["won"] for r in records) else None,
        "admissible_action_rate": mean([float(a) for a in actions]),
        "reasons": dict(Counter(r["reason"] for r in records if r["reason"])),
        "comparable_to_paper": False,
        "paper_protocol_gap": "valid_seen, zero-shot prompt without ReAct thoughts; the paper reports "
                              "single-step accuracy, and ReAct's episodic figures are on valid_unseen",
    }
