/**
 * One interface for every LLM engine (docs/architecture.md §3.4), in-process or behind a worker, like
 * web-llm's MLCEngineInterface: WebLLM on WebGPU, wllama on CPU, any OpenAI-compatible server.
 * Each engine hides its quirks (how it wants a JSON schema, how it reports logprobs, …).
 */
import type { EngineKind } from './spec';
import { DreamGymError } from '../errors';

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
export class LlmError extends DreamGymError {
  declare readonly code: LlmErrorCode;
  /**
   * The call failed in transport after its retries (a timeout, a refused connection, 5xx or 429, a
   * body over the size cap or not JSON), not because of the setup (a bad key, a missing model, CORS,
   * an abort). Such a failure costs the caller one answer (an experience model records an invalid
   * transition); the setup's failures stop the run.
   */
  readonly transient: boolean;

  constructor(message: string, code: LlmErrorCode, options?: { cause?: unknown; transient?: boolean }) {
    super(message, { code, fix: LLM_FIXES[code], cause: options?.cause });
    this.name = 'LlmError';
    this.transient = options?.transient ?? TRANSIENT_CODES.includes(code);
  }
}

/** Whether an error is an engine call that failed in transport (LlmError.transient): it costs one answer, not the run. */
export function isFailedEngineCall(error: unknown): error is LlmError {
  return error instanceof LlmError && error.transient;
}

/** The general fix of each engine failure; the message names the particular one (the URL, the model, the status). */
const LLM_FIXES: Record<LlmErrorCode, string> = {
  aborted: 'Nothing is wrong: the call was cancelled on request; run it again to redo it.',
  timeout: 'Check that the server is running and not overloaded, or allow a longer timeout (llmTimeoutMs).',
  'connection-refused': 'Start the server, or correct the base URL of the engine spec.',
  cors: "Let the server answer this page's origin (CORS), or call it through a same-origin proxy.",
  http: "Do what the server's answer says: check the key, the model name and the server's log.",
  'bad-response': 'Check that the server speaks the OpenAI chat API and serves a chat model; see its log.',
  'model-not-found': 'Name a model the server serves (its /v1/models lists them), or load that model there.',
  'no-webgpu': 'Use a browser with WebGPU (a recent Chrome or Edge), or the wllama engine, or a server.',
  'no-shader-f16': 'Pick a model build without f16 shaders (a q4f32 one), or use the wllama engine.',
  'out-of-memory': 'Pick a smaller model, close other tabs, or use a server.',
  'load-failed': 'Check the network and the model files, then load the model again.',
  unsupported: 'Use an engine or server that supports what the call asked for, or turn that option off.',
};

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
