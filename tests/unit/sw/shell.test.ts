import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { shellManifest } from '../../../src/sw/plugin';
import {
  cacheName,
  isModelWeightPath,
  parseManifest,
  shellExclusion,
  shellPath,
  staleCaches,
  strategyFor,
} from '../../../src/sw/shell';

const SCOPE = 'http://127.0.0.1:4173/';
const shell = new Set([
  'index.html',
  'assets/index-Ab12.js',
  'assets/tfjs-backend-wasm-simd-X.wasm',
  'datasets/manifest.json',
]);
const get = (url: string, mode = 'cors') => strategyFor({ url, method: 'GET', mode }, SCOPE, shell);

describe('the offline shell', () => {
  it('answers precached files from the cache, whatever their query', () => {
    expect(get(`${SCOPE}assets/index-Ab12.js`)).toBe('cache-first');
    expect(get(`${SCOPE}assets/tfjs-backend-wasm-simd-X.wasm?v=1`)).toBe('cache-first');
    expect(get(`${SCOPE}datasets/manifest.json`)).toBe('cache-first');
  });

  it('loads pages network-first (offline fallback: the cached index.html)', () => {
    expect(get(`${SCOPE}`, 'navigate')).toBe('navigation');
    expect(get(`${SCOPE}?env=household-v0#/train?seed=3`, 'navigate')).toBe('navigation');
  });

  it('leaves other origins, other methods, unknown files and model weights to the network', () => {
    expect(get('https://huggingface.co/mlc-ai/Qwen2.5-0.5B-Instruct-q4f16_1-MLC/resolve/main/params_shard_0.bin')).toBe(
      'pass-through',
    );
    expect(
      get('https://raw.githubusercontent.com/mlc-ai/binary-mlc-llm-libs/main/web-llm-models/v0_2_80/Qwen-webgpu.wasm'),
    ).toBe('pass-through');
    expect(get(`${SCOPE}models/tiny.gguf`)).toBe('pass-through');
    expect(get(`${SCOPE}assets/new-chunk.js`)).toBe('pass-through');
    expect(strategyFor({ url: `${SCOPE}index.html`, method: 'POST', mode: 'cors' }, SCOPE, shell)).toBe('pass-through');
    // A page outside the scope is not ours either.
    expect(
      strategyFor(
        { url: 'http://127.0.0.1:4173/other/', method: 'GET', mode: 'navigate' },
        'http://127.0.0.1:4173/app/',
        shell,
      ),
    ).toBe('pass-through');
  });

  it('recognises model weight files and never puts them in the shell', () => {
    for (const path of [
      'm/qwen-0.5b-q4_k_m.gguf',
      'params_shard_12.bin',
      'x/ndarray-cache.json',
      'mlc-chat-config.json',
      'tokenizer.json',
      'model.safetensors?download=1',
    ]) {
      expect(isModelWeightPath(path), path).toBe(true);
    }
    for (const path of [
      'assets/index-Ab12.js',
      'assets/tfjs-backend-wasm.wasm',
      'datasets/household-v0.jsonl',
      'datasets/manifest.json',
    ]) {
      expect(isModelWeightPath(path), path).toBe(false);
      expect(shellExclusion(path, 1000), path).toBeNull();
    }
    expect(shellExclusion('models/a.gguf', 10)).toMatch(/model weights/);
    expect(shellExclusion('sw.js', 10)).toMatch(/service worker/);
    expect(shellExclusion('assets/a.js.map', 10)).toMatch(/source map/);
    expect(shellExclusion('assets/huge.bin', 64 * 1024 * 1024)).toMatch(/larger than 32 MiB/);
  });

  it('maps URLs to shell paths and finds the caches of older builds', () => {
    expect(shellPath(`${SCOPE}assets/a%20b.js?x=1#y`, SCOPE)).toBe('assets/a b.js');
    expect(shellPath('http://h/app/index.html', 'http://h/app/')).toBe('index.html');
    expect(staleCaches([cacheName('aaaaaaaa'), cacheName('bbbbbbbb'), 'webllm/model', 'other'], 'bbbbbbbb')).toEqual([
      cacheName('aaaaaaaa'),
    ]);
  });

  it('rejects a malformed manifest with the fix', () => {
    expect(() => parseManifest({ version: 'xyz', files: ['index.html'] })).toThrow(/valid version.*npm run build/);
    expect(() => parseManifest({ version: 'abcdef12', files: ['a.js'] })).toThrow(/including index.html/);
    expect(parseManifest({ version: 'abcdef12', files: ['index.html'] })).toEqual({
      version: 'abcdef12',
      files: ['index.html'],
    });
  });

  it('lists a built folder with a content-hash version (the plugin)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dreamgym-shell-'));
    try {
      mkdirSync(join(dir, 'assets'));
      writeFileSync(join(dir, 'index.html'), '<!doctype html>');
      writeFileSync(join(dir, 'assets', 'index-Ab12.js'), 'console.log(1)');
      writeFileSync(join(dir, 'assets', 'index-Ab12.js.map'), '{}');
      writeFileSync(join(dir, 'weights.gguf'), 'GGUF');
      writeFileSync(join(dir, 'sw.js'), 'old worker');
      const first = shellManifest(dir);
      expect(first.manifest.files).toEqual(['assets/index-Ab12.js', 'index.html']);
      expect(first.skipped.join('\n')).toMatch(
        /index-Ab12\.js\.map \(a source map\)[\s\S]*weights\.gguf \(model weights/,
      );
      expect(first.manifest.version).toMatch(/^[0-9a-f]{16}$/);
      // The service worker itself does not change the version; any shell file does.
      writeFileSync(join(dir, 'sw.js'), 'new worker');
      expect(shellManifest(dir).manifest.version).toBe(first.manifest.version);
      writeFileSync(join(dir, 'assets', 'index-Ab12.js'), 'console.log(2)');
      expect(shellManifest(dir).manifest.version).not.toBe(first.manifest.version);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
