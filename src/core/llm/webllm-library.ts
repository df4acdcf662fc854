/**
 * The web-llm library, imported once on first use (webllm.ts; docs/architecture.md §2.3), and the model files it
 * keeps in the browser's cache: whether a model is cached, and deleting it.
 */
import type { AppConfig, ModelRecord } from '@mlc-ai/web-llm';
import { LlmError } from './types';
import { absoluteUrl, errorText } from './helpers';
import { modelNotFoundError } from './webllm-errors';

type WebLlmModule = typeof import('@mlc-ai/web-llm');

let webLlmModule: Promise<WebLlmModule> | undefined;

/** The web-llm module, imported once on first use (keeps 6 MB out of the main chunk). */
export function importWebLlm(): Promise<WebLlmModule> {
  webLlmModule ??= import('@mlc-ai/web-llm').catch((error) => {
    webLlmModule = undefined;
    throw new LlmError(
      `Could not load the WebLLM library (${errorText(error)}); reload the page (a new version may have been deployed) or check the network.`,
      'load-failed',
      { cause: error },
    );
  });
  return webLlmModule;
}

const CACHE_SCOPES = ['webllm/config', 'webllm/model', 'webllm/wasm'] as const;

/**
 * Whether the model's weights are fully cached (web-llm's hasModelInCache). Pass the same
 * appConfig as for load(). A corrupt (e.g. HTML) cached manifest counts as not cached.
 */
export async function hasModelInCache(modelId: string, appConfig?: AppConfig): Promise<boolean> {
  const webllm = await importWebLlm();
  try {
    return await webllm.hasModelInCache(modelId, appConfig);
  } catch {
    return false;
  }
}

/**
 * Deletes everything cached for the model: config, weights, tokenizer, wasm. With the Cache API
 * backend (the default) every entry under the model's URL is removed directly — web-llm's own
 * deleteModelInCache first reads tensor-cache.json, which fails on a poisoned (HTML) entry and
 * downloads the file when it is missing. Other backends use web-llm's helpers one by one.
 * @returns how many entries were removed (Cache API backend; 0 otherwise)
 */
export async function deleteModelFromCache(modelId: string, appConfig?: AppConfig): Promise<{ removed: number }> {
  const webllm = await importWebLlm();
  const config = appConfig ?? webllm.prebuiltAppConfig;
  const record = config.model_list.find((r) => r.model_id === modelId);
  if (!record) throw modelNotFoundError(modelId, config);
  const backend = config.cacheBackend ?? 'cache';
  if ((backend === 'cache' || backend === 'cross-origin') && typeof caches !== 'undefined') {
    return { removed: await sweepCacheStorage(record) };
  }
  const problems: string[] = [];
  for (const remove of [webllm.deleteChatConfigInCache, webllm.deleteModelWasmInCache, webllm.deleteModelInCache]) {
    try {
      await remove(modelId, config);
    } catch (error) {
      problems.push(errorText(error));
    }
  }
  if (problems.length === 3) throw new Error(problems.join('; '));
  return { removed: 0 };
}

async function sweepCacheStorage(record: ModelRecord): Promise<number> {
  const base = modelBaseUrl(record.model);
  const lib = absoluteUrl(record.model_lib);
  let removed = 0;
  for (const scope of CACHE_SCOPES) {
    if (!(await caches.has(scope))) continue;
    const cache = await caches.open(scope);
    for (const key of await cache.keys()) {
      if ((base !== undefined && key.url.startsWith(base)) || (lib !== undefined && key.url === lib)) {
        if (await cache.delete(key)) removed++;
      }
    }
  }
  return removed;
}

/** web-llm's cleanModelUrl: '…/MODEL' → '…/MODEL/resolve/main/' unless it already has /resolve/x/. */
function modelBaseUrl(model: string): string | undefined {
  let url = model.endsWith('/') ? model : `${model}/`;
  if (!/.+\/resolve\/.+\//.test(url)) url += 'resolve/main/';
  return absoluteUrl(url);
}
