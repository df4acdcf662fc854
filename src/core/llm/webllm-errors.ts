/**
 * WebLLM's failures (webllm.ts) as LlmErrors whose message names the fix: a load's (no WebGPU, no shader-f16, out
 * of memory, offline, a file that came back as HTML, …) and a generation's, read from the "Name: message" text
 * web-llm's worker sends.
 */
import type { AppConfig } from '@mlc-ai/web-llm';
import { LlmError, type LlmErrorCode } from './types';
import { twinModelId } from './webllm-models';
import { errorText } from './helpers';

const FALLBACK_ENGINES =
  'use the wllama engine (CPU) or an OpenAI-compatible server (Ollama, vLLM, llama-server) instead';

/** Failures that say nothing about the cached files: keep a good download. */
export const KEEP_CACHE_ON = new Set<LlmErrorCode>([
  'no-webgpu',
  'no-shader-f16',
  'out-of-memory',
  'aborted',
  'model-not-found',
]);

/** A load failure (an Error, or the "Name: message" string web-llm's worker sends) → code + message naming the fix. */
export function classifyLoadError(modelId: string, error: unknown): { code: LlmErrorCode; message: string } {
  const text = errorText(error);
  const what = `Loading ${modelId} with WebLLM failed`;
  if (/WebGPUNotAvailableError|WebGPUNotFoundError|Unable to find a compatible GPU|navigator\.gpu/i.test(text)) {
    return {
      code: 'no-webgpu',
      message: `${what}: this browser has no usable WebGPU (${brief(text)}). Enable WebGPU (Chrome/Edge 113+, Safari 26+) or ${FALLBACK_ENGINES}.`,
    };
  }
  if (/ShaderF16SupportError|shader-f16|\bf16\b.*(extension|not supported|not enabled)/i.test(text)) {
    return { code: 'no-shader-f16', message: noShaderF16Error(modelId).message };
  }
  if (
    /DeviceLostError|device was lost|out of memory|\bOOM\b|QuotaExceeded.*GPU|Failed to allocate|allocation failed/i.test(
      text,
    )
  ) {
    return {
      code: 'out-of-memory',
      message: `${what}: the GPU ran out of memory (${brief(text)}). Pick a smaller model (listWebLlmModels() lists the ones that fit), a '-1k' variant, or a smaller chatOpts.context_window_size; close other GPU-heavy tabs.`,
    };
  }
  if (/Cannot initialize runtime because of requested/i.test(text)) {
    return {
      code: 'unsupported',
      message: `${what}: this GPU's WebGPU limits are too low for WebLLM (${brief(text)}); ${FALLBACK_ENGINES}.`,
    };
  }
  if (/ModelNotFoundError|Cannot find model record/i.test(text)) {
    return {
      code: 'model-not-found',
      message: `${what}: ${brief(text)} Pick an id from listWebLlmModels(), or add a model record to appConfig.`,
    };
  }
  if (/QuotaExceededError|quota/i.test(text)) {
    return {
      code: 'load-failed',
      message: `${what}: the browser has no room left to cache the model (${brief(text)}). Free disk space, delete other cached models (deleteModelFromCache) or pick a smaller model.`,
    };
  }
  if (/not valid JSON|Unexpected token '?<|<!doctype|<html/i.test(text)) {
    return {
      code: 'bad-response',
      message: `${what}: a model file came back as an HTML page instead of the file (${brief(text)}) — typically a 404 answered with index.html (SPA fallback), or a captive portal. Check the model URL in appConfig and serve model folders with real 404s.`,
    };
  }
  if (/Invalid URL/i.test(text)) {
    return {
      code: 'unsupported',
      message: `${what}: the model URL is not a valid absolute URL (${brief(text)}). A custom record's 'model' must be absolute, e.g. new URL('models/X/', location.origin).href.`,
    };
  }
  if (
    /Failed to fetch|NetworkError|Load failed|ERR_INTERNET_DISCONNECTED|ERR_NAME_NOT_RESOLVED|network error/i.test(text)
  ) {
    return {
      code: 'connection-refused',
      message: `${what}: the model files could not be downloaded (${brief(text)}). You seem to be offline: WebLLM works offline only for models already fully cached (hasModelInCache) — connect once to download it, or pick a cached model.`,
    };
  }
  if (/Failed to execute 'add' on 'Cache'|Request failed|\b404\b|\b403\b|status (?:code )?\d{3}/i.test(text)) {
    return {
      code: 'http',
      message: `${what}: a model file could not be downloaded (the server answered with an error, e.g. 404: ${brief(text)}). Check the model id/URL in appConfig, or try again later.`,
    };
  }
  return {
    code: 'load-failed',
    message: `${what}: ${brief(text)}. Try again; if it keeps failing, pick another model or ${FALLBACK_ENGINES}.`,
  };
}

/** A failure while generating → LlmError naming the fix. */
export function classifyGenerationError(modelId: string, error: unknown): LlmError {
  const text = errorText(error);
  const what = `WebLLM (${modelId}) failed to answer`;
  let code: LlmErrorCode = 'bad-response';
  let message = `${what}: ${brief(text)}. Retry; if it keeps failing, unload() and load the model again.`;
  if (/ContextWindowSizeExceeded|context window|context_window_size/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the prompt plus maxTokens does not fit the model's context window (${brief(text)}). Shorten the prompt or history, lower maxTokens, or load with a larger chatOpts.context_window_size.`;
  } else if (/DeviceLostError|device was lost|out of memory/i.test(text)) {
    code = 'out-of-memory';
    message = `${what}: the WebGPU device was lost (${brief(text)}), usually out of GPU memory. Load a smaller model or context window and retry.`;
  } else if (/InvalidResponseFormat|Grammar|xgrammar|schema/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the JSON schema or grammar was rejected (${brief(text)}). Simplify the schema (plain types, enums, maxLength) or check the grammar's syntax (root ::= …).`;
  } else if (/ModelNotLoaded|EngineNotLoaded|not loaded/i.test(text)) {
    code = 'unsupported';
    message = `${what}: the model is not loaded in the worker (${brief(text)}). Load it again with WebLlmChatModel.load('${modelId}').`;
  } else if (
    /MessageOrderError|SystemMessageOrderError|SeedTypeError|UnsupportedFields|RangeError|ConfigValueError|MinValueError/i.test(
      text,
    )
  ) {
    code = 'unsupported';
    message = `${what}: the request was rejected (${brief(text)}).`;
  }
  return new LlmError(message, code, { cause: error });
}

export function noShaderF16Error(modelId: string): LlmError {
  const twin = twinModelId(modelId, 'f32');
  return new LlmError(
    `${modelId} needs the WebGPU feature shader-f16, which this browser's GPU adapter lacks. ` +
      `Pick a q4f32 model${twin ? ` (e.g. ${twin})` : ''} — listWebLlmModels() offers only models that run here.`,
    'no-shader-f16',
  );
}

export function modelNotFoundError(modelId: string, config: AppConfig): LlmError {
  const near = config.model_list
    .map((r) => r.model_id)
    .filter((id) => id.toLowerCase().startsWith(modelId.split('-')[0].toLowerCase()))
    .slice(0, 4);
  return new LlmError(
    `'${modelId}' is not in WebLLM's model list${near.length ? ` (similar: ${near.join(', ')})` : ''}. ` +
      `Pick an id from listWebLlmModels(), or pass an appConfig with a record for it.`,
    'model-not-found',
  );
}

export function needsShaderF16(modelId: string): boolean {
  return /-q\d+f16(?:_\d+)?(?:-|$)/.test(modelId);
}

export function loadAborted(modelId: string, signal: AbortSignal): LlmError {
  return new LlmError(
    `Loading ${modelId} was cancelled by its AbortSignal; files already downloaded stay cached.`,
    'aborted',
    { cause: signal.reason },
  );
}

export function completionAborted(modelId: string, signal: AbortSignal): LlmError {
  return new LlmError(
    `The request to ${modelId} (WebLLM) was cancelled by its AbortSignal; its generation was interrupted.`,
    'aborted',
    { cause: signal.reason },
  );
}

/** The error text without a trailing period, cut to a readable length. */
function brief(text: string): string {
  const t = text.trim().replace(/\.$/, '');
  return t.length > 300 ? `${t.slice(0, 297)}…` : t;
}
