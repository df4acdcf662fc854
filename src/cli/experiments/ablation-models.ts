/**
 * Learned experience models for the Table 2 rows that remove retrieval or history at training
 * time too, not only at dream time (issue 30, item 3). Each is the base model's recipe with one
 * context setting changed: the network, context format and seed from the base model's manifest,
 * as many epochs as it ran, the default fit settings, a verdict head. Training is deterministic
 * (wasm), so a kept model is reused while its folder holds one; removing the folder re-makes it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtInDomainCard } from '../../core/experience/domain-card';
import type { FormatOptions } from '../../core/experience/learned/format';
import { MANIFEST_FILE, type ModelManifest } from '../../core/experience/learned/model-file';
import { learnedTrainOptions, trainLearnedModel } from '../../core/experience/learned/train-model';
import { bufferFromTrajectories } from '../../core/experience/seed-buffer';
import { loadSeedDataset } from '../../core/data/seed-datasets';
import type { BackendName } from '../../core/tfjs/backend';
import { readPublicFile } from '../../node/edge';
import { readModelFolder, writeModelFolder } from '../../node/model-folder';

/** The context settings a retrained ablation changes, by Table 2 row. */
export const RETRAINED_ABLATIONS = {
  'no-retrieval-trained': { k: 0 },
  'no-history-trained': { historyLength: 0 },
} as const satisfies Record<string, Partial<FormatOptions>>;

export type RetrainedAblation = keyof typeof RETRAINED_ABLATIONS;

/** Folder of `env`'s base model: `dir` itself, or `dir/<env>` for a folder of models by env. */
export function baseModelDir(dir: string, env: string): string {
  return existsSync(join(dir, env, MANIFEST_FILE)) ? join(dir, env) : dir;
}

/** The training options that remake `manifest`'s model with `change` applied to its context format. */
export function retrainOptions(manifest: ModelManifest, change: Partial<FormatOptions>, label: string) {
  const { vocabSize: _vocab, segments: _segments, ...shape } = manifest.network;
  return learnedTrainOptions({
    name: `${manifest.name} ${label}`,
    network: shape,
    // Training derives the fresh-id shape from its data (train-model.ts), as it did for the base model.
    format: { ...manifest.formatOptions, freshIds: null, ...change },
    fit: { epochs: manifest.training.epochs.length, seed: manifest.training.seed },
  });
}

/**
 * Trains the `ablation` model of `env` into `outDir/<env>` unless one is there; returns the folder
 * of models (for `learned:`). Learns from the env's shipped dataset, as the shipped models do.
 */
export async function ensureAblationModel(
  ablation: RetrainedAblation,
  baseDir: string,
  env: string,
  outDir: string,
  backend: BackendName,
  log: (line: string) => void,
): Promise<string> {
  const target = join(outDir, env);
  if (existsSync(join(target, MANIFEST_FILE))) return outDir;
  const card = builtInDomainCard(env);
  if (!card) throw new Error(`${ablation}: '${env}' has no built-in domain card; retrained ablations need one.`);
  const { manifest } = await readModelFolder(baseModelDir(baseDir, env));
  const options = retrainOptions(manifest, RETRAINED_ABLATIONS[ablation], ablation);
  const buffer = await bufferFromTrajectories(await loadSeedDataset(env, readPublicFile));
  log(`${ablation}: training ${options.name} (${options.fit.epochs} epochs) into ${target}`);
  const result = await trainLearnedModel(buffer, env, card, options, {
    now: () => performance.now(),
    backend,
    onProgress: (event) => {
      if (event.kind === 'epoch')
        log(`${ablation} epoch ${event.record.epoch}: validation loss ${event.record.validationLoss.toFixed(4)}`);
    },
  });
  writeModelFolder(target, result);
  result.network.dispose();
  log(`${ablation}: wrote ${target} in ${result.parsed.training.seconds.toFixed(0)} s`);
  return outDir;
}
