/**
 * `dreamgym train`: real-environment policy-gradient training with metrics.jsonl, summary.json, run.json (the
 * run's identity) and a checkpoint after every iteration (resumable with --resume). `--mode sft` is the SFT
 * baseline (behaviour cloning of the offline expert episodes, no RL: train-sft.ts); `--sft` starts a run from
 * that policy. A final evaluation plays the dev held-out tasks, or with `--split test` the test ones too
 * (eval.ts). Its options and how they become the run's config: train-options.ts; its folder: run-folder.ts.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../../core/tfjs/backend';
import { SETTING_NAMES, type TrainConfig } from '../../core/train/config';
import { Trainer, type TrainerDeps, type TrainerState } from '../../core/train/loop';
import { dreamWarnings } from '../../core/train/dream-health';
import { rolloutSuccess } from '../../core/train/metrics';
import { EngineFailureError } from '../../core/experience/engine-failures';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { newRunIdentity, readRunIdentity, writeRunIdentity } from '../../node/run-identity';
import { UsageError, type ParsedArgs } from '../args';
import { printJsonLast, progressBar, round } from '../output';
import { formatDuration, formatProgressLine, ProgressMeter } from '../../core/train/progress';
import { describeEstimate, estimateDreamCost } from '../../core/train/estimate';
import { parseSettings } from '../settings';
import {
  defaultRunFolder,
  freshConfig,
  resumedConfig,
  runFolder,
  settingsAsOptions,
  trainCommand,
  type TrainOptions,
} from './train-options';
import { claimRunFolder, invalidRate, readHistory, roundAll, SFT_FILE, splitPerf, trainerDeps } from './run-folder';
import { evalSummary, finalEvaluations } from './eval';
import { cloneOffline, runSftOnly } from './train-sft';
import { estimateOnly } from './train-estimate';

export async function runTrain(args: ParsedArgs): Promise<void> {
  const [o, settings] = settingsAsOptions(
    args.options as TrainOptions,
    parseSettings((args.options as TrainOptions).set, SETTING_NAMES, trainCommand),
  );
  if (o.mode === 'sft') return runSftOnly(o, settings);
  if (o.sft && o.resume)
    throw new UsageError(
      '--sft starts a new run from the SFT policy; a resumed run keeps its own. Drop --sft.',
      trainCommand,
    );
  if (o.force && o.resume)
    throw new UsageError('--resume continues the run in OUT and --force starts it over: give one.', trainCommand);
  const fresh = o.resume ? null : freshConfig(o, settings);
  const out = fresh ? (o.out ?? defaultRunFolder(fresh)) : runFolder(o);
  if (fresh) claimRunFolder(out, o.force === true);
  // A new run gets a new identity (written with its first checkpoint); a resumed one checks its checkpoint's.
  const run = fresh ? newRunIdentity(fresh) : readRunIdentity(out);
  const store = new FolderCheckpointStore(join(out, 'checkpoint'), run ? { run } : {});
  const state = o.resume ? await store.load() : null;
  if (o.resume && !state)
    throw new UsageError(
      `--resume: no checkpoint in ${join(out, 'checkpoint')}. Start the run without --resume first.`,
      trainCommand,
    );
  const config = state ? resumedConfig(o, settings, state, store.dir) : fresh!;
  if (config.mode === 'real' && o.llm && !config.llmPrior)
    process.stderr.write(`--llm ${o.llm} is not used: a real run without llmPrior asks no language model.\n`);
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  if (o.dataset !== undefined && config.mode === 'real' && !o.sft)
    throw new UsageError(
      '--dataset seeds the replay buffer of a dream (or the cloning of --sft): ' +
        'use it with --mode dream or s2r, or --sft.',
      trainCommand,
    );
  if (o.dataset !== undefined && state)
    throw new UsageError(
      `--dataset seeds a new run's buffer; the run in ${out} has its buffer already. Drop --dataset to resume it.`,
      trainCommand,
    );
  if (o.estimate) {
    await estimateOnly(config, o.dataset, o.json === true);
    return;
  }
  if (config.mode !== 'real' && !state) {
    process.stderr.write(
      `${describeEstimate(estimateDreamCost(config), formatDuration)} Every figure is an estimate; --estimate measures the engine's speed first.\n`,
    );
  }
  mkdirSync(out, { recursive: true });
  if (fresh && run) writeRunIdentity(out, run);
  const deps = await trainerDeps(config, out, o.dataset);
  try {
    await trainAndSummarize(o, { config, state, store, out, deps, backend: backend.backend });
  } finally {
    await deps.buffer?.store.close(); // releases OUT/buffer's writer lock
  }
}

interface RunSetup {
  config: TrainConfig;
  state: TrainerState | null;
  store: FolderCheckpointStore;
  out: string;
  deps: TrainerDeps;
  backend: string;
}

/** Trains to the end (or the engine's stop), checkpointing every iteration, then evaluates and writes summary.json. */
async function trainAndSummarize(o: TrainOptions, setup: RunSetup): Promise<void> {
  const { config, out } = setup;
  // Live progress inside an iteration (a language model can take minutes per iteration): a line on stderr.
  const meter = new ProgressMeter(() => performance.now(), config.iterations);
  const deps: TrainerDeps = { ...setup.deps, progress: meter };
  const trainer = await startTrainer(o, setup, deps);
  writeFileSync(join(out, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
  const started = performance.now();
  await trainToEnd(trainer, setup.store, out, liveLine(meter, o.progress ?? (process.stderr.isTTY ? 1 : 10)));
  const { evaluation, dev } = await finalEvaluations(trainer, o.split);
  // A degenerate dream is never reported as a plain success (dream-health.ts): said on stderr and in the summary.
  const warnings = dreamWarnings(readHistory(join(out, 'metrics.jsonl'))).map((w) => w.message);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  const summary = {
    ...runFigures(trainer, deps, o.dataset, out),
    eval: evalSummary(evaluation),
    ...(evaluation !== dev ? { eval_dev: evalSummary(dev) } : {}),
    wall_seconds: round((performance.now() - started) / 1000, 1),
    backend: setup.backend,
    out,
    ...(warnings.length > 0 ? { warnings } : {}),
    // What ran, every field: the preset, the options and --set, as the run used them.
    config: trainer.config,
  };
  writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  trainer.dispose();
  if (o.json) printJsonLast(summary);
  else
    console.log(
      `held-out success ${summary.eval.success} (score ${summary.eval.score}, ${summary.eval.episodes} tasks ` +
        `of the ${summary.eval.split} split) after ${summary.real_steps} real steps; run in ${out}`,
    );
}

/**
 * The run's trainer: restored from its checkpoint (metrics.jsonl cut back to it), or new (from the SFT policy
 * with --sft) with iteration 0 saved as a checkpoint.
 */
async function startTrainer(o: TrainOptions, { config, state, store, out }: RunSetup, deps: TrainerDeps) {
  const metricsPath = join(out, 'metrics.jsonl');
  if (state) {
    const trainer = await Trainer.restore(state, config, deps);
    // Keep the metrics of the iterations the checkpoint covers, drop any written after it.
    const kept = existsSync(metricsPath)
      ? readFileSync(metricsPath, 'utf8').split('\n').filter(Boolean).slice(0, state.iteration)
      : [];
    writeFileSync(metricsPath, kept.map((l) => l + '\n').join(''));
    return trainer;
  }
  const trainer = new Trainer(config, deps);
  if (o.sft) await cloneOffline(trainer, o.dataset, out);
  else rmSync(join(out, SFT_FILE), { force: true }); // a new run in an old folder did not start from its SFT
  writeFileSync(metricsPath, '');
  // Iteration 0 is a checkpoint too: a run stopped in its first iteration (the engine down) resumes from it.
  await store.save(await trainer.state());
  return trainer;
}

/** The iterations left, each written to metrics.jsonl and perf.jsonl and checkpointed, with a progress bar. */
async function trainToEnd(
  trainer: Trainer,
  store: FolderCheckpointStore,
  out: string,
  live: ReturnType<typeof liveLine>,
): Promise<void> {
  const metricsPath = join(out, 'metrics.jsonl');
  const perfPath = join(out, 'perf.jsonl');
  const bar = progressBar(`train ${trainer.config.preset} ${trainer.config.algo}`);
  while (!trainer.finished) {
    live.iterating = true;
    const record = await trainer.runIteration().catch((error: unknown) => {
      live.stop();
      throw stoppedRun(error, trainer, out);
    });
    live.iterating = false;
    live.clear();
    // Wall-clock figures (perf/*) go to perf.jsonl so metrics.jsonl stays identical run to run.
    const { perf, rest } = splitPerf(record.metrics);
    appendFileSync(metricsPath, JSON.stringify({ iteration: record.iteration, ...roundAll(rest) }) + '\n');
    appendFileSync(perfPath, JSON.stringify({ iteration: record.iteration, ...perf }) + '\n');
    await store.save(await trainer.state());
    const evalText =
      record.metrics['eval/success_rate'] !== undefined
        ? ` eval ${record.metrics['eval/success_rate'].toFixed(2)}`
        : '';
    bar.update(
      record.iteration,
      Math.max(record.iteration, trainer.config.iterations),
      `${successText(record.metrics)}${evalText} real ${trainer.realSteps} dream ${trainer.dreamSteps}`,
    );
  }
  live.stop();
  bar.end();
}

/** summary.json's head: what the run was and did (its steps, its engine, what it started from). */
function runFigures(trainer: Trainer, deps: TrainerDeps, dataset: string | undefined, out: string) {
  const { config } = trainer;
  const sftPath = join(out, SFT_FILE);
  return {
    preset: config.preset,
    mode: config.mode,
    algo: config.algo,
    seed: config.seed,
    real_steps: trainer.realSteps,
    dream_steps: trainer.dreamSteps,
    iterations: trainer.iteration,
    ...(config.mode !== 'real'
      ? {
          llm: config.llm,
          experience_model: deps.experienceModel?.label,
          invalid_rate: round(invalidRate(join(out, 'metrics.jsonl')), 4),
        }
      : {}),
    ...(dataset !== undefined ? { offline_dataset: dataset } : {}),
    ...(existsSync(sftPath) ? { started_from: JSON.parse(readFileSync(sftPath, 'utf8')) } : {}),
    ...(deps.taskGenerator ? { task_generator: { label: deps.taskGenerator.label, ...deps.taskGenerator.stats } } : {}),
  };
}

/** The progress bar's success figure, named by who judged it: the real env, or the dream (never both under one name). */
function successText(metrics: Record<string, number>): string {
  const success = rolloutSuccess(metrics);
  if (!success) return 'real success — (every episode cut by the budget)';
  return success.judge === 'dream'
    ? `dream-judged success ${success.value.toFixed(2)}`
    : `real success ${success.value.toFixed(2)}`;
}

/**
 * The live progress line: every `seconds` while an iteration runs, on stderr — rewritten in place
 * on a terminal, one line each time otherwise (a log).
 */
function liveLine(meter: ProgressMeter, seconds: number): { iterating: boolean; clear(): void; stop(): void } {
  const tty = process.stderr.isTTY;
  const state = {
    iterating: false,
    clear() {
      if (tty) process.stderr.write('\r\x1b[K');
    },
    stop() {
      if (timer) clearInterval(timer);
      state.clear();
    },
  };
  const timer =
    seconds > 0
      ? setInterval(() => {
          if (!state.iterating) return;
          const line = formatProgressLine(meter.snapshot());
          process.stderr.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
        }, seconds * 1000)
      : null;
  timer?.unref();
  return state;
}

/** An engine that stopped answering ends the run with its checkpoint named (the last finished iteration's). */
function stoppedRun(error: unknown, trainer: Trainer, out: string): unknown {
  if (!(error instanceof EngineFailureError)) return error;
  trainer.dispose();
  return new Error(
    `${error.message}\nThe run stopped in iteration ${trainer.iteration + 1}; the checkpoint of iteration ${trainer.iteration} is in ` +
      `${join(out, 'checkpoint')}: once the server answers, continue with \`dreamgym train --resume --out ${out}\` ` +
      '(--set llmTimeoutMs=…,llmRetries=…,llmMaxFailures=… may change on resume).',
    { cause: error },
  );
}
