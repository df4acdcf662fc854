/**
 * The GGUF header of a model file, read before llama.cpp sees the bytes (wllama.ts): magic, version,
 * counts and the three metadata keys the engine needs, so a file that is not GGUF fails with an error
 * that says what it is (an HTML error page, a ZIP, safetensors, JSON) instead of a wasm abort.
 *
 * Why not @huggingface/gguf, the maintained GGUF parser: its `gguf()` reads a URL (HTTP range
 * requests) or, in Node, a local path, while the bytes here are a Blob (a File the user picked, or
 * wllama's OPFS cache); it decodes every metadata value, the tokenizer's vocabulary arrays of 100k+
 * strings included, where this reader skips all but three keys; it would add @huggingface/tasks to
 * the page's wllama chunk; and its errors ("not a valid gguf file: not starting with GGUF magic
 * number") do not say what the file is instead.
 */
import { LlmError } from './types';

/** What the GGUF header says (only what this engine needs). */
export interface GgufHeaderInfo {
  version: number;
  tensorCount: number;
  architecture?: string;
  name?: string;
  /** undefined when the metadata was too large to scan (the model's own template, if any, is used). */
  hasChatTemplate?: boolean;
}

const GGUF_MAGIC = 0x46554747; // 'GGUF' little-endian

/**
 * Reads the GGUF header of a model file: magic, version, counts and the metadata keys this engine
 * needs (architecture, name, whether a chat template is present). Throws LlmError('load-failed')
 * naming what the file is when it is not GGUF. Reads the metadata in 1 MiB slices, at most
 * `maxBytes` (64 MiB); beyond that `hasChatTemplate` is left undefined.
 */
export async function readGgufHeader(blob: Blob, maxBytes = 64 * 1024 * 1024): Promise<GgufHeaderInfo> {
  const reader = new SliceReader(blob);
  if (blob.size < 24) throw notGguf(blob, await reader.peekText(0, 16));
  const magic = await reader.u32();
  if (magic !== GGUF_MAGIC) throw notGguf(blob, await reader.peekText(0, 16));
  const version = await reader.u32();
  if (version < 1 || version > 3) {
    throw new LlmError(
      `Unsupported GGUF version ${version}; use a file written by a current llama.cpp (version 2 or 3).`,
      'load-failed',
    );
  }
  const tensorCount = Number(await reader.u64());
  const kvCount = Number(await reader.u64());
  const info: GgufHeaderInfo = { version, tensorCount };
  let hasChatTemplate = false;
  try {
    for (let i = 0; i < kvCount; i++) {
      if (reader.pos > maxBytes) return info;
      const key = await reader.str();
      const type = await reader.u32();
      if (type === 8 && (key === 'general.architecture' || key === 'general.name')) {
        const value = await reader.str();
        if (key === 'general.architecture') info.architecture = value;
        else info.name = value;
        continue;
      }
      if (key === 'tokenizer.chat_template' || key.startsWith('tokenizer.chat_template.')) {
        if (key === 'tokenizer.chat_template') hasChatTemplate = true;
      }
      await reader.skipValue(type);
    }
  } catch (error) {
    if (error instanceof RangeError) {
      throw new LlmError(
        `The GGUF file looks truncated (its metadata ends early at byte ${reader.pos} of ${blob.size}); download it again.`,
        'load-failed',
        { cause: error },
      );
    }
    throw error;
  }
  info.hasChatTemplate = hasChatTemplate;
  return info;
}

function notGguf(blob: Blob, start: string): LlmError {
  const name = (blob as File).name ? `${(blob as File).name} is` : 'The model file is';
  const what = /^\s*</.test(start)
    ? ' (it starts like an HTML page: probably an error page or a wrong URL)'
    : /^PK/.test(start)
      ? ' (it is a ZIP archive: unpack it first)'
      : start.charAt(8) === '{'
        ? ' (it looks like a safetensors file: convert it with llama.cpp first)'
        : /^\s*[{[]/.test(start)
          ? ' (it is JSON: a config or tokenizer file, not the model)'
          : blob.size < 24
            ? ` (only ${blob.size} bytes)`
            : '';
  return new LlmError(
    `${name} not a GGUF model${what}. wllama needs a .gguf file (llama.cpp format), e.g. a *-Q4_K_M.gguf from Hugging Face; convert other formats with llama.cpp's convert_hf_to_gguf.py.`,
    'load-failed',
  );
}

const GGUF_SCALAR_SIZE: Record<number, number> = {
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
};

/** Sequential little-endian reader over a Blob, fetching 1 MiB slices on demand. */
class SliceReader {
  pos = 0;
  #buf = new Uint8Array(0);
  #view = new DataView(this.#buf.buffer);
  #bufStart = 0;
  static readonly CHUNK = 1024 * 1024;

  constructor(private readonly blob: Blob) {}

  async #ensure(n: number): Promise<void> {
    if (this.pos >= this.#bufStart && this.pos + n <= this.#bufStart + this.#buf.length) return;
    if (this.pos + n > this.blob.size) throw new RangeError('past the end of the file');
    const end = Math.min(this.blob.size, this.pos + Math.max(n, SliceReader.CHUNK));
    this.#buf = new Uint8Array(await this.blob.slice(this.pos, end).arrayBuffer());
    this.#view = new DataView(this.#buf.buffer);
    this.#bufStart = this.pos;
  }

  async peekText(offset: number, n: number): Promise<string> {
    const bytes = new Uint8Array(await this.blob.slice(offset, Math.min(this.blob.size, offset + n)).arrayBuffer());
    return String.fromCharCode(...bytes);
  }

  async u32(): Promise<number> {
    await this.#ensure(4);
    const v = this.#view.getUint32(this.pos - this.#bufStart, true);
    this.pos += 4;
    return v;
  }

  async u64(): Promise<bigint> {
    await this.#ensure(8);
    const v = this.#view.getBigUint64(this.pos - this.#bufStart, true);
    this.pos += 8;
    return v;
  }

  async str(): Promise<string> {
    const len = Number(await this.u64());
    if (len > this.blob.size) throw new RangeError('string length past the end of the file');
    await this.#ensure(len);
    const start = this.pos - this.#bufStart;
    const s = new TextDecoder().decode(this.#buf.subarray(start, start + len));
    this.pos += len;
    return s;
  }

  async skip(n: number): Promise<void> {
    if (this.pos + n > this.blob.size) throw new RangeError('past the end of the file');
    this.pos += n;
  }

  async skipValue(type: number): Promise<void> {
    if (type === 8) {
      const len = Number(await this.u64());
      await this.skip(len);
      return;
    }
    if (type === 9) {
      const itemType = await this.u32();
      const count = Number(await this.u64());
      const size = GGUF_SCALAR_SIZE[itemType];
      if (size !== undefined) {
        await this.skip(size * count);
        return;
      }
      for (let i = 0; i < count; i++) await this.skipValue(itemType);
      return;
    }
    const size = GGUF_SCALAR_SIZE[type];
    if (size === undefined)
      throw new LlmError(
        `Unknown GGUF metadata type ${type}; the file is corrupt or from an unsupported llama.cpp version.`,
        'load-failed',
      );
    await this.skip(size);
  }
}
