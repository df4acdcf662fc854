/**
 * GGUF model files the user picked from disk, kept in this site's Origin Private File System
 * (OPFS, `navigator.storage.getDirectory()/dreamgym-models/`) so that the trainer worker can open
 * them (a File picked on the page cannot be reopened by name elsewhere) and a reload keeps them.
 * Works on the page and in workers. Browsers without OPFS writes on the page (older Safari) get
 * OpfsUnavailableError: the page then hands the File to the worker directly, for this tab only.
 */
import { DreamGymError } from '../../core/errors';

const DIR = 'dreamgym-models';

export class OpfsUnavailableError extends DreamGymError {
  constructor(detail: string) {
    super(
      `This browser cannot keep model files in its private file system (OPFS: ${detail}); the picked file is used for this tab only — pick it again after a reload.`,
      {
        code: 'opfs-unavailable',
        fix: 'Pick the model file again after each reload: this browser keeps it for the tab only.',
      },
    );
    this.name = 'OpfsUnavailableError';
  }
}

export class ModelFileMissingError extends DreamGymError {
  constructor(name: string) {
    super(
      `The model file '${name}' is not stored in this browser (it was deleted, or the run came from another browser). Pick the .gguf file again on the Setup page (wllama → GGUF model file).`,
      { code: 'model-file-missing', fix: 'Pick the .gguf file again on the Setup page (wllama → GGUF model file).' },
    );
    this.name = 'ModelFileMissingError';
  }
}

export interface StoredModelFile {
  name: string;
  bytes: number;
  lastModified: number;
}

/** A name OPFS accepts: no path separators, not empty, not '.'/'..'. */
export function safeFileName(name: string): string {
  const cleaned = name.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
  return cleaned && cleaned !== '.' && cleaned !== '..' ? cleaned.slice(0, 200) : 'model.gguf';
}

async function directory(): Promise<FileSystemDirectoryHandle> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  if (!storage?.getDirectory) throw new OpfsUnavailableError('navigator.storage.getDirectory is missing');
  try {
    const root = await storage.getDirectory();
    return await root.getDirectoryHandle(DIR, { create: true });
  } catch (error) {
    throw new OpfsUnavailableError((error as Error).message ?? String(error));
  }
}

/** Copies a picked file into OPFS (replacing one of the same name); returns its stored name. */
export async function saveModelFile(file: File): Promise<StoredModelFile> {
  const dir = await directory();
  const name = safeFileName(file.name);
  const handle = await dir.getFileHandle(name, { create: true });
  if (typeof (handle as { createWritable?: unknown }).createWritable !== 'function') {
    await dir.removeEntry(name).catch(() => undefined);
    throw new OpfsUnavailableError('FileSystemFileHandle.createWritable is missing');
  }
  const writable = await handle.createWritable();
  try {
    await file.stream().pipeTo(writable);
  } catch (error) {
    await writable.abort().catch(() => undefined);
    await dir.removeEntry(name).catch(() => undefined);
    throw error;
  }
  const stored = await handle.getFile();
  return { name, bytes: stored.size, lastModified: stored.lastModified };
}

/** Opens a stored model file; throws ModelFileMissingError naming the fix. */
export async function openModelFile(name: string): Promise<File> {
  const dir = await directory();
  try {
    const handle = await dir.getFileHandle(safeFileName(name));
    return await handle.getFile();
  } catch (error) {
    if (
      (error as { name?: string }).name === 'NotFoundError' ||
      (error as { name?: string }).name === 'TypeMismatchError'
    )
      throw new ModelFileMissingError(name);
    throw error;
  }
}

export async function listModelFiles(): Promise<StoredModelFile[]> {
  const dir = await directory();
  const out: StoredModelFile[] = [];
  for await (const [name, handle] of (
    dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }
  ).entries()) {
    if (handle.kind !== 'file') continue;
    const file = await (handle as FileSystemFileHandle).getFile();
    out.push({ name, bytes: file.size, lastModified: file.lastModified });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

export async function deleteModelFile(name: string): Promise<void> {
  const dir = await directory();
  await dir.removeEntry(safeFileName(name)).catch((error: { name?: string }) => {
    if (error?.name !== 'NotFoundError') throw error;
  });
}
