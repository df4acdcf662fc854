/**
 * The CLI's `--llm` value: which experience model dreams.
 *
 *   oracle:EPS_R,EPS_P        the noisy oracle (the real env with reward error ε_R and transition
 *                             error ε_P, both in 0..1) — a control instrument, always labelled so
 *   openai:BASE_URL#MODEL     an OpenAI-compatible server (Ollama, vLLM, llama-server, OpenAI)
 *
 * The API key is not part of the spec (specs are printed and saved in run configs): the CLI reads
 * it from OPENAI_API_KEY or DREAMGYM_API_KEY at its edge and hands it to OpenAiChatModel directly.
 */

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

export type LlmSpec = OracleLlmSpec | OpenAiLlmSpec;

/** The valid forms, with examples; every parse error ends with this text. */
export const LLM_SPEC_FORMS = [
  'oracle:EPS_R,EPS_P       noisy oracle, e.g. oracle:0,0 (exact) or oracle:0.2,0.1',
  'openai:BASE_URL#MODEL    OpenAI-compatible server, e.g. openai:http://127.0.0.1:11434/v1#qwen2.5:1.5b (Ollama),',
  '                         openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-1.5B-Instruct (vLLM),',
  '                         openai:http://127.0.0.1:8080/v1#default (llama-server)',
].join('\n');

export class LlmSpecError extends Error {
  constructor(problem: string) {
    super(`${problem}\nValid --llm forms:\n${LLM_SPEC_FORMS}`);
    this.name = 'LlmSpecError';
  }
}

/** Parses `oracle:EPS_R,EPS_P` or `openai:BASE_URL#MODEL`; throws LlmSpecError naming the valid forms. */
export function parseLlmSpec(text: string): LlmSpec {
  const value = text.trim();
  const colon = value.indexOf(':');
  const kind = colon < 0 ? value : value.slice(0, colon);
  const rest = colon < 0 ? undefined : value.slice(colon + 1);
  if (kind === 'oracle') return parseOracle(value, rest);
  if (kind === 'openai') return parseOpenAi(value, rest);
  if (/^https?$/i.test(kind)) {
    throw new LlmSpecError(`'${value}' is a bare URL; write it as openai:${value}#MODEL.`);
  }
  throw new LlmSpecError(`Unknown --llm value '${value}'.`);
}

function parseOracle(value: string, rest: string | undefined): OracleLlmSpec {
  const parts = rest === undefined ? [] : rest.split(',').map((p) => p.trim());
  if (parts.length !== 2 || parts.some((p) => p === '')) {
    throw new LlmSpecError(`'${value}' needs two error rates, ε_R and ε_P: oracle:EPS_R,EPS_P (e.g. oracle:0.2,0).`);
  }
  const [epsilonReward, epsilonTransition] = parts.map((p, i) => {
    const name = i === 0 ? 'EPS_R (reward error ε_R)' : 'EPS_P (transition error ε_P)';
    const n = Number(p);
    if (!Number.isFinite(n)) throw new LlmSpecError(`In '${value}', ${name} must be a number in 0..1, got '${p}'.`);
    if (n < 0 || n > 1) throw new LlmSpecError(`In '${value}', ${name} must be in 0..1 (a probability), got ${n}.`);
    return n;
  });
  return { kind: 'oracle', epsilonReward, epsilonTransition };
}

function parseOpenAi(value: string, rest: string | undefined): OpenAiLlmSpec {
  const hash = rest === undefined ? -1 : rest.lastIndexOf('#');
  if (rest === undefined || hash < 0) {
    throw new LlmSpecError(`'${value}' needs a base URL and a model: openai:BASE_URL#MODEL.`);
  }
  const rawUrl = rest.slice(0, hash).trim();
  const model = rest.slice(hash + 1).trim();
  if (!rawUrl) throw new LlmSpecError(`'${value}' has no base URL before '#'.`);
  if (!model) throw new LlmSpecError(`'${value}' has no model after '#' (for Ollama, 'ollama list' shows the installed ones).`);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new LlmSpecError(`'${rawUrl}' in '${value}' is not a URL; write it in full, e.g. http://127.0.0.1:11434/v1.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new LlmSpecError(`'${rawUrl}' in '${value}' must be an http:// or https:// URL.`);
  }
  if (url.search || url.hash) {
    throw new LlmSpecError(`'${rawUrl}' in '${value}' must not carry a query string; give the API's base URL, e.g. http://127.0.0.1:11434/v1.`);
  }
  return { kind: 'openai', baseUrl: normaliseBaseUrl(rawUrl), model };
}

/** Drops trailing slashes so `${baseUrl}/chat/completions` has exactly one. */
export function normaliseBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

/** The inverse of parseLlmSpec: parseLlmSpec(formatLlmSpec(s)) deep-equals s. */
export function formatLlmSpec(spec: LlmSpec): string {
  if (spec.kind === 'oracle') return `oracle:${spec.epsilonReward},${spec.epsilonTransition}`;
  return `openai:${spec.baseUrl}#${spec.model}`;
}

/** A label for charts and logs: `oracle (ε_R=0.2, ε_P=0)` or `openai MODEL @ URL`. */
export function llmSpecLabel(spec: LlmSpec): string {
  if (spec.kind === 'oracle') return `oracle (ε_R=${spec.epsilonReward}, ε_P=${spec.epsilonTransition})`;
  return `openai ${spec.model} @ ${spec.baseUrl}`;
}
