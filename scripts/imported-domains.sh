#!/bin/bash
# The imported-domain measurement (issue 29, item 4; docs/results/imported-domains.md): household
# episodes exported as an application the importer knows nothing of, then
#   domain import -> expmodel train --domain -> domain train --llm learned:… --real-env household-v0
#
#   scripts/imported-domains.sh N FORMAT EPOCHS ITERATIONS [OUT]
#
# N episodes at difficulty 0.5: 90 % noisy-expert (epsilon 0.3; they succeed) from seed 300000 and
# 10 % random (they fail at the step limit) from seed 310000. FORMAT eto keeps every episode (ETO
# records the reward); FORMAT agentgym keeps the noisy-expert ones only, imported with
# --unrecorded-outcome success (AgentGym records no reward; all of them did reach their goal).
# Everything goes to OUT (default runs/imported-domains); each step's output is OUT/logs/NAME/.
set -euo pipefail
N=$1
FORMAT=$2
EPOCHS=$3
ITERATIONS=$4
OUT=${5:-runs/imported-domains}
RANDOM_EPISODES=$((N / 10))
EXPERT_EPISODES=$((N - RANDOM_EPISODES))
NAME=hh$N$FORMAT
LOGS=$OUT/logs/$NAME
mkdir -p "$LOGS"
dreamgym() {
  echo "\$ npm run dreamgym -- $*" >>"$LOGS/commands.txt"
  npm run -s dreamgym -- "$@"
}

dreamgym rollout household-v0 --policy noisy-expert --epsilon 0.3 --episodes $EXPERT_EPISODES --seed 300000 \
  --out "$OUT/hh$N-expert.jsonl" --json 2>/dev/null | tail -1 >"$LOGS/rollout.out"
dreamgym rollout household-v0 --policy random --episodes $RANDOM_EPISODES --seed 310000 \
  --out "$OUT/hh$N-random.jsonl" --json 2>/dev/null | tail -1 >>"$LOGS/rollout.out"
IMPORT_OPTIONS=()
if [ "$FORMAT" = agentgym ]; then
  cp "$OUT/hh$N-expert.jsonl" "$OUT/$NAME.jsonl"
  IMPORT_OPTIONS=(--unrecorded-outcome success)
else
  cat "$OUT/hh$N-expert.jsonl" "$OUT/hh$N-random.jsonl" >"$OUT/$NAME.jsonl"
fi
dreamgym convert --from ours --to "$FORMAT" "$OUT/$NAME.jsonl" "$OUT/$NAME.$FORMAT.json"
dreamgym domain import "$OUT/$NAME.$FORMAT.json" --format "$FORMAT" --name "$NAME" --dir "$OUT/domains" --replace \
  "${IMPORT_OPTIONS[@]}" --json >"$LOGS/import.out" 2>"$LOGS/import.err"
dreamgym expmodel train --domain "$NAME" --dir "$OUT/domains" --out "$OUT/models/$NAME" --epochs "$EPOCHS" \
  --json >"$LOGS/expmodel.out" 2>"$LOGS/expmodel.err"
# Exit 3: the model failed its health checks (the summary says which); the measurement still stands.
status=0
dreamgym domain train --name "$NAME" --dir "$OUT/domains" --llm "learned:$OUT/models/$NAME" \
  --iterations "$ITERATIONS" --real-env household-v0 --real-episodes 100 --json \
  >"$LOGS/train.out" 2>"$LOGS/train.err" || status=$?
echo "domain train exit $status" >>"$LOGS/commands.txt"
tail -1 "$LOGS/train.out"
