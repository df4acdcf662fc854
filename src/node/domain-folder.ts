/**
 * NODE ONLY (src/node/): uses node:fs. Nothing under src/core or the page may import this file.
 *
 * An imported domain as a folder (what `dreamgym domain import` writes and `domain train` reads):
 *
 *   <dir>/<name>/domain.json     the manifest: name, env id, card, tasks, held-out task ids, stats, warnings, split seed
 *   <dir>/<name>/card.json       the derived domain card on its own (to read or hand-edit)
 *   <dir>/<name>/train.jsonl     training episodes (our trajectory format)
 *   <dir>/<name>/held-out.jsonl  held-out episodes (our trajectory format)
 *   <dir>/<name>/buffer/         the replay buffer seeded with the training episodes (FolderBufferStore)
 *
 * The files are written under temporary names and renamed, the manifest last, so a folder with
 * a domain.json is complete.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ReplayBuffer, type ImportResult } from '../core/buffer/buffer';
import { parseTrajectoriesJsonl, trajectoriesToJsonl } from '../core/data/trajectory';
import type { Domain } from '../core/domain/domain';
import type { DomainCard } from '../core/experience/domain-card';
import { FolderBufferStore } from './buffer-folder';

export const DOMAIN_FORMAT = 'dreamgym-domain/1';
export const DEFAULT_DOMAIN_DIR = 'runs/domains';

/** The domain without its episodes (they are in train.jsonl and held-out.jsonl), and where it came from. */
export interface DomainManifest extends Omit<Domain, 'train' | 'heldOut'> {
  format: typeof DOMAIN_FORMAT;
  /** Where the episodes came from (file and format), for the record. */
  source?: { file: string; format: string };
  /** ms since epoch (given by the caller). */
  createdAt: number;
}

export class DomainFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DomainFolderError';
  }
}

export function domainPath(dir: string, name: string): string {
  return join(dir, name);
}

function writeAtomic(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/**
 * Writes the domain to `<dir>/<name>/` and seeds its buffer with the training episodes. An
 * existing domain of that name is an error unless `replace` (then its folder is removed first).
 */
export async function saveDomainFolder(
  domain: Domain,
  dir: string,
  options: { createdAt: number; replace?: boolean; source?: { file: string; format: string } },
): Promise<{ path: string; buffer: ImportResult }> {
  const path = domainPath(dir, domain.name);
  if (existsSync(join(path, 'domain.json')) && !options.replace) {
    throw new DomainFolderError(
      `A domain named '${domain.name}' already exists in ${path}. Choose another --name, or pass --replace to overwrite it.`,
    );
  }
  if (existsSync(path)) rmSync(path, { recursive: true, force: true });
  mkdirSync(path, { recursive: true });
  writeAtomic(join(path, 'train.jsonl'), trajectoriesToJsonl(domain.train));
  writeAtomic(join(path, 'held-out.jsonl'), trajectoriesToJsonl(domain.heldOut));
  writeAtomic(join(path, 'card.json'), JSON.stringify(domain.card, null, 2) + '\n');
  const buffer = new ReplayBuffer(await FolderBufferStore.open(join(path, 'buffer')));
  const imported = await buffer.importTrajectories(domain.train, { source: 'offline', createdAt: options.createdAt });
  await buffer.store.close();
  const manifest: DomainManifest = {
    format: DOMAIN_FORMAT,
    name: domain.name,
    envId: domain.envId,
    card: domain.card,
    tasks: domain.tasks,
    heldOutTaskIds: domain.heldOutTaskIds,
    stats: domain.stats,
    warnings: domain.warnings,
    seed: domain.seed,
    heldOutShare: domain.heldOutShare,
    ...(options.source ? { source: options.source } : {}),
    createdAt: options.createdAt,
  };
  writeAtomic(join(path, 'domain.json'), JSON.stringify(manifest, null, 2) + '\n');
  return { path, buffer: imported };
}

/** Reads `<dir>/<name>/` back into a Domain (the card from card.json, so a hand-edited card is used). */
export function loadDomainFolder(dir: string, name: string): Domain {
  const path = domainPath(dir, name);
  const manifestPath = join(path, 'domain.json');
  if (!existsSync(manifestPath)) {
    throw new DomainFolderError(
      `No domain named '${name}' in ${dir} (${manifestPath} is missing). Import it first: dreamgym domain import FILE --name ${name}${dir === DEFAULT_DOMAIN_DIR ? '' : ` --dir ${dir}`}`,
    );
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as DomainManifest;
  if (manifest.format !== DOMAIN_FORMAT) {
    throw new DomainFolderError(
      `${manifestPath} has format '${String(manifest.format)}', not '${DOMAIN_FORMAT}': not a domain folder this code wrote. Import the domain again.`,
    );
  }
  const knownEnvs = [manifest.envId];
  const read = (file: string) =>
    parseTrajectoriesJsonl(readFileSync(join(path, file), 'utf8'), { knownEnvs, sourceName: join(path, file) });
  const cardPath = join(path, 'card.json');
  const card = existsSync(cardPath) ? (JSON.parse(readFileSync(cardPath, 'utf8')) as DomainCard) : manifest.card;
  return {
    name: manifest.name,
    envId: manifest.envId,
    card,
    train: read('train.jsonl'),
    heldOut: read('held-out.jsonl'),
    tasks: manifest.tasks,
    heldOutTaskIds: manifest.heldOutTaskIds,
    stats: manifest.stats,
    warnings: manifest.warnings,
    seed: manifest.seed,
    heldOutShare: manifest.heldOutShare,
  };
}

/** The domain's buffer folder, opened to read (close its store when done). */
export async function openDomainBuffer(dir: string, name: string): Promise<ReplayBuffer> {
  return new ReplayBuffer(await FolderBufferStore.open(join(domainPath(dir, name), 'buffer'), { readOnly: true }));
}
