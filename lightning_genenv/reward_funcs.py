"""The agent's reward plug-ins: ``agent.reward_funcs`` (TRL's ``reward_funcs``) and ``agent.reward_weights``.

A reward function is the user's own trusted code, named in the config as ``package.module:function``
(importable from the working directory or the environment) or ``path/to/file.py:function``, and imported
once; nothing a model writes is ever executed. Its signature (:class:`RewardFunc`)::

    def my_reward(task: lightning_genenv.tasks.Task, completion: str) -> float: ...

``task`` is the task attempted (its ``question``, ``family``, ``tools`` and ``answer``: for
``check: custom`` tasks the opaque payload only this function reads); ``completion`` is the agent's
text, unparsed (:func:`lightning_genenv.parsing.parse_answer` and ``parse_tool_call`` read the
formats the prompt asks for). The agent's reward ``R_agent`` is ``sum_i w_i f_i(task, completion)``
(weights default to 1, as in TRL). ``lightning_genenv.rewards:task_check`` is the task's built-in
check as a plug-in (``agent.subset_match`` applies to it), so a user's function can be added to it.

Bad inputs: a name that does not import, or is not a callable, is refused at config time in one line
that names it (:func:`check_reward_funcs`). A call that raises or returns anything but a finite
number scores 0 for that sample and is counted (``rewards/<name>/failures``); the run goes on.

Logged, by the co-evolution callback, per epoch of the agent's attempts: ``rewards/<name>/mean`` and
``rewards/<name>/std`` (TRL's names: ``<name>`` is the function's ``__name__``; failures excluded) and
``rewards/<name>/failures``, from the per-function values each group keeps (:func:`reward_metrics`).

Deliberately left out: TRL's batched signature (``prompts, completions, **kwargs`` -> a list: one
call per sample here, so that one bad sample fails alone), async and model-based reward functions
(a reward model is a callable the user writes), and per-function metrics of validation (it logs the
weighted sum, ``val/reward_mean``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import sys
import warnings
from dataclasses import dataclass
from numbers import Real
from pathlib import Path
from typing import Callable, Protocol, Sequence

from lightning_genenv.rewards import agent_reward
from lightning_genenv.tasks import Task


class RewardFunc(Protocol):
    def __call__(self, task: Task, completion: str) -> float: ...


class RewardFuncError(ValueError):
    """A reward function that cannot be used; one line that names it."""


BUILTIN = "lightning_genenv.rewards:task_check"  # the task's own check, as a plug-in


def load_reward_func(spec: str, key: str = "agent.reward_funcs") -> Callable:
    """The callable that ``package.module:function`` names; :class:`RewardFuncError` in one line, naming the config
    ``key`` it came from, otherwise."""
    module_name, sep, attr = str(spec).rpartition(":")
    if not sep or not module_name or not attr:
        raise RewardFuncError(f"{key}: '{spec}' must be package.module:function or path/file.py:function")
    try:
        module = _import(module_name)
    except Exception as e:  # the user's module: any import error, in one line
        raise RewardFuncError(f"{key}: cannot import '{spec}' ({type(e).__name__}: {e})") from None
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise RewardFuncError(f"{key}: '{spec}': {module_name} has no callable '{attr}'")
    return fn


def _import(name: str):
    """A module by dotted name, or a ``.py`` file by path (verl's ``custom_reward_function.path``)."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = Path(name).expanduser().resolve()
    if not path.is_file():
        raise FileNotFoundError(f"no file {name}")
    module_name = f"_genenv_reward_{path.stem}_{abs(hash(str(path)))}"
    if module_name not in sys.modules:
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        sys.modules[module_name] = module
    return sys.modules[module_name]


def func_name(spec: str) -> str:
    """The name a function's metrics go under: its ``__name__`` (TRL's), else the spec's last part."""
    return str(spec).rpartition(":")[2].rpartition(".")[2]


def check_reward_funcs(specs: Sequence[str], weights: Sequence[float] | None) -> None:
    """Config-time checks of ``agent.reward_funcs`` / ``agent.reward_weights``: every function imports,
    names are distinct, one finite weight per function."""
    names = [func_name(s) for s in specs]
    for spec in specs:
        load_reward_func(spec)
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise RewardFuncError(f"agent.reward_funcs: two functions named '{dup[0]}' (their metrics would collide)")
    if weights is not None:
        if len(weights) != len(specs):
            raise RewardFuncError(f"agent.reward_weights has {len(weights)} weights for {len(specs)} "
                                  f"agent.reward_funcs; give one per function")
        bad = [w for w in weights if not math.isfinite(float(w))]
        if bad:
            raise RewardFuncError(f"agent.reward_weights: {bad[0]} is not a finite number")


@dataclass(frozen=True)
class Scored:
    reward: float  # R_agent: the weighted sum (failed calls count 0)
    parts: dict[str, float | None]  # each function's value; None where the call failed ({}: the built-in check)
    reason: str | None = None  # why it scored 0 (a parse reason, a failed function), None when positive


@dataclass(frozen=True)
class RewardFuncs:
    names: tuple[str, ...]
    funcs: tuple[Callable, ...]
    weights: tuple[float, ...]

    def score(self, task: Task, completion: str) -> Scored:
        parts = {}
        for name, fn in zip(self.names, self.funcs):
            parts[name], error = call_reward(fn, task, completion)
            if error is not None and name not in _warned:  # once per function and process: the count goes on
                _warned.add(name)
                warnings.warn(f"reward function '{name}' failed on task {task.id!r} ({error}); such samples score "
                              f"0 from it and are counted in rewards/{name}/failures", RuntimeWarning, stacklevel=2)
        reward = float(sum(w * v for w, v in zip(self.weights, parts.values()) if v is not None))
        failed = next((f"reward_func_failed:{n}" for n, v in parts.items() if v is None), None)
        return Scored(reward, parts, None if reward > 0 else failed or "reward_funcs_zero")


_warned: set[str] = set()  # functions whose first failure was reported


def call_reward(fn: Callable, task: Task, completion: str) -> tuple[float | None, str | None]:
    """``fn(task, completion)`` as a float and None; or None and why, when it raises or returns anything but a
    finite number."""
    try:
        value = fn(task, completion)
    except Exception as e:  # the user's code: a failure scores this sample 0 and is counted, never fatal
        return None, f"{type(e).__name__}: {e}"
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        return None, f"returned {value!r:.80}, not a finite number"
    return float(value), None


@functools.lru_cache(maxsize=8)
def _build(specs: tuple[str, ...], weights: tuple[float, ...] | None, subset_match: bool) -> RewardFuncs:
    funcs = []
    for spec in specs:
        fn = load_reward_func(spec)
        if spec == BUILTIN:
            fn = functools.partial(fn, subset_match=subset_match)
        funcs.append(fn)
    return RewardFuncs(tuple(func_name(s) for s in specs), tuple(funcs),
                       tuple(float(w) for w in weights) if weights is not None else (1.0,) * len(specs))


def reward_funcs_for(agent_cfg) -> RewardFuncs | None:
    """The configured plug-ins (loaded once per config), or None: the task's built-in check is the reward."""
    specs = tuple(agent_cfg.reward_funcs or ())
    if not specs:
        return None
    weights = agent_cfg.reward_weights
    return _build(specs, tuple(weights) if weights is not None else None, bool(agent_cfg.subset_match))


def score_attempt(task: Task, completion: str, agent_cfg) -> Scored:
    """``R_agent`` of one attempt: the plug-ins' weighted sum when ``agent.reward_funcs`` is set, else the
    task's built-in check (:func:`lightning_genenv.rewards.agent_reward`)."""
    funcs = reward_funcs_for(agent_cfg)
    if funcs is not None:
        return funcs.score(task, completion)
    reward, reason = agent_reward(task, completion, agent_cfg.subset_match)
    return Scored(reward, {}, reason)


def reward_metrics(parts: Sequence[dict[str, Sequence[float | None]]]) -> dict[str, float]:
    """``rewards/<name>/{mean,std,failures}`` over groups' per-function values (None: a failed call).
    ``std`` is the sample std of the values that did not fail (TRL's ``nanstd``)."""
    values: dict[str, list[float | None]] = {}
    for group in parts:
        for name, vs in group.items():
            values.setdefault(name, []).extend(vs)
    out = {}
    for name, vs in values.items():
        ok = [v for v in vs if v is not None]
        if ok:
            mean = sum(ok) / len(ok)
            out[f"rewards/{name}/mean"] = mean
            out[f"rewards/{name}/std"] = math.sqrt(sum((v - mean) ** 2 for v in ok) / max(len(ok) - 1, 1))
        out[f"rewards/{name}/failures"] = float(len(vs) - len(ok))
    return out
