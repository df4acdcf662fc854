/**
 * Advantage estimators, pure functions over plain arrays (docs/architecture.md §4.1 step 4).
 *
 * - discountedReturns: G_t = r_t + γ G_{t+1} over one episode (REINFORCE).
 * - gae: generalised advantage estimation (Schulman et al. 2016) over one stream of steps,
 *   `dones[t]` = the episode ended after step t (no bootstrap across it) — CleanRL's loop.
 * - groupNormalizedAdvantages: GRPO's (r − mean) / (std + eps) within a group of rollouts of the
 *   same task (population std).
 */

/** G_t = Σ_k γ^k r_{t+k} to the end of the array (one episode). */
export function discountedReturns(rewards: number[], gamma: number): number[] {
  const out = new Array<number>(rewards.length);
  let running = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    running = rewards[t] + gamma * running;
    out[t] = running;
  }
  return out;
}

/**
 * δ_t = r_t + γ V(s_{t+1}) (1 − done_t) − V(s_t);  A_t = δ_t + γλ (1 − done_t) A_{t+1};
 * returns R_t = A_t + V(s_t). `values[t]` = V(s_t); `lastValue` = V of the state after the last
 * step (used only if the last step is not done).
 */
export function gae(
  rewards: number[],
  values: number[],
  dones: boolean[],
  lastValue: number,
  gamma: number,
  lambda: number,
): { advantages: number[]; returns: number[] } {
  const n = rewards.length;
  if (values.length !== n || dones.length !== n) {
    throw new Error(
      `gae: rewards (${n}), values (${values.length}) and dones (${dones.length}) must have the same length`,
    );
  }
  const advantages = new Array<number>(n);
  const returns = new Array<number>(n);
  let lastGae = 0;
  for (let t = n - 1; t >= 0; t--) {
    const nonTerminal = dones[t] ? 0 : 1;
    const nextValue = t === n - 1 ? lastValue : values[t + 1];
    const delta = rewards[t] + gamma * nextValue * nonTerminal - values[t];
    lastGae = delta + gamma * lambda * nonTerminal * lastGae;
    advantages[t] = lastGae;
    returns[t] = lastGae + values[t];
  }
  return { advantages, returns };
}

/** (r_i − mean(r)) / (std(r) + eps), population std; all zeros when every reward is equal. */
export function groupNormalizedAdvantages(rewards: number[], eps = 1e-6): number[] {
  const n = rewards.length;
  if (n === 0) return [];
  let mean = 0;
  for (const r of rewards) mean += r;
  mean /= n;
  let variance = 0;
  for (const r of rewards) variance += (r - mean) * (r - mean);
  const std = Math.sqrt(variance / n);
  return rewards.map((r) => (r - mean) / (std + eps));
}
