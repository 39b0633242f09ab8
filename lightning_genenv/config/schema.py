"""The typed config schema: one dataclass per group, and :class:`Config` that holds them.

The dataclasses are the single source of truth for every key, its type, its default and its
description (the comment on its line, or the comment block just above it: ``describe.py`` reads them
from this file's source, and ``--help`` prints them). Each group's checks sit next to its fields, in
``__post_init__``, and choices are ``Literal`` types that OmegaConf validates. ``conf/<group>/<option>.yaml``
holds only what an option changes from the schema (``tests/test_config.py`` composes every file and
checks that none restates a default).

Every numeric key has its interval (:func:`within`), which also refuses NaN and inf; a value at an
interval's edge that means "off" or "all" says so in the key's comment.

Deliberately left out: reading files and the command line (``composer.py``), describing the keys
(``describe.py``) and the check functions (``checks.py``: :func:`within`, :func:`check`); this module imports
neither of the first two, so a checker that needs only a dataclass stays light.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Optional

from lightning_genenv.batch_layout import SEED_STRIDE, BatchLayout
from lightning_genenv.config.checks import (  # noqa: F401  (re-exported: the schema's names)
    MAX_COUNT,
    SEED_MAX,
    ConfigError,
    check,
    check_file,
    within,
)
from lightning_genenv.objectives import GROUP_OBJECTIVES, OBJECTIVES
from lightning_genenv.rollout_engines import BACKEND_CHOICES  # the engines' names, without torch or vLLM

# lightning_genenv.benchmarks.BENCHMARKS, by name (not imported here: it loads torch); a test keeps them equal.
BENCHMARK_NAMES = ("api_bank", "bfcl", "alfworld", "bamboogle", "travelplanner")
# data=paper: the train parts of every benchmark with a derived split, as one base set (the paper's shape)
PAPER_MIX = ("api_bank", "bfcl", "bamboogle")
LOGGER_NAMES = ("tensorboard", "csv", "mlflow", "wandb")  # lightning_genenv/loggers.py
DTYPES = ("float32", "bfloat16", "float16")

# Benchmarks that ship no train split here: data=<name> refuses them with this reason
# (lightning_genenv/benchmarks/train_seeds.py; EVALUATION.md "Training on a benchmark").
NO_TRAIN_SPLIT = {
    "alfworld": "alfworld has no train split here: the shared copy holds only the valid_seen "
                "evaluation games (the train games are not shipped)",
    "travelplanner": "travelplanner has no usable train split here: train_ref_info.jsonl holds "
                     "reference information without queries or plans, and the validation queries "
                     "must not be trained on (the authors' warning)",
}

@dataclass
class LoraConfig:
    enabled: bool = True  # LoRA adapters; false: full fine-tuning, with a frozen copy as reference
    r: int = 16  # adapter rank
    alpha: int = 32  # adapter scale numerator (the update is scaled by alpha / r; 0 would freeze it: refused)
    dropout: float = 0.0  # dropout on the adapters' input
    # the layers that get adapters
    target_modules: list[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])

    def __post_init__(self):
        within("model.lora", self, r="[1, 65536]", alpha="[1, 65536]", dropout="[0, 1)")


@dataclass
class ModelConfig:
    agent: str = "embedded"  # "embedded", "tiny", a local directory or a Hugging Face id
    simulator: str = "embedded"  # the same choices as model.agent
    dtype: Literal[DTYPES] = "float32"  # the dtype the weights are loaded in
    lora: LoraConfig = field(default_factory=LoraConfig)
    gradient_checkpointing: bool = False  # recompute activations in backward: less memory, more time
    # where the embedded and tiny models are cached; None: $LIGHTNING_GENENV_CACHE or ~/.cache/lightning_genenv
    cache_dir: Optional[str] = None


@dataclass
class AgentConfig:
    """GRPO, with TRL's GRPOConfig names."""

    learning_rate: float = 1e-3  # LoRA; RESULTS.md "agent learning rate" sweep; in [0, 1], 0: the agent never moves
    # linear: TRL's default, decays to 0 over the run's optimizer steps
    lr_scheduler_type: Literal["linear", "constant"] = "linear"
    weight_decay: float = 0.0  # AdamW weight decay
    # KL coefficient to the reference policy (k3 estimator). 0 (TRL's default): no reference forward pass, about
    # 142 s of a default run (BENCHMARKS.md, prepare groups); the GenEnv reference run's 0.001 is paper_7b's
    beta: float = 0.0
    epsilon: float = 0.2  # lower clip of the importance ratio
    use_bias_correction_kl: bool = True  # TRL's default: the k3 KL times the importance ratio (DeepSeek-V3.2)
    epsilon_high: Optional[float] = None  # upper clip of the importance ratio; None: same as epsilon (DAPO uses 0.28)
    loss_type: Literal["grpo", "bnpo", "dr_grpo", "dapo"] = "dapo"  # how token losses are averaged (TRL's names)
    scale_rewards: Literal["group", "batch", "none"] = "group"  # advantages / the group's std, the batch's, or 1
    num_generations: int = 8  # the n attempts per task: GRPO group and p-hat sample
    num_iterations: int = 1  # optimization passes over each rollout batch
    mask_truncated_completions: bool = False  # drop completions cut at max_completion_length from the loss
    temperature: float = 0.7  # sampling; 1.0 leaves half the groups all-wrong on the 135M model (RESULTS.md)
    top_p: float = 1.0  # nucleus sampling
    max_completion_length: int = 64  # the longest embedded gold completion is 61 tokens (tests/test_seeds.py)
    groups_per_step: int = 2  # tasks (groups) per micro-batch
    num_shots: int = 2  # worked examples in the agent's prompt
    success_threshold: float = 1.0  # R_agent >= threshold counts as a success for p-hat (rewards are in [0, 1])
    # TRL's reward_funcs: package.module:function names, f(task, completion) -> float, summed into R_agent
    # (lightning_genenv/reward_funcs.py); [] (none): the task's built-in check is R_agent
    reward_funcs: list[str] = field(default_factory=list)
    reward_weights: Optional[list[float]] = None  # one weight per reward function; None: all 1 (TRL's default)
    subset_match: bool = False  # accept extra arguments beyond the gold call (public GenEnv rule)
    # sampled attempts per held-out task at the training temperature: val/reward_mean (0: greedy only); 8 x the
    # 128 held-out tasks (data.num_held_out) is what RESULTS.md's gains are measured on
    val_num_generations: int = 8

    def __post_init__(self):
        check(self.num_generations >= 2,
              f"agent.num_generations={self.num_generations} must be >= 2 (a group needs two attempts)")
        within("agent", self, learning_rate="[0, 1]", weight_decay="[0, 1]", beta="[0, 100]", epsilon="(0, 1]",
               epsilon_high="(0, 100]", num_generations="[2, 1024]", num_iterations="[1, 100]",
               temperature="(0, 10]", top_p="(0, 1]", max_completion_length=f"[1, {MAX_COUNT}]",
               groups_per_step=f"[1, {MAX_COUNT}]", num_shots="[0, 64]", success_threshold="(0, 1]",
               val_num_generations="[0, 1024]")
        check(self.reward_weights is None or bool(self.reward_funcs),
              "agent.reward_weights needs agent.reward_funcs (one weight per function)")
        if self.reward_funcs:  # imports the user's modules: a name that does not import is refused now, in one line
            from lightning_genenv.reward_funcs import RewardFuncError, check_reward_funcs

            try:
                check_reward_funcs(list(self.reward_funcs), self.reward_weights)
            except RewardFuncError as e:
                raise ConfigError(str(e)) from None


@dataclass
class SimulatorConfig:
    """The environment simulator's update: its objective (the paper's KL-regularized RWR by default), reward
    shaping, KL caps, and how it writes tasks."""

    learning_rate: float = 5e-4  # RESULTS.md: 2e-4 left the KL to the initial simulator under 1e-2; 0: frozen
    # constant, as the paper; linear: decays by update, the k-th (from 0) at learning_rate * (1 - k / max_epochs),
    # so that late epochs take smaller steps (the agent's schedule counts optimizer steps; the simulator updates once
    # an epoch); off_target: each update at learning_rate * min(1, |p-bar - alpha| / lr_off_target_scale), p-bar the
    # epoch's mean success, so that steps shrink once the tasks are on target, not with time
    lr_scheduler_type: Literal["linear", "constant", "off_target"] = "constant"
    # off_target: the |p-bar - alpha| from which an update takes the full rate; 0.3, as far as the calibrated
    # solver's never-trained simulator starts (0.1 took a full step at 0.107 and overshot α = 0.2; RESULTS.md)
    lr_off_target_scale: float = 0.3
    weight_decay: float = 0.0  # AdamW weight decay
    # RWR temperature: w ∝ exp(R_env / lam), self-normalized over the epoch's generations. The paper's 1.0; against
    # a frozen agent 0.3 and 0.1 concentrated the fit, gave no curriculum and more copying (RESULTS.md)
    lam: float = 1.0
    kl_coef: float = 0.1  # weight of the KL to the initial simulator
    # trust region on KL to the initial simulator: a crossing step is undone, the epoch ends (up to 1e9: off)
    kl_max: float = 0.5
    temperature: float = 0.7  # below 1: a small simulator writes far fewer malformed tasks
    top_p: float = 0.95  # nucleus sampling
    # the temperature RWR fits (and measures the KL) at; None: simulator.temperature, so that the fitted and the
    # logged policy is the sampling one (fitting T = 0.7 samples at T = 1 sharpens the simulator)
    fit_temperature: Optional[float] = None
    # a sampling temperature that moves over the run: epoch e of E samples (and fits) at temperature + (temperature_end
    # - temperature) * e / (E - 1), wide early and narrow late (sampling_temperature); None: temperature throughout
    temperature_end: Optional[float] = None
    # the prompt asks for a harder (easier) task when the family's success rate is more than
    # curriculum.in_band_width above (below) alpha;
    # false: the agent's history only, as in the paper, so that any curriculum comes from R_env. Kept on: against
    # a frozen agent neither setting moved p-hat toward alpha (RESULTS.md), and the default run's agent
    # gain is measured with it
    difficulty_hint: bool = True
    # the agent's recent results in the prompt show, beside the family's success rate, a task it solved and one it
    # failed (of the latest epoch, as result_tasks_pick picks); false: the rate alone
    result_tasks: bool = True
    # which solved and failed task: first, the family's first of the latest epoch, the same in every prompt of an
    # epoch; rotate, the prompts of an epoch cycle through all of them, each shown about equally often
    result_tasks_pick: Literal["first", "rotate"] = "first"
    # a generation whose answer equals a task its prompt showed (or an earlier one of the epoch) and whose
    # question rewords it is invalid (near_duplicate): never attempted, trained on or imitated (novelty.py)
    reject_near_duplicates: bool = True
    # a generation whose question determines its answer (the embedded QA families' forms: arithmetic, weekdays, words,
    # unit conversions, capitals) and whose answer is wrong, or whose tool call names a value its question does not,
    # is invalid (wrong_answer, ungrounded_call): lightning_genenv/answer_check.py. Off: the paper checks nothing
    check_answers: bool = False
    # what the rwr objective fits: "epoch", this epoch's own generations that passed the filter (the paper's "from
    # each environment-generated batch"); "pool", every one of D_env so far (the paper's SFT pool D_env), the weights
    # self-normalized over them all and R_env as measured when each was attempted. Against a frozen agent "epoch"
    # fitted 0-7 tasks an epoch and learned no curriculum; "pool" copied (near-duplicates 0.03 -> 0.53-0.63 of the
    # generations), with no curriculum either (RESULTS.md)
    rwr_set: Literal["epoch", "pool"] = "epoch"
    # rwr: the paper's fit set is p-hat >= curriculum.k_min; true: also p-hat <= 1 - k_min (the easiest dropped too)
    rwr_two_sided: bool = False
    # how an epoch's scored generations train the simulator (lightning_genenv/objectives/, one module each):
    # rwr, the paper's weights exp(R / lam) on the generations that passed the filter; group_rwr, weights
    # exp(A / tau) from each seed's candidates' group-relative advantages A; grpo, a policy gradient on those
    # advantages with the KL (R-Zero's challenger); reinforce, signed weights from advantages over the whole epoch
    objective: str = "rwr"
    tau: float = 0.5  # group_rwr's temperature on advantages: weights exp(A / tau)
    epsilon: float = 0.2  # grpo's ratio clip (inactive in its single pass over each epoch's generations)
    # grpo: added to the advantage of each generation solved about alpha of the time (curriculum.in_band_width), an
    # imitation term on the epoch's in-band tasks beside the policy gradient (lightning_genenv/objectives/grpo.py)
    imitate_in_band: float = 0.0
    # the simulator's reward (lightning_genenv/objectives/shaping.py): R_env(p-hat) of an attempted task, unless
    reward_unsolved: Optional[float] = None  # the reward of a task never solved (p-hat 0); None: R_env(0)
    reward_solved: Optional[float] = None  # of a task always solved (p-hat 1); None: R_env(1)
    reward_invalid: float = 0.0  # of a generation that is not a valid task (malformed, copied, a near-duplicate)
    near_duplicate_penalty: float = 0.0  # subtracted from a near-duplicate's reward
    # a cap on each step's own change: a step whose KL to the weights before it (on its batch) exceeds this is
    # undone and the epoch goes on (the paper's per-step cap); None: off. kl_max caps the change since the start
    kl_step_max: Optional[float] = None
    max_completion_length: int = 96  # tokens per written task
    batch_size: int = 4  # generations per RWR step
    # m: tasks written per seed. 1 of each of 32 seeds (data.seeds_per_epoch) rather than 4 of each of 8 (m = 4 is
    # the paper's): the same 32 generations cover 4x the seeds; every seed of the default run cleared the bar
    # (RESULTS.md, 3 seeds; the final reward's mean did not change)
    num_variations: int = 1
    num_examples: int = 1  # same-family examples shown next to the seed
    # the share of each epoch's seeds that are the simulator's own tasks of the last seed_replay_epochs epochs (in
    # band, or as seed_replay_pick picks) instead of base tasks (lightning_genenv/coevolution/seed_draw.py); 0: base
    # tasks only, as in the paper
    seed_replay: float = 0.0
    seed_replay_epochs: int = 2  # the epochs back whose tasks seed_replay draws from
    # which of those tasks: in_band, drawn alike from the in-band ones (fewer seeds replayed while few are in band);
    # nearest, the ones whose p-hat is nearest alpha, in band or not (p-hat 0 and 1 excluded)
    seed_replay_pick: Literal["in_band", "nearest"] = "in_band"
    # nearest: picked nearest alpha - gain * (p-bar - alpha), p-bar the last epoch's mean success, within
    # [0.05, 0.95] (lightning_genenv/rewards.py reward_target); 0: nearest alpha itself
    seed_replay_gain: float = 0.0

    def __post_init__(self):
        within("simulator", self, learning_rate="[0, 1]", weight_decay="[0, 1]", lam="(0, 100]", kl_coef="[0, 100]",
               kl_max="(0, 1e9]", temperature="(0, 10]", fit_temperature="(0, 10]",
               temperature_end="(0, 10]", top_p="(0, 1]",
               max_completion_length=f"[1, {MAX_COUNT}]", batch_size=f"[1, {MAX_COUNT}]", num_variations="[1, 1000]",
               num_examples="[0, 64]", tau="(0, 100]", epsilon="(0, 1]", reward_unsolved="[-10, 10]",
               reward_solved="[-10, 10]", reward_invalid="[-10, 10]", near_duplicate_penalty="[0, 10]",
               kl_step_max="(0, 1e9]", seed_replay="[0, 1]", seed_replay_epochs=f"[1, {MAX_COUNT}]",
               seed_replay_gain="[0, 100]", lr_off_target_scale="(0, 1]", imitate_in_band="[0, 10]")
        check(self.objective in OBJECTIVES,
              f"simulator.objective={self.objective}: one of {', '.join(OBJECTIVES)} (lightning_genenv/objectives/)")
        check(self.objective not in GROUP_OBJECTIVES or self.num_variations >= 2,
              f"simulator.objective={self.objective} compares each seed's candidates; it needs "
              f"simulator.num_variations >= 2 (got {self.num_variations}; e.g. experiment=genenv_group)")
        check(not self.imitate_in_band or self.objective == "grpo",
              f"simulator.imitate_in_band={self.imitate_in_band} adds to grpo's advantages; it needs "
              f"simulator.objective=grpo (got {self.objective})")
        check(self.seed_replay_pick == "in_band" or self.seed_replay > 0,
              f"simulator.seed_replay_pick={self.seed_replay_pick} picks the replayed seeds; it needs "
              f"simulator.seed_replay > 0")
        check(self.result_tasks_pick == "first" or self.result_tasks,
              f"simulator.result_tasks_pick={self.result_tasks_pick} picks the tasks the prompt shows; it needs "
              f"simulator.result_tasks=true")
        check(not self.seed_replay_gain or self.seed_replay_pick == "nearest",
              f"simulator.seed_replay_gain={self.seed_replay_gain} moves the point the replayed seeds are picked "
              f"nearest; it needs simulator.seed_replay_pick=nearest")
        check(self.temperature_end is None or self.fit_temperature is None,
              f"simulator.temperature_end={self.temperature_end} moves the temperature the simulator samples and fits "
              f"at; it cannot go with a fixed simulator.fit_temperature={self.fit_temperature}")
        check(self.objective == "rwr" or self.rwr_set == "epoch",
              f"simulator.objective={self.objective} weighs the epoch's own generations; it needs "
              f"simulator.rwr_set=epoch")


def sampling_temperature(sim, epoch: int, epochs: int) -> float:
    """The temperature the simulator samples at in ``epoch`` (from 0) of ``epochs``: ``temperature``, or with
    ``temperature_end`` the straight line from ``temperature`` at the first epoch to ``temperature_end`` at the last
    (held there after it)."""
    if sim.temperature_end is None:
        return sim.temperature
    share = min(epoch, epochs - 1) / (epochs - 1) if epochs > 1 else 1.0
    return sim.temperature + (sim.temperature_end - sim.temperature) * share


def fit_temperature(sim, epoch: int = 0, epochs: int = 1) -> float:
    """The temperature the simulator's objective fits (and measures its KL) at in ``epoch`` of ``epochs``:
    ``fit_temperature``, else the epoch's sampling temperature (:func:`sampling_temperature`)."""
    return sim.fit_temperature if sim.fit_temperature is not None else sampling_temperature(sim, epoch, epochs)


@dataclass
class CurriculumConfig:
    name: str = "genenv"  # a label for reports (lightning_genenv/report groups runs by it)
    # Where each epoch's new tasks come from: "simulator" (written every epoch), "static" (a fixed
    # set: GenEnv-Static or an offline teacher's tasks) or "none" (plain GRPO on the base data).
    task_source: Literal["simulator", "static", "none"] = "simulator"
    static_path: Optional[str] = None  # static: JSONL of tasks; None: written once at start (GenEnv-Static)
    static_variations: int = 5  # static with no path: variations per seed, generated before training
    train_simulator: bool = True  # False: GenEnv-Random (the simulator generates but never learns)
    # False: the agent never updates (rollouts still run): R_env then depends on the simulator alone, the
    # cleanest test of whether it learns a curriculum (experiment=frozen_agent)
    train_agent: bool = True
    env_reward: Literal["genenv", "rzero", "absolute_zero", "band"] = "genenv"  # genenv: exp(-beta (p - alpha)^2)
    alpha: float = 0.5  # the target success rate p-hat of generated tasks
    beta: float = 10.0  # sharpness of R_env = exp(-beta (p - alpha)^2)
    # R_env's alpha moved against the run's error: alpha - target_gain * s, kept in [0.05, 0.95], s the epoch's
    # p-bar - alpha (p-bar its mean p-hat) plus target_memory times the epoch before's s
    # (lightning_genenv/rewards.py:reward_target); 0: alpha itself, the paper's
    target_gain: float = 0.0
    # 0: the epoch's own error alone; 1: the error summed over the run; between: an error that fades by it an epoch
    target_memory: float = 0.0
    k_min: float = 0.1  # generated tasks with p-hat below it join neither pool's training set
    band: Optional[float] = None  # optional |p - alpha| <= band filter (0: p-hat exactly alpha)
    # half-width of the "near alpha" band that is measured and prompted, never filtered on: the logged
    # curriculum/in_band_fraction counts |p - alpha| <= it, rounded up to the values k/n can take (with n = 8, 0.1
    # around 0.5 counts 3/8 to 5/8; curriculum.band instead when that filter is set), and
    # the simulator's difficulty hint (simulator.difficulty_hint) asks for a harder (easier) task when the
    # family's success rate is more than it above (below) alpha
    in_band_width: float = 0.1
    # each epoch without a valid generated task is warned about with the simulator's rejection reasons; after
    # this many in a row the console says the run has become plain GRPO (coevolution/empty_epochs.py)
    max_empty_epochs_warning: int = 3

    def __post_init__(self):
        within("curriculum", self, alpha="[0, 1]", k_min="[0, 1]", beta="(0, 1000]", band="[0, 1]",
               in_band_width="(0, 1]", static_variations="[1, 1000]", max_empty_epochs_warning=f"[1, {MAX_COUNT}]",
               target_gain="[0, 10]", target_memory="[0, 1]")
        check(not self.target_gain or self.env_reward in ("genenv", "band"),
              f"curriculum.target_gain={self.target_gain} moves R_env's alpha; curriculum.env_reward="
              f"{self.env_reward} has none (use genenv or band)")
        check(not self.target_memory or self.target_gain,
              f"curriculum.target_memory={self.target_memory} carries earlier epochs' error into R_env's alpha, which "
              f"only curriculum.target_gain > 0 moves")
        check(not self.train_simulator or self.task_source == "simulator",
              f"curriculum.train_simulator=true needs curriculum.task_source=simulator "
              f"(got {self.task_source}); set curriculum.train_simulator=false")
        check(self.env_reward != "band" or self.band is not None,
              "curriculum.env_reward=band needs curriculum.band (e.g. 0.1)")
        check_file("curriculum.static_path", self.static_path)


@dataclass
class SolverConfig:
    """Who attempts the generated tasks: the agent, or a calibrated solver (lightning_genenv/solver.py) whose success
    rate is sigmoid(slope * (d0 - d(task))): a test of the simulator's objective where it must learn, no agent
    model loaded (experiment=calibrated)."""

    name: Literal["agent", "calibrated"] = "agent"  # who attempts the tasks; calibrated: no agent is loaded
    # d(task), a function named like a reward function: package.module:function or path/file.py:function; built in:
    # lightning_genenv.difficulty:digits (the digits of the question's numbers) and :operations
    difficulty: str = "lightning_genenv.difficulty:digits"
    d0: float = 2.0  # the difficulty solved half the time
    slope: float = 2.0  # s: how sharply success falls with difficulty
    d0_step: float = 0.0  # a moving target: d0 raised by this much every epoch
    # R > 0: before the first epoch and after the last, the simulator writes R epochs' worth of tasks that nothing
    # learns from, on the base seeds and (at the end) on the run's own seed draws, and the solver attempts them:
    # p-bar measured R times as closely as one epoch measures it (lightning_genenv/coevolution/calibrated_measure.py)
    measure_rounds: int = 0
    # S > 0: the run ends with whichever of the simulator's states after its last S updates writes nearest alpha,
    # each state measured on the same select_rounds draws of the run's seed rule, apart from the end measures'
    # (lightning_genenv/coevolution/calibrated_measure.py); 0: the state after the last update
    select_last: int = 0
    select_rounds: int = 2  # rounds of an epoch's tasks each candidate state writes for select_last

    def __post_init__(self):
        within("solver", self, d0="[-1e6, 1e6]", slope="(0, 1000]", d0_step="[-1e6, 1e6]",
               measure_rounds=f"[0, {MAX_COUNT}]", select_last=f"[0, {MAX_COUNT}]",
               select_rounds=f"[1, {MAX_COUNT}]")
        for key in ("measure_rounds", "select_last"):
            value = getattr(self, key)
            check(value == 0 or self.name == "calibrated",
                  f"solver.{key}={value} measures the simulator against the calibrated solver; "
                  f"set solver=calibrated (experiment=calibrated) or solver.{key}=0")
        if self.name == "calibrated":  # the difficulty function imports now, or the config is refused in one line
            from lightning_genenv.reward_funcs import RewardFuncError, load_reward_func

            try:
                load_reward_func(self.difficulty, key="solver.difficulty")
            except RewardFuncError as e:
                raise ConfigError(str(e)) from None


@dataclass
class DataConfig:
    name: str = "embedded"  # a label for the seed set
    # seeds from a benchmark's train split (lightning_genenv/benchmarks/train_seeds.py), read from
    # trainer.benchmarks_root; use data=<benchmark> (alfworld, travelplanner: refused, NO_TRAIN_SPLIT), or
    # paper: every benchmark of PAPER_MIX together, each one's held-out part in the validation set
    benchmark: Optional[Literal[BENCHMARK_NAMES + ("paper",)]] = None
    train_path: Optional[str] = None  # JSONL of seed tasks; None: the embedded seeds (or data.benchmark's)
    val_path: Optional[str] = None  # JSONL of validation tasks; None: val_fraction of train_path or the embedded seeds
    seed: int = 0  # seed of the embedded seed generator and split
    families: Optional[list[str]] = None  # keep only these task families, e.g. [weather, qa_arith] (None: all)
    val_fraction: float = 0.15  # held out for validation when val_path is None (stratified by family)
    # the embedded seeds' held-out set: the split's (val_fraction, 46 tasks) topped up with fresh tasks of the same
    # families, never a train question, in proportion to family size; the train split is unchanged (seeds/
    # top_up_held_out). 0: the split's alone. Ignored with train_path or benchmark
    num_held_out: int = 128
    num_val: int = 0  # a seeded sample of the held-out set is the whole validation set (0: all held-out tasks)
    # the validation after each epoch but the last: a fixed seeded subset of the validation set, every family present
    # (families in turn), logged as val/*; before training and after the last epoch the whole set is validated too
    # (val_full/*, with val/* on the subset). 0: the whole set every time (then val/* is the whole set's)
    num_val_subset: int = 42
    # base tasks trained on, every family present (0: all). The few-shot examples still come from every loaded
    # seed. data=scarce: a base set small enough that plain GRPO sees each task several times
    num_train: int = 0
    seeds_per_epoch: int = 32  # base seeds the simulator writes variations of, each epoch (see num_variations)
    tasks_per_epoch: int = 16  # agent groups per epoch: valid generated, then replay, then base
    replay_per_epoch: int = 4  # at most this many tasks replayed from D_train's generated tasks
    # share of the agent's epoch batch given to generated (then replayed) tasks; base tasks fill the rest.
    # Every valid generated task is attempted (its p-hat trains the simulator) whatever this share.
    generated_fraction: float = 0.5

    def __post_init__(self):
        within("data", self, seed=f"[0, {SEED_MAX}]", val_fraction="(0, 1)", num_val=f"[0, {MAX_COUNT}]",
               num_held_out=f"[0, {MAX_COUNT}]", num_val_subset=f"[0, {MAX_COUNT}]",
               seeds_per_epoch=f"[1, {MAX_COUNT}]", tasks_per_epoch=f"[1, {MAX_COUNT}]",
               replay_per_epoch=f"[0, {MAX_COUNT}]", generated_fraction="[0, 1]", num_train=f"[0, {MAX_COUNT}]")
        check(self.benchmark not in NO_TRAIN_SPLIT,
              f"data={self.benchmark}: {NO_TRAIN_SPLIT.get(self.benchmark)}; "
              f"train on another benchmark or the embedded seeds")
        check_file("data.train_path", self.train_path)
        check_file("data.val_path", self.val_path)


@dataclass
class RolloutConfig:
    # auto: vLLM when it imports and supports the models (single process on CPU), else hf; the choice and
    # its reason are printed at start and written to the run's run_choices.json (config.yaml keeps "auto").
    backend: Literal[BACKEND_CHOICES] = "auto"
    batch_size: int = 16  # hf: prompts per generate call (vllm batches continuously)
    # vllm on GPU: fraction of device memory for weights + KV cache (0.05 of an H200 is 7 GB)
    gpu_memory_utilization: float = 0.05
    # vllm on CPU: the KV cache in GiB (vLLM's kv_cache_memory_bytes; null: sized for the machine, 15% of RAM
    # capped at 4 GiB, ~75k tokens of the 135M model in fp32 on a 24 GiB machine: a whole validation's prompts
    # stay cached between its passes; at 5% a whole validation took ~12% longer, BENCHMARKS.md)
    cpu_kv_cache_gib: Optional[float] = None
    tensor_parallel_size: int = 1  # vllm: GPUs per engine
    enforce_eager: bool = True  # no CUDA graphs / torch.compile: engine start ~40 s instead of ~220 s on CPU
    # the vllm engine's weights: auto (the policy's, model.dtype) | bfloat16 | float16 | float32
    dtype: Literal[("auto", *DTYPES)] = "auto"
    # TRL 1.16's names (ALIASES: the old ones): importance sampling exp(trainer_logp - vllm_logp), per
    # token, truncated at clip_max
    vllm_importance_sampling_correction: bool = True
    # token_truncate is the one mode here (TRL's default is sequence_mask)
    vllm_importance_sampling_mode: Literal["token_truncate"] = "token_truncate"
    vllm_importance_sampling_clip_max: float = 2.0  # the cap of the per-token importance weight

    def __post_init__(self):
        within("rollout", self, batch_size=f"[1, {MAX_COUNT}]", gpu_memory_utilization="(0, 1]",
               cpu_kv_cache_gib="(0, 65536]", tensor_parallel_size="[1, 1024]",
               vllm_importance_sampling_clip_max="[1, 1e6]")


@dataclass
class StrategyConfig:
    name: Literal["single", "ddp", "fsdp"] = "single"  # fsdp: FSDP2 through Lightning's ModelParallelStrategy
    accelerator: str = "auto"  # Lightning's accelerator: auto | cpu | gpu
    devices: Any = 1  # Lightning's devices: a count, a list of indices or auto
    num_nodes: int = 1  # machines
    cpu_offload: bool = False  # fsdp only: keep parameters, gradients and optimizer state on the CPU

    def __post_init__(self):
        check(not self.cpu_offload or self.name == "fsdp", "strategy.cpu_offload=true needs strategy=fsdp")
        within("strategy", self, num_nodes="[1, 100000]")


@dataclass
class TrainerConfig:
    max_epochs: int = 6  # co-evolution epochs; RESULTS.md: 3 learn too little, 6 take 27 min on 2 CPU cores
    precision: Literal["32-true", "32", "bf16-mixed", "bf16-true", "16-mixed"] = "32-true"  # Lightning's precision
    accumulate_grad_batches: int = 1  # micro-batches per agent optimizer step
    gradient_clip_val: Optional[float] = 1.0  # gradient norm clip (None or 0: off, as in Lightning)
    log_every_n_steps: int = 1  # Lightning's logging interval
    # validate every n epochs (the last epoch always, on the whole held-out set; step 0 too, val_before_training):
    # 6, the default's length, so the default validates at step 0 and the end only (BENCHMARKS.md: a
    # subset pass costs ~5% of the run). Validation is seeded and leaves the rollouts' random stream alone, so
    # this changes what is measured, not what is trained: 1 draws the subset's per-epoch curve
    val_every_n_epochs: int = 6
    num_sanity_val_steps: int = 0  # Lightning's sanity validation batches before training (-1: all)
    val_before_training: bool = True  # validate once before the first update, logged at step 0
    enable_progress_bar: bool = True  # tqdm bars with the latest metrics
    save_hf: bool = True  # write final agent and simulator in Hugging Face format
    # the agent in Hugging Face format every n epochs, checkpoints/hf/epoch-K, and the best by val/reward_mean in
    # checkpoints/hf/best (callbacks/hf_checkpoints.py); None or 0: off
    save_hf_every_n_epochs: Optional[int] = None
    save_hf_total_limit: Optional[int] = None  # epoch-K directories kept, oldest removed first (not best); None: all
    max_nonfinite_steps: int = 3  # consecutive NaN/inf steps (each skipped and counted) before the run stops
    # benchmark metrics at each validation, e.g. [api_bank, bfcl] (callbacks/benchmarks.py)
    val_benchmarks: list[Literal[BENCHMARK_NAMES]] = field(default_factory=list)
    val_benchmark_limit: Optional[int] = 32  # items per benchmark and validation (None: all)
    benchmarks_root: Optional[str] = None  # None: ../shared/benchmarks next to the repository

    def __post_init__(self):
        within("trainer", self, max_epochs=f"[1, {MAX_COUNT}]", accumulate_grad_batches=f"[1, {MAX_COUNT}]",
               gradient_clip_val="[0, 1e6]", log_every_n_steps=f"[1, {MAX_COUNT}]",
               val_every_n_epochs=f"[1, {MAX_COUNT}]", num_sanity_val_steps=f"[-1, {MAX_COUNT}]",
               max_nonfinite_steps=f"[1, {MAX_COUNT}]", val_benchmark_limit=f"[1, {MAX_COUNT}]",
               save_hf_every_n_epochs=f"[0, {MAX_COUNT}]", save_hf_total_limit=f"[1, {MAX_COUNT}]")


@dataclass
class LoggerConfig:
    name: Literal[LOGGER_NAMES] = "tensorboard"  # mlflow and wandb: pip extras, run offline (loggers.py)
    num_text_samples: int = 4  # tasks and completions logged as text each epoch
    offline: bool = True  # wandb: offline mode (wandb sync uploads later); false: online, needs wandb login

    def __post_init__(self):
        within("logger", self, num_text_samples="[0, 1000]")


@dataclass
class Config:
    seed: int = 0  # the global seed (Lightning's seed_everything)
    run_dir: Optional[str] = None  # None: runs/<timestamp>
    sweep_dir: Optional[str] = None  # train.py -m: the directory of the sweep's runs; None: multirun/<timestamp>
    # a run directory to continue from its checkpoints/last.ckpt; auto (with run_dir): resume run_dir when it
    # holds one, else start there. A resume may change only the keys lightning_genenv/config/resume.py names
    resume: Optional[str] = None
    model: ModelConfig = field(default_factory=ModelConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    simulator: SimulatorConfig = field(default_factory=SimulatorConfig)
    curriculum: CurriculumConfig = field(default_factory=CurriculumConfig)
    solver: SolverConfig = field(default_factory=SolverConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    strategy: StrategyConfig = field(default_factory=StrategyConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)

    def __post_init__(self):  # checks across groups
        last_epoch_seed = self.seed * SEED_STRIDE + self.trainer.max_epochs  # layout.epoch_seed of the last epoch
        check(0 <= self.seed and last_epoch_seed <= SEED_MAX,
              f"seed={self.seed} must be in [0, {(SEED_MAX - self.trainer.max_epochs) // SEED_STRIDE}] "
              f"(each epoch is seeded with seed x {SEED_STRIDE} + epoch, at most {SEED_MAX})")
        # one process here (the layout checks every process's share at the start, layout.BatchLayout.problem)
        uneven = BatchLayout.from_config(self.data, self.agent, self.trainer.accumulate_grad_batches, 1).uneven_steps()
        check(uneven is None, uneven)
        check(not self.simulator.seed_replay or self.curriculum.task_source == "simulator",
              f"simulator.seed_replay={self.simulator.seed_replay} replays the simulator's own tasks as seeds; it "
              f"needs curriculum.task_source=simulator (got {self.curriculum.task_source})")
        if self.solver.name == "calibrated":  # the simulator's tasks, in one process (coevolution/calibrated.py)
            check(self.curriculum.task_source == "simulator", "solver=calibrated rates the simulator's tasks; it needs "
                  f"curriculum.task_source=simulator (got {self.curriculum.task_source})")
            check(self.strategy.name == "single", f"solver=calibrated runs in one process; use strategy=single "
                  f"(got {self.strategy.name})")
        if self.trainer.precision == "16-mixed":  # fp16 autocast with Lightning's gradient scaler
            check(self.strategy.name != "fsdp", "trainer.precision=16-mixed: strategy=fsdp (Lightning's "
                  "ModelParallelStrategy) does not support it; use bf16-mixed")
            check(self.model.dtype != "float16", "trainer.precision=16-mixed needs float32 or bfloat16 weights "
                  "(model.dtype): the gradient scaler cannot unscale float16 gradients")
