/**
 * The GGUF header reader on files built byte by byte: the three keys the engine needs, every other
 * value skipped (a string array included), and an error naming what a file is when it is not GGUF.
 */
import { describe, expect, it } from 'vitest';
import { readGgufHeader } from '../../../src/core/llm/gguf-header';

const STRING = 8;
const ARRAY = 9;
const UINT32 = 4;

/** Little-endian bytes of a GGUF file's header: magic, version, tensor count, then the key–value pairs. */
class GgufBytes {
  readonly parts: number[] = [];
  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.parts.push((v >>> (8 * i)) & 0xff);
    return this;
  }
  u64(v: number): this {
    return this.u32(v).u32(0);
  }
  str(s: string): this {
    const bytes = new TextEncoder().encode(s);
    this.u64(bytes.length).parts.push(...bytes);
    return this;
  }
  header(version: number, pairs: number): this {
    return this.u32(0x46554747).u32(version).u64(0).u64(pairs);
  }
  file(name = 'model.gguf'): File {
    return new File([new Uint8Array(this.parts)], name);
  }
}

describe('readGgufHeader', () => {
  it('reads the architecture, the name and whether a chat template is there, skipping the rest', async () => {
    const bytes = new GgufBytes()
      .header(3, 5)
      .str('general.architecture')
      .u32(STRING)
      .str('llama')
      .str('tokenizer.ggml.tokens')
      .u32(ARRAY)
      .u32(STRING)
      .u64(3)
      .str('<s>')
      .str('a')
      .str('b')
      .str('llama.context_length')
      .u32(UINT32)
      .u32(2048)
      .str('general.name')
      .u32(STRING)
      .str('stories260K')
      .str('tokenizer.chat_template')
      .u32(STRING)
      .str('{{ messages }}');
    expect(await readGgufHeader(bytes.file())).toEqual({
      version: 3,
      tensorCount: 0,
      architecture: 'llama',
      name: 'stories260K',
      hasChatTemplate: true,
    });
    const plain = new GgufBytes().header(2, 1).str('general.architecture').u32(STRING).str('gpt2');
    expect(await readGgufHeader(plain.file())).toEqual({
      version: 2,
      tensorCount: 0,
      architecture: 'gpt2',
      hasChatTemplate: false,
    });
  });

  it('says what a file is when it is not GGUF', async () => {
    const text = (s: string, name: string) => new File([s.padEnd(64, ' ')], name);
    await expect(readGgufHeader(text('<!DOCTYPE html><html>', 'model.gguf'))).rejects.toThrow(
      /model\.gguf is not a GGUF model \(it starts like an HTML page/,
    );
    await expect(readGgufHeader(text('{"architectures": ["X"]}', 'config.json'))).rejects.toThrow(
      /it is JSON: a config or tokenizer file/,
    );
    await expect(readGgufHeader(text('PK\u0003\u0004', 'model.zip'))).rejects.toThrow(/ZIP archive/);
    await expect(readGgufHeader(new File(['GGUF'], 'cut.gguf'))).rejects.toThrow(/only 4 bytes/);
  });

  it('refuses an unknown version and a header cut short, saying so', async () => {
    await expect(readGgufHeader(new GgufBytes().header(4, 0).file())).rejects.toThrow(/Unsupported GGUF version 4/);
    const cut = new GgufBytes().header(3, 2).str('general.architecture').u32(STRING).u64(1000);
    await expect(readGgufHeader(cut.file())).rejects.toThrow(/looks truncated .* at byte \d+ of 64\)/);
  });
});
