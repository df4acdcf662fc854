/**
 * One interface for every LLM engine (docs/architecture.md §3.4), in-process or behind a worker, like
 * web-llm's MLCEngineInterface: WebLLM on WebGPU, wllama on CPU, any OpenAI-compatible server.
 * Each engine hides its quirks (how it wants a JSON schema, how it reports logprobs, …).
 */
import type { EngineKind } from './spec';

export type ChatRole = 'system' | 'user' | 'assistant';

export interface ChatMessage {
  role: ChatRole;
  content: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  /** Upper bound on generated tokens (a dreamed transition must stay short). */
  maxTokens: number;
  temperature?: number;
  /** Sampling seed: the same seed and request give the same answer where the engine supports it. */
  seed?: number;
  /** Constrain the output to JSON of this schema (JSON Schema object). */
  jsonSchema?: Record<string, unknown>;
  /** Or constrain it with a GBNF grammar (engines that support grammars). */
  grammar?: string;
  /** Ask for the top-n alternatives of each generated token (n ≥ 1). */
  topLogprobs?: number;
  stop?: string[];
}

export type FinishReason = 'stop' | 'length' | 'abort' | 'error';

export interface TokenLogprob {
  token: string;
  logprob: number;
  top: { token: string; logprob: number }[];
}

export interface ChatUsage {
  promptTokens: number;
  completionTokens: number;
  ms: number;
}

export interface ChatResult {
  text: string;
  finishReason: FinishReason;
  usage: ChatUsage;
  logprobs?: TokenLogprob[];
}

/** The chat engines of the engine grammar (src/core/llm/spec.ts), or a test double. */
export type ChatEngine = Extract<EngineKind, 'webllm' | 'wllama' | 'openai'> | 'test';

export interface ChatModel {
  /** Model id as the engine names it (e.g. 'Qwen2.5-1.5B-Instruct-q4f16_1-MLC'). */
  readonly id: string;
  readonly engine: ChatEngine;
  complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult>;
}

/** Download / load progress, for progress bars. */
export interface LoadProgress {
  /** 0..1 */
  progress: number;
  text: string;
  /** Seconds since loading started. */
  elapsed?: number;
  loadedBytes?: number;
  totalBytes?: number;
}

/** Codes of failures that belong to one call, not to the setup: a later call may well succeed. */
const TRANSIENT_CODES: readonly LlmErrorCode[] = ['timeout', 'connection-refused', 'bad-response'];

/** Errors of the engines; the message says what happened and what to do about it (web-llm style). */
export class LlmError extends Error {
  /**
   * The call failed in transport after its retries (a timeout, a refused connection, 5xx or 429, a
   * body over the size cap or not JSON), not because of the setup (a bad key, a missing model, CORS,
   * an abort). Such a failure costs the caller one answer (an experience model records an invalid
   * transition); the setup's failures stop the run.
   */
  readonly transient: boolean;

  constructor(
    message: string,
    readonly code: LlmErrorCode,
    options?: { cause?: unknown; transient?: boolean },
  ) {
    super(message, options);
    this.name = 'LlmError';
    this.transient = options?.transient ?? TRANSIENT_CODES.includes(code);
  }
}

/** Whether an error is an engine call that failed in transport (LlmError.transient): it costs one answer, not the run. */
export function isFailedEngineCall(error: unknown): error is LlmError {
  return error instanceof LlmError && error.transient;
}

export type LlmErrorCode =
  | 'aborted'
  | 'timeout'
  | 'connection-refused'
  | 'cors'
  | 'http'
  | 'bad-response'
  | 'model-not-found'
  | 'no-webgpu'
  | 'no-shader-f16'
  | 'out-of-memory'
  | 'load-failed'
  | 'unsupported';
