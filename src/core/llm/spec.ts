/**
 * The engine grammar: one string names where a run's experience comes from. The CLI's `--llm`,
 * the page's Setup choice and Train URL (`llm=…`), the trainer worker and a run's saved config
 * (`config.llm`) all speak it and all parse it here.
 *
 *   oracle:EPS_R,EPS_P        the noisy oracle (the real env with reward error ε_R and transition
 *                             error ε_P, both in 0..1) — a control instrument, always labelled so
 *   openai:BASE_URL#MODEL     an OpenAI-compatible server (Ollama, vLLM, llama-server, OpenAI)
 *   webllm:MODEL_ID           a WebLLM model (WebGPU, in a worker) — the browser only
 *   wllama:file:NAME          a GGUF file picked from disk, kept in the browser's OPFS (wllama, CPU)
 *   wllama:URL                a GGUF file downloaded from an http(s) URL ending in .gguf — the browser only
 *   learned:PATH              the learned experience model (a small tfjs model trained on the buffer),
 *                             loaded by the caller from PATH (a folder in Node, a stored model in the page)
 *
 * An API key is never part of a spec (specs are printed, shared in links and saved with runs):
 * callers hand it to the run's builder (src/core/train/run-parts.ts) on their own.
 */
import { DreamGymError } from '../errors';

export const ENGINE_KINDS = ['oracle', 'openai', 'webllm', 'wllama', 'learned'] as const;
/** The kinds of experience source a spec names (its text before the first ':'). */
export type EngineKind = (typeof ENGINE_KINDS)[number];
/** A spec string, e.g. 'oracle:0.1,0.1' (parse it with parseLlmSpec). */
export type LlmSpecText = `${EngineKind}:${string}`;

/** Kinds that run only in a browser (WebGPU, OPFS): Node has no engine for them. */
export const BROWSER_ENGINE_KINDS: readonly EngineKind[] = ['webllm', 'wllama'];

export interface OracleLlmSpec {
  kind: 'oracle';
  /** Probability that a dreamed reward is wrong (ε_R), 0..1. */
  epsilonReward: number;
  /** Probability that a dreamed next state is wrong (ε_P), 0..1. */
  epsilonTransition: number;
}

export interface OpenAiLlmSpec {
  kind: 'openai';
  /** Base URL of the OpenAI-compatible API, without a trailing slash (e.g. http://127.0.0.1:11434/v1). */
  baseUrl: string;
  /** Model id as the server names it (e.g. 'qwen2.5:1.5b' for Ollama). */
  model: string;
}

export interface WebLlmSpec {
  kind: 'webllm';
  modelId: string;
}
export type WllamaLlmSpec =
  { kind: 'wllama'; source: 'file'; name: string } | { kind: 'wllama'; source: 'url'; url: string };
export interface LearnedLlmSpec {
  kind: 'learned';
  path: string;
}

export type LlmSpec = OracleLlmSpec | OpenAiLlmSpec | WebLlmSpec | WllamaLlmSpec | LearnedLlmSpec;

/** The valid forms, with examples; every parse error ends with this text. */
export const LLM_SPEC_FORMS = [
  'oracle:EPS_R,EPS_P       noisy oracle, e.g. oracle:0,0 (exact) or oracle:0.2,0.1',
  'openai:BASE_URL#MODEL    OpenAI-compatible server, e.g. openai:http://127.0.0.1:11434/v1#qwen2.5:1.5b (Ollama),',
  '                         openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-1.5B-Instruct (vLLM),',
  '                         openai:http://127.0.0.1:8080/v1#default (llama-server)',
  'webllm:MODEL_ID          WebLLM in the browser, e.g. webllm:Qwen2.5-0.5B-Instruct-q4f32_1-MLC',
  'wllama:file:NAME.gguf    wllama in the browser, a GGUF file picked on the Setup page',
  'wllama:https://…/x.gguf  wllama in the browser, a GGUF file from a URL',
  'learned:PATH             the learned experience model saved at PATH',
].join('\n');

export class LlmSpecError extends DreamGymError {
  /** What is wrong, without the list of forms (for a one-line message in the page). */
  readonly problem: string;
  constructor(problem: string) {
    // Messages quote the spec: never with the user:password of a URL in it.
    const safe = withoutCredentials(problem);
    super(`${safe}\nValid engine specs:\n${LLM_SPEC_FORMS}`, {
      code: 'llm-spec-invalid',
      fix: 'Give an engine spec of one of the valid forms the message lists.',
    });
    this.problem = safe;
    this.name = 'LlmSpecError';
  }
}

/** `//user:password@host` → `//***@host` wherever a text holds one (errors quote specs). */
export function withoutCredentials(text: string): string {
  return text.replace(/\/\/[^/?#\s'"]*@/g, '//***@');
}

/** A URL with a user or password is refused: the key goes in DREAMGYM_API_KEY, never in a spec (specs are saved). */
function refuseCredentials(url: URL, value: string): void {
  if (!url.username && !url.password) return;
  throw new LlmSpecError(
    `The URL in '${value}' must not carry credentials (user:password@): specs are saved with runs and printed. ` +
      'Give the key in the DREAMGYM_API_KEY environment variable instead, and the URL without it.',
  );
}

/** Parses any engine spec; throws LlmSpecError naming the valid forms. */
export function parseLlmSpec(text: string): LlmSpec {
  const value = text.trim();
  const colon = value.indexOf(':');
  const kind = colon < 0 ? value : value.slice(0, colon);
  const rest = colon < 0 ? undefined : value.slice(colon + 1);
  switch (kind) {
    case 'oracle':
      return parseOracle(value, rest);
    case 'openai':
      return parseOpenAi(value, rest);
    case 'webllm':
      return parseWebLlm(value, rest);
    case 'wllama':
      return parseWllama(value, rest);
    case 'learned':
      return parseLearned(value, rest);
  }
  if (/^https?$/i.test(kind)) throw new LlmSpecError(`'${value}' is a bare URL; write it as openai:${value}#MODEL.`);
  throw new LlmSpecError(`Unknown engine spec '${value}'.`);
}

function parseOracle(value: string, rest: string | undefined): OracleLlmSpec {
  const parts = rest === undefined ? [] : rest.split(',').map((p) => p.trim());
  if (parts.length !== 2 || parts.some((p) => p === '')) {
    throw new LlmSpecError(`'${value}' needs two error rates, ε_R and ε_P: oracle:EPS_R,EPS_P (e.g. oracle:0.2,0).`);
  }
  const [epsilonReward, epsilonTransition] = parts.map((p, i) => {
    const name = i === 0 ? 'EPS_R (reward error ε_R)' : 'EPS_P (transition error ε_P)';
    // Decimal only: Number('0x1') would read a hex 1.
    const n = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(p) ? Number(p) : NaN;
    if (!Number.isFinite(n))
      throw new LlmSpecError(`In '${value}', ${name} must be a number in 0..1, written in decimals, got '${p}'.`);
    if (n < 0 || n > 1) throw new LlmSpecError(`In '${value}', ${name} must be in 0..1 (a probability), got ${n}.`);
    return n;
  });
  return { kind: 'oracle', epsilonReward, epsilonTransition };
}

function parseOpenAi(value: string, rest: string | undefined): OpenAiLlmSpec {
  const hash = rest === undefined ? -1 : rest.lastIndexOf('#');
  if (rest === undefined || hash < 0)
    throw new LlmSpecError(`'${value}' needs a base URL and a model: openai:BASE_URL#MODEL.`);
  const rawUrl = rest.slice(0, hash).trim();
  const model = rest.slice(hash + 1).trim();
  if (!rawUrl) throw new LlmSpecError(`'${value}' has no base URL before '#'.`);
  if (!model)
    throw new LlmSpecError(`'${value}' has no model after '#' (for Ollama, 'ollama list' shows the installed ones).`);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new LlmSpecError(`'${rawUrl}' in '${value}' is not a URL; write it in full, e.g. http://127.0.0.1:11434/v1.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LlmSpecError(`'${rawUrl}' in '${value}' must be an http:// or https:// URL.`);
  refuseCredentials(url, value);
  if (url.search || url.hash) {
    throw new LlmSpecError(
      `'${rawUrl}' in '${value}' must not carry a query string; give the API's base URL, e.g. http://127.0.0.1:11434/v1.`,
    );
  }
  return { kind: 'openai', baseUrl: normaliseBaseUrl(rawUrl), model };
}

function parseWebLlm(value: string, rest: string | undefined): WebLlmSpec {
  const modelId = (rest ?? '').trim();
  if (!modelId || /\s/.test(modelId))
    throw new LlmSpecError(`'${value}' needs a WebLLM model id after 'webllm:' (pick one on the Setup page).`);
  return { kind: 'webllm', modelId };
}

function parseWllama(value: string, rest: string | undefined): WllamaLlmSpec {
  const source = (rest ?? '').trim();
  if (source.startsWith('file:')) {
    const name = source.slice('file:'.length).trim();
    if (!name) throw new LlmSpecError(`'${value}' needs a file name after 'wllama:file:'.`);
    return { kind: 'wllama', source: 'file', name };
  }
  let url: URL;
  try {
    url = new URL(source);
  } catch {
    throw new LlmSpecError(`'${source}' in '${value}' is neither file:NAME nor a full http(s) URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new LlmSpecError(`'${source}' in '${value}' must be an http:// or https:// URL.`);
  refuseCredentials(url, value);
  if (!/\.gguf$/i.test(url.pathname))
    throw new LlmSpecError(`'${source}' does not end in .gguf; wllama loads GGUF files only.`);
  return { kind: 'wllama', source: 'url', url: url.href };
}

function parseLearned(value: string, rest: string | undefined): LearnedLlmSpec {
  const path = (rest ?? '').trim();
  if (!path) throw new LlmSpecError(`'${value}' needs the path of a saved learned model after 'learned:'.`);
  return { kind: 'learned', path };
}

/** Drops trailing slashes so `${baseUrl}/chat/completions` has exactly one. */
export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

/** The inverse of parseLlmSpec: parseLlmSpec(formatLlmSpec(s)) deep-equals s. */
export function formatLlmSpec(spec: LlmSpec): LlmSpecText {
  switch (spec.kind) {
    case 'oracle':
      return `oracle:${spec.epsilonReward},${spec.epsilonTransition}`;
    case 'openai':
      return `openai:${spec.baseUrl}#${spec.model}`;
    case 'webllm':
      return `webllm:${spec.modelId}`;
    case 'wllama':
      return spec.source === 'file' ? `wllama:file:${spec.name}` : `wllama:${spec.url}`;
    case 'learned':
      return `learned:${spec.path}`;
  }
}

/** A short label for charts and logs: `oracle (ε_R=0.2, ε_P=0)`, `openai MODEL @ URL`, `webllm MODEL`, … */
export function llmSpecLabel(specOrText: LlmSpec | string): string {
  const spec = typeof specOrText === 'string' ? parseLlmSpec(specOrText) : specOrText;
  switch (spec.kind) {
    case 'oracle':
      return `oracle (ε_R=${spec.epsilonReward}, ε_P=${spec.epsilonTransition})`;
    case 'openai':
      return `openai ${spec.model} @ ${spec.baseUrl}`;
    case 'webllm':
      return `webllm ${spec.modelId}`;
    case 'wllama':
      return `wllama ${spec.source === 'file' ? spec.name : spec.url}`;
    case 'learned':
      return `learned model at ${spec.path}`;
  }
}

/** Where experience comes from in a run, in words (the oracle is always labelled as one). */
export function experienceLabel(config: { mode: 'real' | 'dream' | 's2r'; llm: string }): string {
  if (config.mode === 'real') return 'the real environment';
  const spec = parseLlmSpec(config.llm);
  const source =
    spec.kind === 'openai' || BROWSER_ENGINE_KINDS.includes(spec.kind)
      ? `reasoning experience model on ${llmSpecLabel(spec)}`
      : llmSpecLabel(spec);
  return config.mode === 'dream' ? `dream: ${source}` : `S2R: dream (${source}), then a small real budget`;
}
