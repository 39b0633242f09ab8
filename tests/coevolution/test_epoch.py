"""One epoch as one function: the batch plan on values, and run_epoch with a scripted agent engine."""

import random

import pytest

from lightning_genenv.coevolution.epoch import BatchPlan, base_order_rng, generated_share, plan_batch, run_epoch
from lightning_genenv.coevolution.sources import NoSource, StaticSource
from lightning_genenv.config import compose
from lightning_genenv.pool_records import EnvRecord, TrainRecord
from lightning_genenv.prompts import gold_completion
from lightning_genenv.rollout import Sample
from lightning_genenv.tasks import Task


@pytest.mark.parametrize("kept,replayable,expected", [
    (0, 0, BatchPlan(0, 0, 8)),  # no generated task at all: base tasks only
    (2, 10, BatchPlan(2, 2, 4)),  # replay up to replay_per_epoch
    (3, 10, BatchPlan(3, 1, 4)),  # ... while the generated share (4 of 8) lasts
    (4, 10, BatchPlan(4, 0, 4)),  # the share is full: no replay
    (1, 1, BatchPlan(1, 1, 6)),  # fewer replayable tasks than asked for
])
def test_plan_batch_mix(kept, replayable, expected):
    plan = plan_batch(tasks_per_epoch=8, generated_fraction=0.5, replay_per_epoch=2, num_kept=kept,
                      num_replayable=replayable, num_base=20)
    assert plan == expected and plan.total == 8


def test_plan_batch_share_rounds_and_refuses_bad_input():
    assert generated_share(6, 0.5) == 3 and generated_share(8, 0.3) == 2 and generated_share(8, 1.0) == 8
    assert plan_batch(8, 1.0, 8, 5, 10, 8) == BatchPlan(5, 3, 0)
    with pytest.raises(ValueError, match="5 kept generated groups; the generated share of the batch is 4"):
        plan_batch(8, 0.5, 2, 5, 10, 20)
    with pytest.raises(ValueError, match="the base set has 3 tasks, fewer than the 6"):
        plan_batch(8, 0.5, 2, 2, 0, 3)
    with pytest.raises(ValueError, match="negative counts"):
        plan_batch(8, 0.5, -1, 0, 0, 20)


class Engine:
    """Solves the tasks whose ids are in ``solve`` on every sample, and no other."""

    def __init__(self, tasks, solve):
        self.tasks, self.solve, self.calls = tasks, solve, []

    def generate(self, prompts, params, desc=None):
        tasks = self.tasks[-len(prompts):]  # the encoder records each task it encodes
        self.calls.append(len(prompts))
        return [[Sample(prompt_ids=p, completion_ids=[1], logprobs=[-1.0], truncated=False,
                        text=gold_completion(t) if t.id in self.solve else "wrong") for _ in range(params.n)]
                for p, t in zip(prompts, tasks)]


class Agent:
    """The agent as an epoch sees it: records each task it encodes (into ``seen``) and each batch it prepares."""

    def __init__(self, seen):
        self.seen, self.prepared = seen, []

    def prompt(self, task):
        self.seen.append(task)
        return [7]

    def prepare_groups(self, groups, layout):
        self.prepared.append((groups, layout))
        return groups


def _task(i, source="seed", epoch=None):
    return Task(id=f"t{i}", family="qa", question=f"q{i}?", check="exact", answer=str(i), source=source, epoch=epoch)


def test_run_epoch_values_in_values_out():
    """A static set of 4 tasks, one solved: it fails the filter (p-hat 1) like the three unsolved (p-hat 0);
    the batch is then filled from replay (one earlier generated task) and base tasks, and prepared."""
    cfg = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=2", "data.replay_per_epoch=1",
                   "data.generated_fraction=0.5", "agent.num_generations=2", "simulator.num_variations=2",
                   "curriculum=static", "curriculum.band=0.3"])
    base = [_task(i) for i in range(10)]
    static = [_task(i, "generated") for i in range(100, 104)]
    replayable = [TrainRecord(_task(50, "generated", 0), "generated", 0, 0.5, [], [])]
    encoded = []
    engine = Engine(encoded, solve={"t100", "t1", "t50"})
    agent = Agent(encoded)
    result = run_epoch(1, cfg, StaticSource(static, 4), engine, agent, "layout", base, replayable, [],
                       random.Random(0), random.Random(1))
    assert len(result.new.records) == 4 and len(result.attempted) == 4
    assert sorted(s.p_hat for s in result.curriculum.scores) == [0.0, 0.0, 0.0, 1.0]
    assert result.curriculum.kept == [] and result.train_records == []  # k_min and the band keep none
    assert result.plan == BatchPlan(0, 1, 3)
    assert [g.task.id for g in result.filled][0] == "t50" and len(result.groups) == 4
    assert agent.prepared == [(result.groups, "layout")] and engine.calls == [4, 4]  # prepared once, for the layout
    assert [r.p_hat for r in result.env_records] == [s.p_hat for s in result.curriculum.scores]
    assert set(result.results) == {"qa"} and result.results["qa"].attempts == 16
    assert {"generate_tasks", "agent_rollouts", "reward_scoring", "prepare_groups"} <= set(result.times)
    metrics = result.metrics(cfg.agent.num_generations)
    assert metrics["rollout/num_tasks/replay"] == 1.0 and metrics["rollout/num_tasks/base"] == 3.0
    seen = []
    again = run_epoch(1, cfg, StaticSource(static, 4), Engine(seen, set()), Agent(seen), None, base, replayable, [],
                      random.Random(0), random.Random(1))
    assert [g.task.id for g in again.groups] == [g.task.id for g in result.groups]  # the RNG decides the draw


def test_run_epoch_aims_r_env_by_the_earlier_epochs_of_d_env_with_a_target_memory():
    """curriculum.target_memory: the epoch reads the earlier epochs' p-bar from the D_env it is given. An earlier epoch
    solved every time (p-bar 1, alpha 0.5: s 0.5, cut to 0.45 where the target meets 0.05) and this one's
    p-hats 0, 0, 0, 1 (p-bar 0.25): s = -0.25 + 0.5 * 0.45 = -0.025, the target 0.525; without D_env 0.75."""
    cfg = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=2", "agent.num_generations=2",
                   "simulator.num_variations=2", "curriculum=static", "curriculum.target_gain=1",
                   "curriculum.target_memory=0.5"])
    base, static = [_task(i) for i in range(10)], [_task(i, "generated") for i in range(100, 104)]
    earlier = [EnvRecord(0, None, "static", None, None, None, _task(i, "generated", 0), None, attempted=True,
                         p_hat=1.0) for i in (60, 61)]

    def target(env_pool):
        seen = []
        result = run_epoch(1, cfg, StaticSource(static, 4), Engine(seen, {"t100"}), Agent(seen), None, base, [],
                           env_pool, random.Random(0), random.Random(1))
        assert sorted(s.p_hat for s in result.curriculum.scores) == [0.0, 0.0, 0.0, 1.0]
        return result.curriculum.stats["curriculum/reward_target"]

    assert target(earlier) == pytest.approx(0.525)
    assert target([]) == pytest.approx(0.75)


def test_run_epoch_without_new_tasks_is_plain_grpo_on_base_tasks():
    cfg = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=2", "agent.num_generations=2",
                   "curriculum=none"])
    base = [_task(i) for i in range(6)]
    seen = []
    result = run_epoch(0, cfg, NoSource(), Engine(seen, set()), Agent(seen), None, base, [], [], random.Random(0),
                       random.Random(1))
    assert result.new.records == [] and result.attempted == [] and result.plan == BatchPlan(0, 0, 4)
    assert len(result.groups) == 4 and all(g.task.source == "seed" for g in result.groups)


def test_base_tasks_are_paired_across_settings():
    """The base tasks come from their own stream: a static source with a task to replay (it draws from the
    epoch's RNG and the replay takes a place in the batch) and no source with none train on the same base
    tasks in the same order, one a prefix of the other, however much else each setting drew."""
    cfg = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=2", "data.replay_per_epoch=1",
                   "agent.num_generations=2", "curriculum=static"])
    base = [_task(i) for i in range(10)]
    static = [_task(i, "generated") for i in range(100, 104)]
    replayable = [TrainRecord(_task(50, "generated", 0), "generated", 0, 0.5, [], [])]
    runs = []
    for source, replay in ((StaticSource(static, 4), replayable), (NoSource(), [])):
        seen = []
        result = run_epoch(3, cfg, source, Engine(seen, set()), Agent(seen), None, base, replay, [],
                           random.Random(0), base_order_rng(0, 3))
        runs.append([g.task.id for g in result.filled[result.plan.replay:]])
    static_base, plain_base = runs
    assert len(static_base) == 3 and len(plain_base) == 4 and plain_base[:3] == static_base
    seen = []
    other_epoch = run_epoch(4, cfg, NoSource(), Engine(seen, set()), Agent(seen), None, base, [], [],
                            random.Random(0), base_order_rng(0, 4))
    assert [g.task.id for g in other_epoch.filled] != plain_base  # the order is the epoch's own


def test_run_epoch_replays_in_band_tasks_of_d_env_as_seeds():
    """simulator.seed_replay 0.5 of 4 seeds: 2 are D_env's in-band simulator tasks of the last epochs, handed to the
    task source apart from the base ones and counted in the metrics; the out-of-band one is never a seed."""
    cfg = compose(["model=tiny", "data.tasks_per_epoch=4", "data.seeds_per_epoch=4", "agent.num_generations=8",
                   "simulator.seed_replay=0.5", "curriculum.alpha=0.5"])  # in band: 3/8 to 5/8
    base = [_task(i) for i in range(6)]
    env_pool = [EnvRecord(2, "t0", "simulator", None, None, None, _task(60 + i, "generated", 2), None,
                          attempted=True, p_hat=p) for i, p in enumerate((0.5, 1.0, 0.5, 0.5))]

    class Recording(NoSource):
        def new_tasks(self, seeds, epoch, rng):
            self.seeds = seeds
            return super().new_tasks(seeds, epoch, rng)

    source, seen = Recording(), []
    result = run_epoch(3, cfg, source, Engine(seen, set()), Agent(seen), None, base, [], env_pool,
                       random.Random(0), random.Random(1))
    assert source.seeds is result.seeds and len(result.seeds.base) == 2 and all(s in base for s in result.seeds.base)
    assert {s.id for s in result.seeds.replayed} <= {"t60", "t62", "t63"} and len(result.seeds.replayed) == 2
    assert result.metrics(8)["sim/seeds_replayed"] == 2
