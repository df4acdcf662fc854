/**
 * `dreamgym train` and `dreamgym eval`: real-environment policy-gradient training with
 * metrics.jsonl, summary.json and a checkpoint after every iteration (resumable with --resume).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../../core/policy/backend';
import { ALGORITHMS, MODES, getPreset, presetNames, validateConfig, type TrainConfig } from '../../core/train/config';
import { Trainer, type TrainerDeps } from '../../core/train/loop';
import { buildRunParts } from '../../core/train/run-parts';
import { ReplayBuffer } from '../../core/buffer/buffer';
import { loadSeedDataset } from '../../core/data/seed-datasets';
import { FolderBufferStore } from '../../node/buffer-folder';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { nodeEngineDeps, readPublicFile } from '../../node/edge';
import type { CommandSpec, ParsedArgs } from '../args';
import { printJsonLast, progressBar, round } from '../output';

export const trainCommand: CommandSpec = {
  name: 'train',
  summary: 'train the candidate-scoring policy with GRPO, PPO or REINFORCE',
  usage: 'dreamgym train --preset P --mode real|dream|s2r [--llm oracle:EPS_R,EPS_P|openai:URL#MODEL|learned:PATH] [--algo grpo|ppo|reinforce] [--seed S] [--iterations N] [--set curriculumVariations=procedural|llm|both] [--out DIR] [--resume] [--json]',
  options: {
    preset: { type: 'string', description: `preset (${presetNames().join(', ')})` },
    mode: { type: 'string', description: 'where experience comes from', choices: MODES, default: 'real' },
    algo: { type: 'string', description: 'policy-gradient algorithm (default: the preset\'s)', choices: ALGORITHMS },
    llm: { type: 'string', description: 'experience model for dream/s2r: oracle:EPS_R,EPS_P, openai:BASE_URL#MODEL (key from DREAMGYM_API_KEY, else OPENAI_API_KEY) or learned:PATH' },
    curriculum: { type: 'boolean', description: 'curriculum task generator on (default on for dream/s2r, off for real)' },
    seed: { type: 'integer', description: 'seed of everything random in the run' },
    iterations: { type: 'integer', description: 'iterations (default: the preset\'s)' },
    set: { type: 'string', description: 'override config fields, e.g. --set learningRate=0.001,groupSize=4' },
    out: { type: 'string', description: 'run folder (default runs/<preset>-<algo>-<seed>)' },
    resume: { type: 'boolean', description: 'continue from OUT/checkpoint' },
    backend: { type: 'string', description: 'tfjs backend', choices: ['wasm', 'cpu'], default: 'wasm' },
    json: { type: 'boolean', description: 'print the summary as JSON on the last line' },
  },
};

function parseOverrides(text: string | undefined): Record<string, unknown> {
  if (!text) return {};
  const out: Record<string, unknown> = {};
  for (const pair of text.split(',')) {
    const [key, raw] = pair.split('=');
    if (!key || raw === undefined) throw new Error(`--set expects key=value pairs separated by commas; got '${pair}'.`);
    const value = raw.trim();
    const n = Number(value);
    out[key.trim()] = value === 'true' ? true : value === 'false' ? false : value !== '' && Number.isFinite(n) ? n : value;
  }
  return out;
}

export async function runTrain(args: ParsedArgs): Promise<void> {
  const o = args.options as { preset?: string; mode: string; algo?: string; llm?: string; curriculum?: boolean; seed?: number; iterations?: number; set?: string; out?: string; resume?: boolean; backend: 'wasm' | 'cpu'; json?: boolean };
  if (!o.preset) throw new Error(`train needs --preset (one of ${presetNames().join(', ')}).`);
  const config: TrainConfig = validateConfig({
    ...getPreset(o.preset), mode: o.mode, curriculum: o.curriculum ?? o.mode !== 'real',
    ...(o.algo ? { algo: o.algo } : {}), ...(o.llm ? { llm: o.llm } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.iterations !== undefined ? { iterations: o.iterations } : {}),
    ...parseOverrides(o.set),
  });
  const out = o.out ?? join('runs', `${config.preset}-${config.algo}-${config.seed}`);
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  const store = new FolderCheckpointStore(join(out, 'checkpoint'));
  const metricsPath = join(out, 'metrics.jsonl');
  const state = o.resume ? await store.load() : null;
  const deps = await trainerDeps(state?.config ?? config, out);
  let trainer: Trainer;
  if (o.resume) {
    if (!state) throw new Error(`--resume: no checkpoint in ${join(out, 'checkpoint')}. Start the run without --resume first.`);
    trainer = await Trainer.restore(state, { iterations: config.iterations }, deps);
    // Keep the metrics of the iterations the checkpoint covers, drop any written after it.
    const kept = existsSync(metricsPath) ? readFileSync(metricsPath, 'utf8').split('\n').filter(Boolean).slice(0, state.iteration) : [];
    writeFileSync(metricsPath, kept.map((l) => l + '\n').join(''));
  } else {
    mkdirSync(out, { recursive: true });
    trainer = new Trainer(config, deps);
    writeFileSync(metricsPath, '');
  }
  writeFileSync(join(out, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
  const started = performance.now();
  const perfPath = join(out, 'perf.jsonl');
  const bar = progressBar(`train ${config.preset} ${trainer.config.algo}`);
  while (!trainer.finished) {
    const record = await trainer.runIteration();
    // Wall-clock figures (perf/*) go to perf.jsonl so metrics.jsonl stays identical run to run.
    const { perf, rest } = splitPerf(record.metrics);
    appendFileSync(metricsPath, JSON.stringify({ iteration: record.iteration, ...roundAll(rest) }) + '\n');
    appendFileSync(perfPath, JSON.stringify({ iteration: record.iteration, ...perf }) + '\n');
    await store.save(await trainer.state());
    const evalText = record.metrics['eval/success_rate'] !== undefined ? ` eval ${record.metrics['eval/success_rate'].toFixed(2)}` : '';
    const phase = trainer.phaseOf(record.iteration);
    bar.update(record.iteration, Math.max(record.iteration, trainer.config.iterations), `${phase} success ${record.metrics['charts/success_rate'].toFixed(2)}${evalText} real ${trainer.realSteps} dream ${trainer.dreamSteps}`);
  }
  bar.end();
  const evaluation = await trainer.evaluate(trainer.config.finalEvalEpisodes);
  const summary = {
    preset: trainer.config.preset, mode: trainer.config.mode, algo: trainer.config.algo, seed: trainer.config.seed,
    real_steps: trainer.realSteps, dream_steps: trainer.dreamSteps, iterations: trainer.iteration,
    ...(trainer.config.mode !== 'real' ? { llm: trainer.config.llm, experience_model: deps.experienceModel?.label, invalid_rate: round(invalidRate(metricsPath), 4) } : {}),
    ...(deps.taskGenerator ? { task_generator: { label: deps.taskGenerator.label, ...deps.taskGenerator.stats } } : {}),
    eval: { success: round(evaluation.success), score: round(evaluation.score), episodes: evaluation.episodes },
    wall_seconds: round((performance.now() - started) / 1000, 1), backend: backend.backend, out,
  };
  writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  trainer.dispose();
  if (o.json) printJsonLast(summary);
  else console.log(`held-out success ${summary.eval.success} (score ${summary.eval.score}, ${summary.eval.episodes} tasks) after ${summary.real_steps} real steps; run in ${out}`);
}

/** Mean dream/invalid_rate over the run's dream iterations (0 when none). */
function invalidRate(metricsPath: string): number {
  const rates = readFileSync(metricsPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)['dream/invalid_rate']).filter((x) => typeof x === 'number');
  return rates.length ? rates.reduce((a: number, b: number) => a + b, 0) / rates.length : 0;
}

/**
 * The run's parts (buildRunParts) and, for dream and s2r runs, a replay buffer in OUT/buffer
 * (seeded once from the env's shipped offline dataset; dreamed and real transitions are added as
 * the run goes). The clock gives the perf/* metrics.
 */
async function trainerDeps(config: TrainConfig, out: string): Promise<TrainerDeps> {
  const buffer = config.mode === 'real' ? undefined : await runBuffer(config.env, out);
  const parts = await buildRunParts(config, { ...nodeEngineDeps(), ...(buffer ? { buffer } : {}) });
  return { ...parts, ...(buffer ? { buffer, now: () => Date.now() } : {}), clock: () => performance.now() };
}

async function runBuffer(envId: string, out: string): Promise<ReplayBuffer> {
  mkdirSync(out, { recursive: true });
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(out, 'buffer')));
  if ((await buffer.stats()).transitions === 0) {
    await buffer.importTrajectories(await loadSeedDataset(envId, readPublicFile), { source: 'offline', createdAt: Date.now() });
  }
  return buffer;
}

/** perf/* (wall-clock, rounded for reading) apart from the reproducible metrics. */
function splitPerf(metrics: Record<string, number>): { perf: Record<string, number>; rest: Record<string, number> } {
  const perf: Record<string, number> = {}, rest: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics)) {
    if (key.startsWith('perf/')) perf[key] = round(value, key === 'perf/iteration_seconds' ? 3 : 1);
    else rest[key] = value;
  }
  return { perf, rest };
}

function roundAll(metrics: Record<string, number>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, Number.isFinite(v) ? round(v, 6) : null]));
}

export const evalCommand: CommandSpec = {
  name: 'eval',
  summary: 'evaluate a run\'s checkpoint on held-out real tasks',
  usage: 'dreamgym eval --run DIR [--episodes N] [--json]',
  options: {
    run: { type: 'string', description: 'run folder written by train' },
    episodes: { type: 'integer', description: 'held-out tasks', default: 200 },
    backend: { type: 'string', description: 'tfjs backend', choices: ['wasm', 'cpu'], default: 'wasm' },
    json: { type: 'boolean', description: 'print the result as JSON on the last line' },
  },
};

export async function runEval(args: ParsedArgs): Promise<void> {
  const o = args.options as { run?: string; episodes: number; backend: 'wasm' | 'cpu'; json?: boolean };
  if (!o.run) throw new Error('eval needs --run DIR (a folder written by train).');
  await initBackend(o.backend);
  const state = await new FolderCheckpointStore(join(o.run, 'checkpoint')).load();
  if (!state) throw new Error(`No checkpoint in ${join(o.run, 'checkpoint')}: train first, or check the folder.`);
  // Evaluation plays the real env with the policy (and its LLM prior, if it trained with one):
  // no dream and no task generation, so a dream or s2r checkpoint restores as a real-mode trainer.
  const asReal = { mode: 'real', curriculumVariations: 'procedural' } as const;
  const trainer = await Trainer.restore(state, asReal, await trainerDeps({ ...state.config, ...asReal }, o.run));
  const evaluation = await trainer.evaluate(o.episodes);
  trainer.dispose();
  const result = { run: o.run, preset: state.config.preset, algo: state.config.algo, iteration: state.iteration,
    eval: { success: round(evaluation.success), score: round(evaluation.score), episodes: evaluation.episodes } };
  if (o.json) printJsonLast(result);
  else console.log(`${o.run}: held-out success ${result.eval.success}, score ${result.eval.score} over ${result.eval.episodes} tasks`);
}
