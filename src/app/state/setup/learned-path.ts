/**
 * What `learned:PATH` means in the page (core's engine grammar leaves PATH to the caller; in Node
 * it is a folder):
 *
 *   learned:models/<env>     the model shipped with the app for <env> (public/models/<env>/, fetched
 *                            from the app itself, precached by the service worker: no download)
 *   learned:local/<name>     a model trained in this browser (Experience model page), kept in
 *                            IndexedDB (src/app/storage/learned-store.ts)
 *
 * Plain logic with no heavy imports (the Setup and Train pages label engines with it).
 */
import { DreamGymError } from '../../../core/errors';

export type LearnedPath = { where: 'shipped'; env: string } | { where: 'local'; name: string };

export const SHIPPED_PREFIX = 'models/';
export const LOCAL_PREFIX = 'local/';

/** A local model's name: letters, digits, '.', '_' and '-', starting with a letter or digit (it travels in URLs). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const ENV = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class LearnedPathError extends DreamGymError {
  constructor(message: string) {
    super(message, {
      code: 'learned-path-invalid',
      fix: 'Open learned:models/ENV (a shipped model) or learned:local/NAME (one trained in this browser).',
    });
    this.name = 'LearnedPathError';
  }
}

/** Why `name` cannot name a model in this browser, or null when it can. */
export function modelNameProblem(name: string): string | null {
  if (!name) return 'The model needs a name (letters, digits, ".", "_" or "-").';
  if (!NAME.test(name) || name.includes('..')) {
    return `'${name}' cannot name a model: use up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (it appears in links as learned:local/${name.replace(/[^A-Za-z0-9._-]/g, '-') || 'NAME'}).`;
  }
  return null;
}

export function parseLearnedPath(path: string): LearnedPath {
  const value = path.trim();
  if (value.startsWith(SHIPPED_PREFIX)) {
    const env = value.slice(SHIPPED_PREFIX.length).replace(/\/+$/, '');
    if (ENV.test(env) && !env.includes('..')) return { where: 'shipped', env };
  } else if (value.startsWith(LOCAL_PREFIX)) {
    const name = value.slice(LOCAL_PREFIX.length);
    const problem = modelNameProblem(name);
    if (problem) throw new LearnedPathError(`In 'learned:${value}': ${problem}`);
    return { where: 'local', name };
  }
  throw new LearnedPathError(
    `'learned:${value}' is not a model the page can open. In the page a learned model is learned:models/ENV ` +
      '(the one shipped with the app, e.g. learned:models/webshop-lite-v0) or learned:local/NAME (one trained in this browser on the ' +
      'Experience model page); a folder path such as learned:runs/m works from the command line only.',
  );
}

/** The PATH of a learned spec, or null when `spec` is not a page learned model. */
export function learnedPathOfSpec(spec: string): LearnedPath | null {
  if (!spec.trim().startsWith('learned:')) return null;
  try {
    return parseLearnedPath(spec.trim().slice('learned:'.length));
  } catch {
    return null;
  }
}

export function formatLearnedPath(path: LearnedPath): string {
  return path.where === 'shipped' ? `${SHIPPED_PREFIX}${path.env}` : `${LOCAL_PREFIX}${path.name}`;
}

export function learnedSpec(path: LearnedPath): `learned:${string}` {
  return `learned:${formatLearnedPath(path)}`;
}

/** How the UI names a learned model: always as a learned experience model, never as a chat model. */
export function learnedPathLabel(path: LearnedPath): string {
  return path.where === 'shipped'
    ? `learned experience model (tfjs, not a chat model): shipped for ${path.env}`
    : `learned experience model (tfjs, not a chat model): '${path.name}', trained in this browser`;
}
