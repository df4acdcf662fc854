/**
 * `dreamgym dream`: roll out episodes inside the dream — a DreamEnv over an experience model
 * (the noisy oracle or an LLM behind an OpenAI-compatible server) — and print every step with
 * the model's reasoning.
 *
 * Policies act on the DREAMED observations:
 * - random: a seeded uniform pick among the dreamed admissible actions;
 * - expert: the real env's expert on a real env kept in sync — every action that changes the
 *   dreamed state is also played in a real copy of the task, and the expert's move is read from
 *   that real state. When the dream does not offer that move (it diverged from the real env, as
 *   an LLM's results page lists other products than the real search), the step falls back to a
 *   seeded random pick among the dreamed actions, and the step is marked `expert: false`.
 *
 * For `openai:` models the API key comes from DREAMGYM_API_KEY, else OPENAI_API_KEY (src/node/edge.ts),
 * and the retrieval buffer is seeded from the shipped dataset public/datasets/<env>.jsonl. A failed
 * engine call is one invalid step; llmMaxFailures of them in a row stop the command. The model's
 * text is printed with control characters escaped (a model cannot drive the terminal).
 */
import { expertOf } from '../../core/envs/env';
import { getEnvDefinition, makeEnv } from '../../core/envs/registry';
import { makeDreamEnv } from '../../core/experience/dream-env';
import { EngineFailureGuard } from '../../core/experience/engine-failures';
import { formatLlmSpec } from '../../core/llm/spec';
import { Rng } from '../../core/rng';
import type { CommandSpec, ParsedArgs } from '../args';
import { ENV_MODEL_USAGE, envModelFromOptions, envModelOptions, type EnvModelValues } from '../experience-options';
import { printJsonLast, progressBar, round, terminalSafe } from '../output';
import { dreamWarnings } from '../../core/train/dream-health';
import { UnusableModelError } from './audit';

// =============================================================================================
// dream
// =============================================================================================

export const dreamCommand: CommandSpec = {
  name: 'dream',
  summary: 'roll out episodes in the dream (an experience model instead of the env) and print its reasoning',
  usage:
    'dreamgym dream --env E --llm oracle:EPS_R,EPS_P|openai:BASE_URL#MODEL ' +
    `--policy expert|random --episodes N [--seed S] ${ENV_MODEL_USAGE}`,
  options: envModelOptions(
    {
      policy: {
        type: 'string',
        description: 'who acts in the dream (expert: the real expert on a synced real env)',
        choices: ['expert', 'random'],
        default: 'expert',
      },
      episodes: { type: 'integer', description: 'number of episodes', default: 3, min: 1, max: 10_000 },
      seed: { type: 'integer', description: 'seed of the first episode (episode i uses seed + i)', default: 0, min: 0 },
      difficulty: { type: 'number', description: 'task difficulty 0..1', default: 0.5, min: 0, max: 1 },
    },
    'print the episodes and a summary as JSON on the last line',
  ),
};

interface DreamedStep {
  t: number;
  action: string;
  expert?: boolean;
  reasoning: string;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  valid: boolean;
  dream_invalid?: boolean;
  invalid_reason?: string;
  cached?: boolean;
  observation: string;
}

/**
 * What `train` says of a degenerate dream (core/train/dream-health.ts), said of these episodes: they
 * are read as one iteration's dream metrics (a model that ends every episode at once, or none).
 */
function degenerateDream(episodes: readonly { success: boolean; length: number; steps: DreamedStep[] }[]): string[] {
  const share = (count: number) => count / Math.max(1, episodes.length);
  const metrics = {
    'dream/success_rate': share(episodes.filter((e) => e.success).length),
    'dream/truncated_rate': share(episodes.filter((e) => e.steps.at(-1)?.truncated).length),
    'dream/episode_length': share(episodes.reduce((sum, e) => sum + e.length, 0)),
  };
  return dreamWarnings([{ iteration: 1, metrics }]).map((w) => w.message);
}

export async function runDream(args: ParsedArgs): Promise<void> {
  const o = args.options as EnvModelValues & { policy: 'expert' | 'random'; episodes: number; difficulty: number };
  const { envId, llm, settings, model } = await envModelFromOptions(o, dreamCommand);
  const definition = getEnvDefinition(envId);
  const failures = new EngineFailureGuard(settings.llmMaxFailures);
  let failedCalls = 0;
  const dream = makeDreamEnv(model, { envId });
  const real = makeEnv(envId);
  const bar = o.json ? progressBar(`dream ${envId}`) : null;
  const episodes: {
    seed: number;
    task: string;
    success: boolean;
    return: number;
    length: number;
    steps: DreamedStep[];
  }[] = [];

  for (let i = 0; i < o.episodes; i++) {
    const seed = o.seed + i;
    const task = definition.generateTask(seed, o.difficulty);
    let obs = await dream.reset({ seed, task });
    if (o.policy === 'expert') await real.reset({ seed, task });
    const rng = Rng.fromSeed(seed, 'dream-policy', o.policy);
    const steps: DreamedStep[] = [];
    let ret = 0;
    let success: boolean;
    if (!o.json) console.log(`\nepisode ${i + 1}/${o.episodes} (seed ${seed}) — ${terminalSafe(task.instruction)}`);
    for (let t = 1; ; t++) {
      let action: string;
      let fromExpert: boolean | undefined;
      if (o.policy === 'expert') {
        const move = expertOf(real)?.expertAction() ?? null;
        fromExpert = move !== null && obs.admissible.includes(move);
        action = fromExpert ? move! : rng.pick(obs.admissible);
      } else {
        action = rng.pick(obs.admissible);
      }
      // TimeLimit passes the DreamEnv's info (with its account, info.dream) through.
      const r = await dream.step(action);
      const report = r.info.dream!;
      failures.recordStep(report.predicted ? [report.engineError] : []);
      if (report.engineError !== undefined) failedCalls++;
      // The synced real env follows every action that changed the dreamed state.
      if (o.policy === 'expert' && r.info.valid) await real.step(action);
      ret += r.reward;
      const step: DreamedStep = {
        t,
        action,
        ...(fromExpert !== undefined ? { expert: fromExpert } : {}),
        reasoning: report.reasoning,
        reward: r.reward,
        terminated: r.terminated,
        truncated: r.truncated,
        valid: r.info.valid,
        ...(report.invalid ? { dream_invalid: true, invalid_reason: report.invalidReason } : {}),
        ...(report.cached ? { cached: true } : {}),
        observation: r.text,
      };
      steps.push(step);
      if (!o.json) {
        const tags = [
          r.terminated ? (r.info.success ? 'END success' : 'END failure') : '',
          r.truncated ? 'TRUNCATED' : '',
          report.invalid ? `DREAM-INVALID (${report.invalidReason})` : !r.info.valid ? 'no-op' : '',
          fromExpert === false ? 'expert move not in the dream: random' : '',
        ]
          .filter(Boolean)
          .join(', ');
        console.log(
          terminalSafe(`  ${String(t).padStart(2)}. ${action}  → reward ${r.reward}${tags ? `  [${tags}]` : ''}`),
        );
        if (report.reasoning) console.log(`      reasoning: ${terminalSafe(report.reasoning)}`);
        console.log(`      next: ${terminalSafe(r.text.length > 220 ? `${r.text.slice(0, 219)}…` : r.text)}`);
      }
      obs = r;
      if (r.terminated || r.truncated) {
        success = r.info.success;
        break;
      }
    }
    episodes.push({ seed, task: task.instruction, success, return: ret, length: steps.length, steps });
    bar?.update(i + 1, o.episodes, `success ${(episodes.filter((e) => e.success).length / (i + 1)).toFixed(2)}`);
  }
  bar?.end();
  const usage = dream.env.usage;
  const predictions = Math.max(1, usage.predictions);
  const summary = {
    env: envId,
    llm: formatLlmSpec(llm),
    label: model.label,
    policy: o.policy,
    episodes: o.episodes,
    seed: o.seed,
    difficulty: o.difficulty,
    k: o.k,
    history: o.history,
    reasoning: !o['no-reasoning'],
    success_rate: round(episodes.filter((e) => e.success).length / o.episodes),
    mean_return: round(episodes.reduce((s, e) => s + e.return, 0) / o.episodes),
    mean_length: round(episodes.reduce((s, e) => s + e.length, 0) / o.episodes),
    dream_steps: usage.steps,
    invalid_rate: round(usage.invalid / predictions),
    failed_calls: failedCalls,
    tokens_per_transition: round((usage.promptTokens + usage.completionTokens) / predictions, 1),
    ms_per_transition: round(usage.ms / predictions, 3),
    cache_hit_rate: round(usage.cacheHits / predictions),
    warnings: degenerateDream(episodes),
    trajectories: episodes,
  };
  for (const warning of summary.warnings) process.stderr.write(`warning: ${warning}\n`);
  // The episodes are printed either way; a model with no usable answer then fails the command.
  const unusable =
    usage.predictions > 0 && usage.invalid === usage.predictions
      ? new UnusableModelError(model.label, usage.predictions, failedCalls)
      : null;
  if (o.json) {
    printJsonLast(summary);
    if (unusable) throw unusable;
    return;
  }
  console.log(
    `\n${terminalSafe(model.label)}: ${o.episodes} dreamed episodes, success ${summary.success_rate}, mean length ${summary.mean_length}, ` +
      `invalid answers ${summary.invalid_rate}, ${summary.tokens_per_transition} tokens and ${summary.ms_per_transition} ms per transition`,
  );
  if (unusable) throw unusable;
}
