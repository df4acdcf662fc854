/**
 * The shipped learned experience models (public/models/<env>/model.json + weights.bin) are part
 * of the offline shell, so the page dreams with them offline and with no download; LLM weights
 * never are.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellManifest } from '../../../src/sw/plugin';
import { isShippedLearnedModelPath, MAX_SHELL_FILE_BYTES, shellExclusion, strategyFor } from '../../../src/sw/shell';

const SCOPE = 'http://127.0.0.1:4173/';

describe('shipped learned models in the offline shell', () => {
  it('recognises exactly the two files of models/<env>/', () => {
    expect(isShippedLearnedModelPath('models/webshop-lite-v0/model.json')).toBe(true);
    expect(isShippedLearnedModelPath('models/household-v0/weights.bin?v=2')).toBe(true);
    for (const path of [
      'models/a.gguf',
      'models/x/params_shard_0.bin',
      'models/x/y/model.json',
      'model.json',
      'assets/models/x/weights.bin',
      'models/../weights.bin',
    ]) {
      expect(isShippedLearnedModelPath(path), path).toBe(false);
    }
    expect(shellExclusion('models/webshop-lite-v0/weights.bin', 3_000_000)).toBeNull();
    expect(shellExclusion('models/webshop-lite-v0/model.json', 200_000)).toBeNull();
    expect(shellExclusion('models/webshop-lite-v0/weights.bin', MAX_SHELL_FILE_BYTES + 1)).toMatch(
      /shipped learned model file larger than/,
    );
    expect(shellExclusion('models/tiny.gguf', 10)).toMatch(/model weights/);
  });

  it('the build precaches them and the service worker answers them from the cache', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-models-'));
    try {
      mkdirSync(join(dir, 'assets'));
      mkdirSync(join(dir, 'models', 'webshop-lite-v0'), { recursive: true });
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      writeFileSync(join(dir, 'assets', 'index-1.js'), 'x');
      writeFileSync(join(dir, 'models', 'webshop-lite-v0', 'model.json'), '{}');
      writeFileSync(join(dir, 'models', 'webshop-lite-v0', 'weights.bin'), new Uint8Array(64));
      writeFileSync(join(dir, 'models', 'llm.gguf'), 'gguf');
      const { manifest, skipped } = shellManifest(dir);
      expect(manifest.files).toEqual([
        'assets/index-1.js',
        'index.html',
        'models/webshop-lite-v0/model.json',
        'models/webshop-lite-v0/weights.bin',
      ]);
      expect(skipped).toEqual(['models/llm.gguf (model weights (the engines cache them))']);
      const shell = new Set(manifest.files);
      expect(
        strategyFor({ url: `${SCOPE}models/webshop-lite-v0/weights.bin`, method: 'GET', mode: 'cors' }, SCOPE, shell),
      ).toBe('cache-first');
      expect(
        strategyFor({ url: `${SCOPE}models/webshop-lite-v0/model.json`, method: 'GET', mode: 'cors' }, SCOPE, shell),
      ).toBe('cache-first');
      // A model this build does not ship: the network, else a 404 (the page's question has an answer offline).
      expect(
        strategyFor({ url: `${SCOPE}models/household-v0/model.json`, method: 'GET', mode: 'cors' }, SCOPE, shell),
      ).toBe('network-or-404');
      expect(strategyFor({ url: `${SCOPE}models/other.bin`, method: 'GET', mode: 'cors' }, SCOPE, shell)).toBe(
        'pass-through',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
