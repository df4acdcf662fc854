#!/bin/bash
# Measures import, expmodel and dream agent on imported household data — figures: docs/results/imported-domains.md.
# The imported-domain measurements (issues 29 and 45; docs/results/imported-domains.md): household
# episodes exported as an application the importer knows nothing of, then
#   domain import -> expmodel train --domain -> domain train --llm learned:… --real-env household-v0
# and, to compare with, real GRPO in the registered env on the same tasks.
#
#   scripts/measure/imported-domains.sh data  N FORMAT [OUT]              rollouts, convert, domain import (timed)
#   scripts/measure/imported-domains.sh model N FORMAT EPOCHS [OUT]       expmodel train --domain (timed; EPOCHS
#                                                                         "default" leaves --epochs out)
#   scripts/measure/imported-domains.sh agent N FORMAT AGENT ITERATIONS [OUT]
#                                                                         domain train --agent AGENT, real test split
#                                                                         (SEED=S: --seed S; HUMAN=1: no --json)
#   scripts/measure/imported-domains.sh grpo  SEED [OUT]                  real GRPO, household-medium, test split
#                                                                         (SFT=1: from the SFT policy)
#   scripts/measure/imported-domains.sh N FORMAT EPOCHS ITERATIONS [OUT]  data, model, then agent bc-then-dream
#                                                                         (the issue-29 form)
#
# N episodes at difficulty 0.5: 90 % noisy-expert (epsilon 0.3; they succeed) from seed 300000 and
# 10 % random (they fail at the step limit) from seed 310000. FORMAT eto keeps every episode (ETO
# records the reward); FORMAT agentgym keeps the noisy-expert ones only, imported with
# --unrecorded-outcome success. AgentGym records no reward, and the flag declares one outcome for
# the whole file: the random episodes would be declared successes, and without the flag no episode's
# ending could be learned. All the noisy-expert episodes did reach their goal.
#
# The real figures play the test split (seeds from 2e9), 100 tasks at difficulty 0.5, in both the
# domain agent's evaluation and real GRPO's (household-medium is difficulty 0.5; finalEvalEpisodes
# is set to 100 so both play the same 100 tasks).
# Everything goes to OUT (default runs/imported-domains); each step's output is OUT/logs/NAME/, and
# the commands run are appended to OUT/logs/NAME/commands.txt. Wall times come from /usr/bin/time.
set -euo pipefail
STAGE=$1
case "$STAGE" in
  data | model | agent | grpo) shift ;;
  *) STAGE=all ;;
esac
NICE=${NICE:-5}

dreamgym() {
  echo "\$ npm run dreamgym -- $*" >>"$LOGS/commands.txt"
  npm run -s dreamgym -- "$@"
}
# timed STEP COMMAND…: the command's wall time and peak memory go to $LOGS/STEP.time.
timed() {
  local step=$1
  shift
  echo "\$ npm run dreamgym -- $*   # timed: $step.time" >>"$LOGS/commands.txt"
  nice -n "$NICE" /usr/bin/time -f "wall_s %e peak_kb %M exit %x" -o "$LOGS/$step.time" npm run -s dreamgym -- "$@"
}

data() {
  local random_episodes=$((N / 10))
  local expert_episodes=$((N - random_episodes))
  dreamgym rollout household-v0 --policy noisy-expert --epsilon 0.3 --episodes $expert_episodes --seed 300000 \
    --difficulty 0.5 --out "$OUT/hh$N-expert.jsonl" --json 2>/dev/null | tail -1 >"$LOGS/rollout.out"
  dreamgym rollout household-v0 --policy random --episodes $random_episodes --seed 310000 \
    --difficulty 0.5 --out "$OUT/hh$N-random.jsonl" --json 2>/dev/null | tail -1 >>"$LOGS/rollout.out"
  IMPORT_OPTIONS=()
  if [ "$FORMAT" = agentgym ]; then
    cp "$OUT/hh$N-expert.jsonl" "$OUT/$NAME.jsonl"
    IMPORT_OPTIONS=(--unrecorded-outcome success)
  else
    cat "$OUT/hh$N-expert.jsonl" "$OUT/hh$N-random.jsonl" >"$OUT/$NAME.jsonl"
  fi
  dreamgym convert --from ours --to "$FORMAT" "$OUT/$NAME.jsonl" "$OUT/$NAME.$FORMAT.json"
  timed import domain import "$OUT/$NAME.$FORMAT.json" --format "$FORMAT" --name "$NAME" --dir "$OUT/domains" \
    --replace "${IMPORT_OPTIONS[@]}" --json >"$LOGS/import.out" 2>"$LOGS/import.err"
}

model() {
  local epochs=()
  [ "$EPOCHS" = default ] || epochs=(--epochs "$EPOCHS")
  timed expmodel expmodel train --domain "$NAME" --dir "$OUT/domains" --out "$OUT/models/$NAME" "${epochs[@]}" \
    --json >"$LOGS/expmodel.out" 2>"$LOGS/expmodel.err"
}

# Exit 3: the model failed its health checks (the summary says which); the measurement still stands.
# HUMAN=1: the human summary instead of --json (OUT/runs/NAME-AGENT/summary.json has the JSON).
# SEED=S (S > 0): domain train --seed S (default 0: the policy's initial weights and the dream), into
# OUT/runs/NAME-AGENT-sS; the real test tasks stay the same.
agent() {
  local status=0 json=(--json) seed=() run=$NAME-$AGENT
  [ "${HUMAN:-0}" = 1 ] && json=()
  if [ "${SEED:-0}" != 0 ]; then
    seed=(--seed "$SEED")
    run=$run-s$SEED
  fi
  timed "train-${run#"$NAME-"}" domain train --name "$NAME" --dir "$OUT/domains" --llm "learned:$OUT/models/$NAME" \
    --agent "$AGENT" --iterations "$ITERATIONS" --real-env household-v0 --real-episodes 100 --difficulty 0.5 \
    --split test "${seed[@]}" --out "$OUT/runs/$run" "${json[@]}" >"$LOGS/train-${run#"$NAME-"}.out" \
    2>"$LOGS/train-${run#"$NAME-"}.err" || status=$?
  echo "domain train --agent $AGENT ${seed[*]} exit $status" >>"$LOGS/commands.txt"
  tail -1 "$LOGS/train-${run#"$NAME-"}.out"
}

# SFT=1: the run starts from the SFT policy (--sft: cloned from household's shipped offline expert
# episodes), into OUT/runs/grpo-sft-household-medium-SEED.
grpo() {
  local sft=() run=grpo
  if [ "${SFT:-0}" = 1 ]; then
    sft=(--sft)
    run=grpo-sft
  fi
  timed "$run-$SEED" train --preset household-medium --mode real --algo grpo "${sft[@]}" --seed "$SEED" \
    --split test --set finalEvalEpisodes=100 --progress 0 --out "$OUT/runs/$run-household-medium-$SEED" --force \
    --json >"$LOGS/$run-$SEED.out" 2>"$LOGS/$run-$SEED.err"
  tail -1 "$LOGS/$run-$SEED.out"
}

case "$STAGE" in
  grpo)
    SEED=$1
    OUT=${2:-runs/imported-domains}
    LOGS=$OUT/logs/grpo
    ;;
  *)
    N=$1
    FORMAT=$2
    NAME=hh$N$FORMAT
    ;;
esac
case "$STAGE" in
  data) OUT=${3:-runs/imported-domains} ;;
  model) EPOCHS=$3 OUT=${4:-runs/imported-domains} ;;
  agent) AGENT=$3 ITERATIONS=$4 OUT=${5:-runs/imported-domains} ;;
  all) EPOCHS=$3 ITERATIONS=$4 AGENT=bc-then-dream OUT=${5:-runs/imported-domains} ;;
esac
[ "$STAGE" = grpo ] || LOGS=$OUT/logs/$NAME
mkdir -p "$LOGS"
case "$STAGE" in
  all) data && model && agent ;;
  *) "$STAGE" ;;
esac
