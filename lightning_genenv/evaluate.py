"""Benchmark evaluation: ``genenv-eval benchmark=<name> model=<path|embedded|tiny|hf id> [key=value ...]``
(or ``python evaluate.py``).

Every key with its type, default and meaning: ``--help`` (the schema is
:class:`lightning_genenv.benchmarks.eval_config.EvalConfig`); ``--cfg`` prints the composed config.
``split=heldout`` keeps only the part of a derived split that ``data=<benchmark>`` never trains on
(the default for a train run that trained on this benchmark); ``mode=episode`` plays whole ALFWorld
games in TextWorld (:mod:`lightning_genenv.benchmarks.alfworld_episode`). ``interface=agent`` scores the
held-out part in the agent's own training format instead of the benchmark's prompt and checker
(:mod:`lightning_genenv.benchmarks.agent_format`); ``rollout=auto`` (the default, as in training) generates
with vLLM when it can run the model.

``model=`` may be a training run directory (``python train.py``'s ``run_dir``): its
``final/agent`` is evaluated, results go to ``<run>/eval/<benchmark>/`` and the summary's numbers
are logged to TensorBoard under ``<run>/tb/eval``.

Decoding is greedy. Writes ``items.jsonl`` (per item: prompt, raw output, parsed action, score,
error reason) and ``summary.json`` (the benchmark's metrics; see each module's docstring for what
is and is not comparable to the paper). The headline metric carries ``ci95``, its 95% Wilson interval,
when it is a share of items (``ci95_note`` says why not otherwise: TravelPlanner's macro average).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

from lightning_genenv.benchmarks import BENCHMARKS, BenchmarkDataError
from lightning_genenv.benchmarks.agent_format import AgentFormat
from lightning_genenv.benchmarks.eval_config import EvalConfig, compose_eval
from lightning_genenv.benchmarks.runner import context_length, numeric, run_items, select, summary
from lightning_genenv.benchmarks.train_seeds import heldout_items
from lightning_genenv.config import PAPER_MIX, ConfigError, compose, parse_cli, save_config
from lightning_genenv.models import MODEL_HINT, ModelUnavailable, load_causal_lm
from lightning_genenv.rollout import build_engine, choose_backend, describe
from lightning_genenv.rollout_engines import require as require_engine
from lightning_genenv.tasks import write_jsonl_atomic


def _run_dir(model: str) -> Path | None:
    """The training run directory that ``model`` names, if it is one."""
    path = Path(model).expanduser()
    return path if (path / "final" / "agent").is_dir() else None


def _log_tensorboard(tb_dir: Path, benchmark: str, metrics: dict) -> None:
    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(tb_dir))
    for key, value in numeric(metrics).items():
        writer.add_scalar(f"eval/{benchmark}/{key}", value, 0)
    writer.close()


def _saved_section(run_dir: Path | None, section: str) -> dict:
    """One section of a training run's ``config.yaml`` ({} when there is none or it cannot be read)."""
    import yaml

    if run_dir is None:
        return {}
    try:
        saved = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return {}
    value = saved.get(section) if isinstance(saved, dict) else None
    return value if isinstance(value, dict) else {}


def _trained_on(run_dir: Path) -> tuple[str, ...]:
    """The benchmarks a training run drew its seeds from (``data=paper``: every one of ``PAPER_MIX``)."""
    name = _saved_section(run_dir, "data").get("benchmark")
    return PAPER_MIX if name == "paper" else (name,) if name else ()


def _agent_format(run_dir: Path | None, max_new_tokens: int | None, benchmark: str) -> AgentFormat:
    """The prompt and score settings of the run that trained the model (``data=<benchmark>``'s otherwise). The
    token budget is at least ``data=<benchmark>``'s (a model trained with a shorter one would otherwise be
    scored on items whose gold answer cannot fit), unless ``max_new_tokens`` is given."""
    trained_here = compose([f"data={benchmark}"]).agent
    agent = {**trained_here, **_saved_section(run_dir, "agent")}
    budget = max(int(agent["max_completion_length"]), int(trained_here.max_completion_length))
    return AgentFormat(num_shots=int(agent["num_shots"]), max_new_tokens=max_new_tokens or budget,
                       success_threshold=float(agent["success_threshold"]), subset_match=bool(agent["subset_match"]))


def _load_model(cfg, model_path: str):
    try:
        return load_causal_lm(model_path, cfg.dtype, None, False, cfg.cache_dir)
    except FileNotFoundError as e:  # its hint names train.py's keys; give ours
        raise FileNotFoundError(str(e).removesuffix(MODEL_HINT) + "or set model= to 'embedded', 'tiny', a "
                                "local model directory or a train run directory") from None


def _engine(cfg, model, tokenizer, progress: bool):
    """``rollout=hf|vllm``, with ``conf/rollout/<rollout>.yaml``'s settings as training has them."""
    backend, why = choose_backend(cfg.rollout, [describe(model)])
    print(f"rollout: {backend} ({why})")
    rollout_cfg = compose([f"rollout={backend}", f"rollout.batch_size={cfg.batch_size}"]).rollout
    return build_engine(backend, model, tokenizer, cfg.batch_size, progress, rollout_cfg)


def _write(out: Path, cfg, records: list[dict], result: dict, tb_dir, name: str, metrics: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(out / "items.jsonl", (json.loads(json.dumps(r, default=str)) for r in records))
    (out / "summary.json").write_text(json.dumps(result, indent=2, default=str))
    save_config(cfg, out / "config.yaml")
    if tb_dir:
        _log_tensorboard(Path(tb_dir), name, metrics)


def run_agent_format(cfg, bench, model_path: str, run_dir: Path | None, out: Path, tb_dir, start: float) -> Path:
    """``interface=agent``: the held-out part as converted tasks in the agent's prompt, scored by its reward."""
    from lightning_genenv.benchmarks.agent_format import score_tasks
    from lightning_genenv.benchmarks.train_seeds import benchmark_seeds

    skipped: Counter = Counter()
    shot_pool, heldout = benchmark_seeds(bench.name, cfg.data_root, skipped)
    tasks = select(heldout + (shot_pool if cfg.split == "all" else []), cfg.limit)
    fmt = _agent_format(run_dir, cfg.max_new_tokens, bench.name)
    print(f"{bench.name} (agent interface): {len(tasks)} converted tasks ({cfg.split or 'heldout'}); "
          f"skipped records: {dict(skipped) or 0}")
    model, tokenizer = _load_model(cfg, model_path)
    engine = _engine(cfg, model, tokenizer, cfg.progress)
    records, metrics = score_tasks(tasks, shot_pool, engine, tokenizer, fmt, context_length(model, tokenizer),
                                   desc=f"{bench.name} agent ({len(tasks)} tasks)")
    result = {"benchmark": bench.name, "interface": "agent", "model": cfg.model, "model_path": model_path,
              "data_root": cfg.data_root, "split": cfg.split or "heldout", "limit": cfg.limit,
              "skipped_records": dict(skipped), "max_new_tokens": fmt.max_new_tokens, "num_shots": fmt.num_shots,
              "success_threshold": fmt.success_threshold, "decoding": "greedy", "rollout": cfg.rollout, **metrics,
              "wall_time_s": round(time.perf_counter() - start, 1)}
    _write(out, cfg, records, result, tb_dir, f"{bench.name}_agent", metrics)
    _print_headline(f"{bench.name} (agent interface)", metrics, result, out)
    return out


def _print_headline(name: str, metrics: dict, result: dict, out: Path) -> None:
    headline = metrics.get("metric")
    ci = metrics.get("ci95")
    interval = f" [95% CI {ci[0]:.3f}-{ci[1]:.3f}]" if ci else ""
    print(f"{name}: {headline} = {metrics.get(headline, 0.0):.4f}{interval} over {metrics.get('n_items')} items "
          f"({result['wall_time_s']} s) -> {out}")


def run_episodes(cfg, model_path: str, out: Path, tb_dir, start: float) -> Path:
    """``mode=episode``: ALFWorld games played in TextWorld (:mod:`...benchmarks.alfworld_episode`)."""
    from lightning_genenv.benchmarks import alfworld_episode

    episodes = alfworld_episode.games(Path(cfg.data_root), cfg.limit)  # fails early, before the model loads
    model, tokenizer = _load_model(cfg, model_path)
    engine = _engine(cfg, model, tokenizer, False)
    max_new = cfg.max_new_tokens or BENCHMARKS["alfworld"].max_new_tokens
    act = alfworld_episode.model_actor(engine, tokenizer, max_new, context_length(model, tokenizer))
    print(f"alfworld episodes: {len(episodes)} games, at most {cfg.max_steps} steps each")
    records, metrics = alfworld_episode.evaluate(Path(cfg.data_root), act, cfg.limit, cfg.max_steps,
                                                 (lambda m: print(m, flush=True)) if cfg.progress else (lambda _: None))
    result = {"benchmark": "alfworld", "model": cfg.model, "model_path": model_path, "data_root": cfg.data_root,
              "limit": cfg.limit, "max_new_tokens": max_new, "decoding": "greedy", **metrics,
              "wall_time_s": round(time.perf_counter() - start, 1)}
    _write(out, cfg, records, result, tb_dir, "alfworld_episode", metrics)
    print(f"alfworld episodes: success_rate = {metrics['success_rate']:.4f} over {len(records)} games "
          f"({result['wall_time_s']} s) -> {out}")
    return out


def run(cfg) -> Path:
    start = time.perf_counter()
    if cfg.rollout != "auto":  # an engine that cannot run here fails in one line, before any model loads
        require_engine(cfg.rollout)
    bench = BENCHMARKS[cfg.benchmark]
    run_dir = _run_dir(cfg.model)
    model_path = str(run_dir / "final" / "agent") if run_dir else cfg.model
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = bench.name + {"episode": "_episode"}.get(cfg.mode, "") + {"agent": "_agent"}.get(cfg.interface, "")
    out = Path(cfg.out or (run_dir / "eval" / name if run_dir else Path("runs") / "eval" / f"{name}-{stamp}"))
    tb_dir = cfg.tb_dir or (run_dir / "tb" / "eval" if run_dir else None)

    if cfg.mode == "episode":
        return run_episodes(cfg, model_path, out, tb_dir, start)
    if cfg.interface == "agent":
        return run_agent_format(cfg, bench, model_path, run_dir, out, tb_dir, start)
    skipped: Counter = Counter()
    all_items = bench.load(Path(cfg.data_root) / bench.subdir, skipped)
    split = cfg.split or ("heldout" if run_dir and bench.name in _trained_on(run_dir) else "all")
    if split == "heldout":
        all_items = heldout_items(bench.name, all_items)
    items = select(all_items, cfg.limit)
    if not items:
        raise BenchmarkDataError(f"{bench.name}: no usable items under {cfg.data_root} (skipped: {dict(skipped)})")
    print(f"{bench.name}: {len(items)} of {len(all_items)} items ({split}); skipped records: {dict(skipped) or 0}")

    model, tokenizer = _load_model(cfg, model_path)
    engine = _engine(cfg, model, tokenizer, cfg.progress)
    max_new = cfg.max_new_tokens or bench.max_new_tokens
    records = run_items(bench, items, engine, tokenizer, max_new, context_length(model, tokenizer),
                        desc=f"{bench.name} ({len(items)} items)")

    if cfg.judge_url and bench.apply_judge:
        from lightning_genenv.benchmarks.bamboogle import openai_judge

        bench.apply_judge([r.item for r in records], [r.result for r in records],
                          openai_judge(cfg.judge_url, cfg.judge_model, cfg.judge_api_key_env))

    metrics = summary(bench, records)
    result = {"benchmark": bench.name, "model": cfg.model, "model_path": model_path,
              "data_root": cfg.data_root, "split": split, "limit": cfg.limit, "items_available": len(all_items),
              "skipped_records": dict(skipped), "max_new_tokens": max_new, "decoding": "greedy",
              "interface": "benchmark", "rollout": cfg.rollout,
              **metrics, "notes": bench.notes, "wall_time_s": round(time.perf_counter() - start, 1)}
    _write(out, cfg, [r.to_json() for r in records], result, tb_dir, bench.name, metrics)
    _print_headline(bench.name, metrics, result, out)
    return out


def main(argv: list[str] | None = None) -> Path | None:
    argv = sys.argv[1:] if argv is None else argv
    try:
        cfg = parse_cli(argv, __doc__, EvalConfig, conf_dir=None, composer=compose_eval)
        return None if cfg is None else run(cfg)
    except (ConfigError, FileNotFoundError, ModelUnavailable) as e:
        sys.exit(f"error: {e}")


def cli() -> None:
    """The ``genenv-eval`` console script (``main`` returns a path, which ``sys.exit`` would print as an error)."""
    main()


if __name__ == "__main__":
    main()
