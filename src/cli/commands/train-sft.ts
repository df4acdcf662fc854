/**
 * `train --mode sft`, the SFT baseline, and `train --sft`: behaviour cloning of the offline expert episodes
 * (core/train/sft.ts), written to OUT/sft.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBackend } from '../../core/tfjs/backend';
import { Trainer } from '../../core/train/loop';
import { behaviourCloning, DEFAULT_SFT_CONFIG, sftExamples } from '../../core/train/sft';
import { registeredEnvSchema } from '../../core/train/policy-schema';
import { FolderCheckpointStore } from '../../node/checkpoint-folder';
import { newRunIdentity, writeRunIdentity } from '../../node/run-identity';
import { UsageError } from '../args';
import { printJsonLast, progressBar, round } from '../output';
import { offlineTrajectories } from '../experience-options';
import { freshConfig, trainCommand, type TrainOptions } from './train-options';
import { claimRunFolder, SFT_FILE } from './run-folder';
import { evalSummary, finalEvaluations } from './eval';

/**
 * Behaviour cloning of the trainer's policy on the offline expert episodes (sft.ts), written to
 * OUT/sft.json: what the run started from (a --sft run) or all it did (--mode sft).
 */
export async function cloneOffline(trainer: Trainer, dataset: string | undefined, out: string) {
  const { config } = trainer;
  const sft = { ...DEFAULT_SFT_CONFIG, stepLimit: trainer.stepLimit, seed: config.seed };
  const examples = sftExamples(
    await offlineTrajectories(config.env, dataset, trainCommand),
    sft.sources,
    sft.stepLimit,
  );
  const bar = progressBar(`sft ${config.preset}`);
  const epochs = await behaviourCloning(trainer.policy, examples, sft, (r) =>
    bar.update(r.epoch, sft.epochs, `loss ${r.loss.toFixed(3)} accuracy ${r.accuracy.toFixed(3)}`),
  );
  bar.end();
  const last = epochs[epochs.length - 1];
  const record = {
    from: 'sft',
    sources: sft.sources,
    examples: examples.length,
    epochs: sft.epochs,
    learning_rate: sft.learningRate,
    loss: round(last.loss, 4),
    accuracy: round(last.accuracy, 4),
    ...(dataset !== undefined ? { offline_dataset: dataset } : {}),
  };
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, SFT_FILE), JSON.stringify(record, null, 2) + '\n');
  return record;
}

/**
 * `train --mode sft`: the SFT baseline. The policy is cloned from the offline expert episodes (no
 * RL, no environment steps), saved as a run's checkpoint (so `eval --run` plays it) and evaluated.
 */
export async function runSftOnly(o: TrainOptions, settings: Record<string, unknown>): Promise<void> {
  const refused = ['resume', 'llm', 'estimate', 'sft', 'curriculum', 'algo'].filter(
    (k) => o[k as keyof TrainOptions] !== undefined,
  );
  if (refused.length)
    throw new UsageError(
      `--mode sft clones the offline data and trains nothing else: drop --${refused.join(', --')}.`,
      trainCommand,
    );
  const config = freshConfig({ ...o, mode: 'real', curriculum: false }, settings);
  const out = o.out ?? join('runs', `${config.preset}-sft-${config.seed}`);
  claimRunFolder(out, o.force === true);
  const backend = await initBackend(o.backend);
  process.stderr.write(`backend: ${backend.reason}\n`);
  mkdirSync(out, { recursive: true });
  const run = newRunIdentity(config);
  writeRunIdentity(out, run);
  const started = performance.now();
  const trainer = new Trainer(config, { featureSchema: await registeredEnvSchema(config.env) });
  try {
    const sft = await cloneOffline(trainer, o.dataset, out);
    await new FolderCheckpointStore(join(out, 'checkpoint'), { run }).save(await trainer.state());
    writeFileSync(join(out, 'config.json'), JSON.stringify(trainer.config, null, 2) + '\n');
    const { evaluation, dev } = await finalEvaluations(trainer, o.split);
    const summary = {
      ...{ preset: config.preset, mode: 'sft', seed: config.seed, real_steps: 0, dream_steps: 0, sft },
      eval: evalSummary(evaluation),
      ...(evaluation !== dev ? { eval_dev: evalSummary(dev) } : {}),
      ...{ wall_seconds: round((performance.now() - started) / 1000, 1), backend: backend.backend, out },
      config: trainer.config,
    };
    writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    if (o.json) printJsonLast(summary);
    else
      console.log(
        `SFT: held-out success ${summary.eval.success} (score ${summary.eval.score}, ${summary.eval.episodes} tasks ` +
          `of the ${summary.eval.split} split), cloned from ${sft.examples} expert steps; run in ${out}`,
      );
  } finally {
    trainer.dispose();
  }
}
