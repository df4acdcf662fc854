/**
 * NODE ONLY (src/node/): what the command line owns and hands to the core — the API key of an
 * openai: engine and the files of public/ (the shipped seed datasets).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunPartsDeps } from '../core/train/run-parts';
import { defaultDecodeThreads } from './workers/decode-pool';
import { loadModelFolder } from './model-folder';

/**
 * The API key of openai: engines: DREAMGYM_API_KEY, else OPENAI_API_KEY. The one rule for every
 * command; an empty (or blank) variable counts as unset, so DREAMGYM_API_KEY="" falls back.
 */
export function apiKeyFromEnv(env: Record<string, string | undefined> = process.env): string | undefined {
  const set = (value: string | undefined) => (value !== undefined && value.trim() !== '' ? value.trim() : undefined);
  return set(env.DREAMGYM_API_KEY) ?? set(env.OPENAI_API_KEY);
}

/** This checkout's public/ folder (what the page serves). */
export const PUBLIC_DIR = fileURLToPath(new URL('../../public/', import.meta.url));

/** A file of public/ by its path there (e.g. 'datasets/household-v0.jsonl'); null when there is none. */
export async function readPublicFile(path: string): Promise<string | null> {
  const file = join(PUBLIC_DIR, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

/**
 * What every command hands the run builder besides its own config and buffer: the API key (the
 * rule above) and the loader of learned:PATH models (a folder on disk), which decodes in
 * `decodeThreads` worker threads (default: one per core, at most two; the experiment runner,
 * which already runs one job per core, asks for one).
 */
export function nodeEngineDeps(
  options: { decodeThreads?: number } = {},
): Pick<RunPartsDeps, 'apiKey' | 'loadLearnedModel'> {
  const apiKey = apiKeyFromEnv();
  const threads = options.decodeThreads ?? defaultDecodeThreads();
  return {
    ...(apiKey ? { apiKey } : {}),
    loadLearnedModel: (path, load) => loadModelFolder(path, { ...load, threads }),
  };
}
