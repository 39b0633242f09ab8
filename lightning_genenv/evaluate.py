"""Benchmark evaluation: ``genenv-eval benchmark=<name> model=<path|embedded|tiny|hf id> [key=value ...]``
(or ``python evaluate.py``).

Every key with its type, default and meaning: ``--help`` (the schema is
:class:`lightning_genenv.benchmarks.eval_config.EvalConfig`); ``--cfg`` prints the composed config.
``split=heldout`` keeps only the part of a derived split that ``data=<benchmark>`` never trains on
(the default for a train run that trained on this benchmark); ``mode=episode`` plays whole ALFWorld
games in TextWorld (:mod:`lightning_genenv.benchmarks.alfworld_episode`).

``model=`` may be a training run directory (``python train.py``'s ``run_dir``): its
``final/agent`` is evaluated, results go to ``<run>/eval/<benchmark>/`` and the summary's numbers
are logged to TensorBoard under ``<run>/tb/eval``.

Decoding is greedy. Writes ``items.jsonl`` (per item: prompt, raw output, parsed action, score,
error reason) and ``summary.json`` (the benchmark's metrics; see each module's docstring for what
is and is not comparable to the paper).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

from lightning_genenv.benchmarks import BENCHMARKS, BenchmarkDataError
from lightning_genenv.benchmarks.eval_config import EvalConfig, compose_eval
from lightning_genenv.benchmarks.runner import context_length, numeric, run_items, select, summary
from lightning_genenv.benchmarks.train_seeds import heldout_items
from lightning_genenv.config import ConfigError, compose, parse_cli, save_config
from lightning_genenv.models import MODEL_HINT, ModelUnavailable, load_causal_lm
from lightning_genenv.rollout import build_engine
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


def _trained_on(run_dir: Path) -> str | None:
    """The ``data.benchmark`` a training run drew its seeds from, if any."""
    import yaml

    try:
        saved = yaml.safe_load((run_dir / "config.yaml").read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    data = saved.get("data") if isinstance(saved, dict) else None
    return data.get("benchmark") if isinstance(data, dict) else None


def _load_model(cfg, model_path: str):
    try:
        return load_causal_lm(model_path, cfg.dtype, None, False, cfg.cache_dir)
    except FileNotFoundError as e:  # its hint names train.py's keys; give ours
        raise FileNotFoundError(str(e).removesuffix(MODEL_HINT) + "or set model= to 'embedded', 'tiny', a "
                                "local model directory or a train run directory") from None


def _engine(cfg, model, tokenizer, progress: bool):
    """``rollout=hf|vllm``, with ``conf/rollout/<rollout>.yaml``'s settings as training has them."""
    rollout_cfg = compose([f"rollout={cfg.rollout}", f"rollout.batch_size={cfg.batch_size}"]).rollout
    return build_engine(cfg.rollout, model, tokenizer, cfg.batch_size, progress, rollout_cfg)


def _write(out: Path, cfg, records: list[dict], result: dict, tb_dir, name: str, metrics: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(out / "items.jsonl", (json.loads(json.dumps(r, default=str)) for r in records))
    (out / "summary.json").write_text(json.dumps(result, indent=2, default=str))
    save_config(cfg, out / "config.yaml")
    if tb_dir:
        _log_tensorboard(Path(tb_dir), name, metrics)


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
    if cfg.rollout == "vllm":  # fail in one line, before any model loads
        from lightning_genenv.rollout.vllm import require_vllm

        require_vllm()
    bench = BENCHMARKS[cfg.benchmark]
    run_dir = _run_dir(cfg.model)
    model_path = str(run_dir / "final" / "agent") if run_dir else cfg.model
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    name = bench.name + ("_episode" if cfg.mode == "episode" else "")
    out = Path(cfg.out or (run_dir / "eval" / name if run_dir else Path("runs") / "eval" / f"{name}-{stamp}"))
    tb_dir = cfg.tb_dir or (run_dir / "tb" / "eval" if run_dir else None)

    if cfg.mode == "episode":
        return run_episodes(cfg, model_path, out, tb_dir, start)
    skipped: Counter = Counter()
    all_items = bench.load(Path(cfg.data_root) / bench.subdir, skipped)
    split = cfg.split or ("heldout" if run_dir and _trained_on(run_dir) == bench.name else "all")
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
              **metrics, "notes": bench.notes, "wall_time_s": round(time.perf_counter() - start, 1)}
    _write(out, cfg, [r.to_json() for r in records], result, tb_dir, bench.name, metrics)
    headline = metrics.get("metric")
    print(f"{bench.name}: {headline} = {metrics.get(headline, 0.0):.4f} over {len(records)} items "
          f"({result['wall_time_s']} s) -> {out}")
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
