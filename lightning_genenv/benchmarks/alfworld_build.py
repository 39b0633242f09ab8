"""Build the ALFWorld single-step cache: run the handcoded expert through each valid_seen game.

    python -m lightning_genenv.benchmarks.alfworld_build [data_root=<benchmarks>] [out=<file>] [limit=N]

Needs ``alfworld==0.3.5`` (0.4.x emits ``move X to Y``, which these json_2.1.1 games reject) and
TextWorld with its PDDL backend. Install without alfworld's own pins (they pull torch, ai2thor and
opencv, none of which the text environment uses)::

    pip install "textworld[pddl]==1.7.0" && pip install --no-deps alfworld==0.3.5

Each game is played with ALFWorld's own wrappers (demangled names, the handcoded expert as in its
training mode) for at most :data:`MAX_STEPS` steps; the line written per game is described in
:mod:`lightning_genenv.benchmarks.alfworld`. Games are appended as they finish, so an interrupted
build resumes where it stopped (games already in the file are skipped). The 140 games took about
35 minutes on a busy 2-core CPU, and the expert won 132 of them within 50 steps; ``limit=`` builds
the first N games of the manifest.

Deliberately left out: the ``planner`` expert (fast-downward plans) and valid_unseen.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

from lightning_genenv.benchmarks.alfworld import CACHE_NAME, MANIFEST
from lightning_genenv.benchmarks.eval_config import default_data_root
from lightning_genenv.config import parse_overrides
from lightning_genenv.jsonl import read_jsonl_strict
from lightning_genenv.models import default_cache_dir

MAX_STEPS = 50


def import_alfworld():
    """ALFWorld's text-environment wrappers, without its package ``__init__`` (which imports the
    THOR simulator and torch)."""
    spec = importlib.util.find_spec("alfworld")
    if spec is None:
        raise SystemExit("error: alfworld is not installed; pip install \"textworld[pddl]==1.7.0\" && "
                         "pip install --no-deps alfworld==0.3.5")
    from importlib.metadata import version

    if version("alfworld") != "0.3.5":
        raise SystemExit(f"error: alfworld {version('alfworld')} is installed; these games need 0.3.5")
    env_dir = Path(spec.submodule_search_locations[0]) / "agents" / "environment"
    package = types.ModuleType("alfworld.agents.environment")
    package.__path__ = [str(env_dir)]
    sys.modules.setdefault("alfworld.agents.environment", package)
    from alfworld.agents.environment import alfred_tw_env

    return alfred_tw_env


def strip_welcome(obs: str) -> str:
    """A game's first observation without TextWorld's welcome banner."""
    parts = obs.split("\n\n")
    return "\n\n".join(parts[1:]).strip() if parts[0].lstrip().startswith("-=") else obs.strip()


def play(game_file: Path, tw_env) -> dict:
    """One expert episode as the cache's per-game record."""
    import textworld
    import textworld.gym

    infos = textworld.EnvInfos(won=True, admissible_commands=True, extras=["gamefile", "expert_plan"])
    wrappers = [tw_env.AlfredDemangler(shuffle=False), tw_env.AlfredInfos,
                tw_env.AlfredExpert(expert_type=tw_env.AlfredExpertType.HANDCODED)]
    env_id = textworld.gym.register_games([str(game_file)], infos, batch_size=1, asynchronous=False,
                                          max_episode_steps=MAX_STEPS, wrappers=wrappers)
    env = textworld.gym.make(env_id)
    try:
        obs, info = env.reset()
        initial, steps, won = strip_welcome(obs[0]), [], False
        for _ in range(MAX_STEPS):
            admissible = [a for a in info["admissible_commands"][0] if a != "help"]
            action = info["extra.expert_plan"][0][0]
            obs, _, dones, info = env.step([action])
            steps.append({"admissible": admissible, "action": action, "observation": obs[0].strip()})
            won = bool(info["won"][0])
            if dones[0]:
                break
    finally:
        env.close()
    return {"initial": initial, "steps": steps, "won": won}


def main(argv: list[str] | None = None) -> Path:
    args = dict(parse_overrides(sys.argv[1:] if argv is None else argv))
    unknown = set(args) - {"data_root", "out", "limit"}
    if unknown:
        raise SystemExit(f"error: unknown argument(s) {sorted(unknown)}; use data_root=, out=, limit=")
    data_root = Path(str(args.get("data_root") or default_data_root() or "")) / "alfworld"
    manifest = data_root / MANIFEST
    if not manifest.is_file():
        raise SystemExit(f"error: ALFWorld manifest not found: {manifest}")
    out = Path(str(args.get("out") or default_cache_dir() / "alfworld" / CACHE_NAME))
    games = read_jsonl_strict(manifest)
    games = [g for g in games if g.get("split") == "valid_seen"][: args.get("limit") or None]
    tw_env = import_alfworld()

    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.is_file():
        done = {record.get("game") for record in read_jsonl_strict(out)}
    for n, game in enumerate(games, 1):
        if game["game_file"] in done:
            continue
        record = {"game": game["game_file"], "task_type": game.get("task_type")}
        try:
            record.update(play(data_root / game["game_file"], tw_env))
        except Exception as e:  # a game that crashes the environment is recorded as lost
            record.update(initial="", steps=[], won=False, error=f"{type(e).__name__}: {e}"[:200])
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        print(f"[{n}/{len(games)}] {game['game_file']}: won={record['won']} steps={len(record['steps'])}", flush=True)
    return out


if __name__ == "__main__":
    print(main())
