/**
 * The learned experience models this page can dream with: the ones shipped with the app
 * (`learned:models/<env>`, when this build has them) and the ones trained in this browser
 * (`learned:local/<name>`, IndexedDB). One instance for the app (learnedModels()), read by the
 * Setup and Train pages' engine choices and the Experience model page's list.
 */
import type { ModelManifest } from '../../../core/experience/learned/model-file';
import { envIds } from '../../../core/envs/registry';
import { shippedModelUrl } from '../../workers/learned-url';
import { defaultLearnedStore } from '../../storage/learned-store';
import type { StoredModelSummary } from '../../storage/learned-store';
import { learnedPathLabel, learnedSpec } from './learned-path';

export interface ShippedModelInfo {
  env: string;
  modelName: string;
  trainEpisodes: number;
  bestValidationLoss: number;
  weightsBytes: number;
  /** What its verdict head was fitted on (verdict.ts), or null: the generator judges endings. */
  verdict: { successes: number; failures: number; balancedAccuracy: number } | null;
}

export interface LearnedOption {
  spec: string;
  label: string;
  where: 'shipped' | 'local';
  env: string;
}

/** A shipped model's manifest, or null when this build has none for `env`. */
export async function fetchShippedInfo(
  env: string,
  get: typeof fetch = globalThis.fetch.bind(globalThis),
  base?: string,
): Promise<ShippedModelInfo | null> {
  try {
    const response = await get(shippedModelUrl(env, 'model.json', base));
    if (!response.ok) return null;
    const text = await response.text();
    if (/^\s*</.test(text)) return null; // a server answering unknown paths with index.html
    const m = JSON.parse(text) as ModelManifest;
    if (m.env !== env || !m.training) return null;
    return {
      env,
      modelName: m.name,
      trainEpisodes: m.training.data.trainEpisodes,
      bestValidationLoss: m.training.bestValidationLoss,
      weightsBytes: m.weightsFile.bytes,
      verdict: m.verdict?.fittedOn ?? null,
    };
  } catch {
    return null;
  }
}

/** The engine options for an env: its shipped model first, then the ones trained here (newest first). */
export function learnedOptionsFor(
  env: string,
  shipped: ShippedModelInfo | null | undefined,
  local: readonly StoredModelSummary[],
): LearnedOption[] {
  const out: LearnedOption[] = [];
  if (shipped) {
    out.push({
      spec: learnedSpec({ where: 'shipped', env }),
      where: 'shipped',
      env,
      label: `${learnedPathLabel({ where: 'shipped', env })} (${shipped.trainEpisodes} training episodes)`,
    });
  }
  for (const m of local) {
    if (m.env !== env) continue;
    out.push({
      spec: learnedSpec({ where: 'local', name: m.name }),
      where: 'local',
      env,
      label:
        `${learnedPathLabel({ where: 'local', name: m.name })} (${m.trainEpisodes} training episodes, ` +
        `${m.epochsPlanned ? `${m.epochs} of ${m.epochsPlanned} epochs, stopped` : `${m.epochs} epochs`})`,
    });
  }
  return out;
}

export class LearnedModels {
  local = $state.raw<StoredModelSummary[]>([]);
  /** Per env: the shipped model's info, null when this build has none, absent until checked. */
  shipped = $state.raw<Record<string, ShippedModelInfo | null>>({});
  error = $state<string | null>(null);
  /** The first refresh is done: `shipped` and `local` are known (engine.ts dreamEngine waits for it). */
  checked = $state(false);
  /** The one check of the shipped models (a second refresh awaits the same one). */
  private shippedCheck: Promise<void> | null = null;

  async refresh(): Promise<void> {
    this.error = null;
    try {
      this.local = await defaultLearnedStore().listModels();
    } catch (error) {
      this.error = `Could not read the learned models stored in this browser: ${(error as Error).message}`;
    }
    this.shippedCheck ??= (async () => {
      const found: Record<string, ShippedModelInfo | null> = {};
      for (const env of envIds()) found[env] = await fetchShippedInfo(env);
      this.shipped = found;
    })();
    await this.shippedCheck;
    this.checked = true;
  }

  /** The envs this build ships a learned model for; null until checked. */
  get shippedEnvs(): string[] | null {
    return this.checked ? Object.keys(this.shipped).filter((env) => this.shipped[env]) : null;
  }

  /** The models trained in this browser (name, env); null until read. */
  get localModels(): { name: string; env: string }[] | null {
    return this.checked ? this.local.map((m) => ({ name: m.name, env: m.env })) : null;
  }

  options(env: string): LearnedOption[] {
    return learnedOptionsFor(env, this.shipped[env], this.local);
  }

  async remove(name: string): Promise<void> {
    await defaultLearnedStore().deleteModel(name);
    await this.refresh();
  }
}

let instance: LearnedModels | null = null;

export function learnedModels(): LearnedModels {
  instance ??= new LearnedModels();
  return instance;
}
