/**
 * Trains the shipped learned experience models, public/models/<env>/ (model.json + weights.bin),
 * from the shipped datasets (public/datasets/<env>.jsonl) with fixed settings and seeds:
 *
 *   npm run models                 # both environments
 *   npm run models -- --env household-v0
 *
 * Training is deterministic for a given backend (wasm here), so the same command makes the same
 * weights. The page dreams with these out of the box; retraining on the page is the next lesson.
 */
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { builtInDomainCard } from '../src/core/experience/domain-card';
import { learnedTrainOptions, trainLearnedModel } from '../src/core/experience/learned/train-model';
import { bufferFromTrajectories } from '../src/core/experience/seed-buffer';
import { loadSeedDataset, SEED_DATASET_ENVS } from '../src/core/data/seed-datasets';
import { initBackend } from '../src/core/policy/backend';
import { PUBLIC_DIR, readPublicFile } from '../src/node/edge';
import { writeModelFolder } from '../src/node/model-folder';

/** The settings of the shipped models (kept here so `npm run models` is the whole recipe). */
export const SHIPPED_MODEL_SETTINGS = {
  'webshop-lite-v0': { epochs: 10, seed: 0 },
  'household-v0': { epochs: 6, seed: 0 },
} as const;

const { values } = parseArgs({ options: { env: { type: 'string' } } });
const envs = values.env ? [values.env] : [...SEED_DATASET_ENVS];
const backend = await initBackend('wasm');
console.log(`backend: ${backend.reason}`);
for (const env of envs) {
  const settings = SHIPPED_MODEL_SETTINGS[env as keyof typeof SHIPPED_MODEL_SETTINGS];
  const card = builtInDomainCard(env);
  if (!settings || !card)
    throw new Error(
      `No shipped model recipe for '${env}'; environments: ${Object.keys(SHIPPED_MODEL_SETTINGS).join(', ')}.`,
    );
  const buffer = await bufferFromTrajectories(await loadSeedDataset(env, readPublicFile));
  const options = learnedTrainOptions({ name: env, fit: { epochs: settings.epochs, seed: settings.seed } });
  const started = performance.now();
  const result = await trainLearnedModel(buffer, env, card, options, {
    now: () => performance.now(),
    backend: backend.backend,
    onProgress: (e) => {
      if (e.kind === 'epoch')
        console.log(
          `${env} epoch ${e.record.epoch}: train ${e.record.trainLoss.toFixed(4)}, validation ${e.record.validationLoss.toFixed(4)}${e.best ? ' (best)' : ''}, ${e.record.seconds.toFixed(0)} s`,
        );
    },
  });
  const dir = join(PUBLIC_DIR, 'models', env);
  writeModelFolder(dir, result);
  console.log(
    `${env}: wrote ${dir} (${(result.weights.length / 1e6).toFixed(2)} MB weights, best epoch ${result.parsed.training.bestEpoch}) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  result.network.dispose();
  await buffer.store.close();
}
