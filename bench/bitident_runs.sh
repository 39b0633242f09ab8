#!/usr/bin/env bash
# Tiny co-evolution runs for a bit-for-bit before/after comparison of two checkouts; see compare_runs.py.
# usage: bench/bitident_runs.sh SRC_DIR OUT_PREFIX MODEL [VARIANT...]
#   SRC_DIR: a checkout to run from (its lightning_genenv is imported); OUT_PREFIX: run dirs go to
#   OUT_PREFIX-<variant>; MODEL: tiny, or the format-trained tiny model's directory (tests/tiny_sft.py);
#   VARIANT: base, lora, random, static (default: all; static needs a model that writes valid tasks).
set -euo pipefail
src=$1; out=$2; model=$3; shift 3
variants=("${@:-base lora random static}"); variants=(${variants[*]})
cd "$src"
common=(model=tiny "model.agent=$model" "model.simulator=$model" rollout=hf "data.families=[weather,qa_arith]"
        data.num_val=4 data.seeds_per_epoch=4 data.tasks_per_epoch=8 data.replay_per_epoch=2
        simulator.num_variations=2 agent.num_generations=4 agent.max_completion_length=40
        simulator.max_completion_length=48 agent.learning_rate=1e-3 simulator.learning_rate=1e-3
        simulator.kl_max=10.0 trainer.max_epochs=2 trainer.enable_progress_bar=false curriculum.k_min=0.0)
run() { local name=$1; shift; rm -rf "$out-$name"; nice -n 10 python train.py "${common[@]}" "$@" "run_dir=$out-$name" \
        > "$out-$name.log" 2>&1 || { echo "FAILED $name"; tail -20 "$out-$name.log"; exit 1; }; echo "done $name"; }
declare -A args=(
  [base]="model.lora.enabled=false"
  [lora]="model.lora.enabled=true agent.num_iterations=2 trainer.accumulate_grad_batches=2"
  [random]="model.lora.enabled=false curriculum=random"
  [static]="model.lora.enabled=false curriculum=static curriculum.static_variations=2 trainer.max_epochs=1")
for v in "${variants[@]}"; do run "$v" ${args[$v]}; done
