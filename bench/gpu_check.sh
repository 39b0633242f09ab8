#!/usr/bin/env bash
# One-call check of the GPU paths on a single multi-GPU machine (H100/H200 class):
#   bash bench/gpu_check.sh [model]     # model: a local HF dir or cached id; default: embedded
# Runs one co-evolution epoch with bf16 on every visible GPU under single, DDP and FSDP2 (with and
# without CPU offload), checks rank consistency, then the vLLM backend: one bf16 epoch with
# rollout=auto, which must pick vLLM (bf16 weights, so the colocated engine runs bf16 too), and the vLLM parity tests
# (tests/rollout/test_vllm.py, which include seeded validation repeating through vLLM's per-request seeds and a run
# that validates after every epoch training exactly like one that validates at the end), and prints a short table.
# Mixed precision: tests/test_precision.py on the GPU (one step under every trainer.precision moves the weights,
# 16-mixed through the gradient scaler; bf16-mixed's first-pass ratio exactly 1), one 16-mixed epoch, and the
# bf16 epoch's first optimizer step with no clipped token (its ratio is 1: the old log-probs are recomputed).
# Needs the project installed with the vllm extra (pip install -e ".[test,vllm]") and a CUDA build of torch; without
# vLLM its rows say SKIPPED.
set -uo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-embedded}
NGPU=$(python -c "import torch; print(torch.cuda.device_count())")
[ "$NGPU" -ge 1 ] || { echo "no CUDA device visible"; exit 1; }
OUT=${OUT:-/tmp/genenv_gpu_check}
rm -rf "$OUT"; mkdir -p "$OUT"
COMMON=(trainer=gpu trainer.max_epochs=1 trainer.enable_progress_bar=false model.dtype=float32
        "model.agent=$MODEL" "model.simulator=$MODEL" model.lora.enabled=false curriculum.k_min=0.0
        data.seeds_per_epoch=$((NGPU * 4)) data.tasks_per_epoch=$((NGPU * 8)) agent.groups_per_step=2
        strategy.accelerator=gpu)
declare -A RESULT
run() {  # name, extra args...
  local name=$1; shift
  local start=$(date +%s)
  if python train.py "${COMMON[@]}" "run_dir=$OUT/$name" "$@" > "$OUT/$name.log" 2>&1; then
    local ok="ok"
    if [ -d "$OUT/$name/ranks" ]; then
      python - "$OUT/$name/ranks" <<'PY' || ok="RANKS DIFFER"
import json, sys, pathlib
reports = [json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).glob("rank*.json"))]
sys.exit(0 if all(r == reports[0] for r in reports) else 1)
PY
    fi
    RESULT[$name]="$ok $(( $(date +%s) - start ))s $(python -c "import json;d=json.load(open('$OUT/$name/summary.json'));e=d['held_out']['end'];print('held-out score=%.3f reward=%.3f agent_steps=%d sim_epochs=%d' % (e['score'], e['reward_mean'], d['agent_steps'], d['simulator_epochs']))")"
  else
    RESULT[$name]="FAILED (see $OUT/$name.log: $(tail -1 "$OUT/$name.log"))"
  fi
}
run single strategy=single strategy.devices=1 rollout=hf
# bf16-mixed, rollout=hf: the first step's ratio is 1 (old log-probs recomputed in the step's precision), so nothing
# is clipped; a token clipped there is precision noise taken for policy drift
if [[ ${RESULT[single]} == ok* ]]; then
  python - "$OUT/single/tb/agent" <<'PY' || RESULT[single]="FAILED (bf16 first-step clip fraction is not 0)"
import sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
acc = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0}); acc.Reload()
first = min(acc.Scalars("agent/clip_ratio/region"), key=lambda e: e.step)
print(f"bf16 first step: clip_ratio/region={first.value}")
sys.exit(0 if first.value == 0.0 else 1)
PY
fi
run fp16 strategy=single strategy.devices=1 rollout=hf trainer.precision=16-mixed
start=$(date +%s)
if LIGHTNING_GENENV_TEST_ACCELERATOR=gpu python -m pytest -q -p no:logging tests/test_precision.py > "$OUT/precision.log" 2>&1; then
  RESULT[precision]="ok $(( $(date +%s) - start ))s $(tail -1 "$OUT/precision.log")"
else
  RESULT[precision]="FAILED (see $OUT/precision.log: $(tail -1 "$OUT/precision.log"))"
fi
if [ "$NGPU" -ge 2 ]; then
  run ddp strategy=ddp strategy.devices=$NGPU
  run fsdp strategy=fsdp strategy.devices=$NGPU
  run fsdp_offload strategy=fsdp strategy.devices=$NGPU strategy.cpu_offload=true
else
  run fsdp strategy=fsdp strategy.devices=1
fi
if python -c "import vllm" > /dev/null 2>&1; then
  # bf16 weights: the engine starts in the model's dtype; 0.3 of the GPU for vLLM (weights + KV cache).
  # rollout=auto (the default) must pick vLLM here: a single process on a GPU with vLLM installed.
  run vllm_bf16 strategy=single strategy.devices=1 rollout=auto model.dtype=bfloat16 \
      rollout.gpu_memory_utilization=0.3
  grep -q "^rollout: vllm" "$OUT/vllm_bf16.log" || RESULT[vllm_bf16]="AUTO DID NOT PICK vLLM: $(grep '^rollout: ' "$OUT/vllm_bf16.log")"
  start=$(date +%s)
  if python -m pytest -q -p no:logging tests/rollout/test_vllm.py > "$OUT/vllm_parity.log" 2>&1; then
    RESULT[vllm_parity]="ok $(( $(date +%s) - start ))s $(tail -1 "$OUT/vllm_parity.log")"
  else
    RESULT[vllm_parity]="FAILED (see $OUT/vllm_parity.log: $(tail -1 "$OUT/vllm_parity.log"))"
  fi
else
  RESULT[vllm_bf16]="SKIPPED (vLLM not installed: pip install -e '.[vllm]')"
fi
echo
echo "| run | result |"
echo "|---|---|"
for k in single fp16 precision ddp fsdp fsdp_offload vllm_bf16 vllm_parity; do [ -n "${RESULT[$k]:-}" ] && echo "| $k | ${RESULT[$k]} |"; done
# exit status: 1 when any row failed (a SKIPPED row is not a failure)
! printf '%s\n' "${RESULT[@]}" | grep -q -E "^(FAILED|AUTO DID NOT)|RANKS DIFFER"
