/**
 * What an OpenAI-compatible server's failures mean (openai.ts): each an LlmError whose message names the fix —
 * the network's (a refused connection, DNS, CORS), the HTTP statuses', and answers that are not what the API
 * promises. `transient` marks those of one call (docs/architecture.md §3.4).
 */
import { LlmError } from './types';
import { errorText, pickString } from './helpers';

/** A server's final answer to one request (any status), after its retries. */
export interface HttpReply {
  status: number;
  statusText: string;
  text: string;
  url: string;
  attempts: number;
}

/** A fetch that failed before any answer → LlmError; in a browser a CORS refusal is told apart where it can be. */
export function networkError(url: string, error: unknown, baseUrl: string, page: string | undefined): LlmError {
  const codes = networkCodes(error);
  const servers =
    `Ollama 'ollama serve' (base URL http://127.0.0.1:11434/v1), vLLM 'vllm serve MODEL' (http://127.0.0.1:8000/v1), ` +
    `llama-server 'llama-server -m model.gguf' (http://127.0.0.1:8080/v1).`;
  const startHint = `Start an OpenAI-compatible server there or fix the URL: ${servers}`;
  if (page !== undefined) {
    // In a browser a refused connection and a CORS refusal look the same ('Failed to fetch').
    const target = new URL(baseUrl);
    if (target.origin !== page) {
      const mixed =
        page.startsWith('https:') && target.protocol === 'http:' && !isLoopback(target.hostname)
          ? ` This page is served over https and ${target.origin} is plain http, which browsers block (mixed content): serve the API over https or open the page over http.`
          : '';
      return new LlmError(
        `The browser could not reach ${url} from this page (${page}): either no server is running there, or it does not ` +
          `allow cross-origin requests (CORS) from this page. Open ${baseUrl}/models in a browser tab to check it is up; ` +
          `if not, start one: ${servers} To allow this page: Ollama — restart it with ` +
          `OLLAMA_ORIGINS=${page} ollama serve (or OLLAMA_ORIGINS=* for any page); vLLM — vllm serve MODEL ` +
          `--allowed-origins '["${page}"]'; llama-server allows any origin by default (newer builds: --cors-origins ${page}).${mixed}`,
        'cors',
        { cause: error },
      );
    }
    return new LlmError(`Could not reach ${url}: no server is answering there. ${startHint}`, 'connection-refused', {
      cause: error,
    });
  }
  if (codes.includes('ECONNREFUSED')) {
    return new LlmError(
      `Connection refused at ${url}: no server is running at ${baseUrl}. ${startHint}`,
      'connection-refused',
      { cause: error },
    );
  }
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) {
    return new LlmError(
      `The host of ${baseUrl} was not found (DNS ${codes.join(', ')}); check the base URL's host name. ${startHint}`,
      'connection-refused',
      { cause: error },
    );
  }
  const detail = codes.length > 0 ? codes.join(', ') : errorText(error);
  return new LlmError(
    `Network error talking to ${url} (${detail}): the connection failed or the server closed it mid-answer. ` +
      `Check the server is running and its log; a proxy or firewall between here and ${baseUrl} may be dropping it.`,
    'http',
    { cause: error, transient: true },
  );
}

/** A non-2xx answer → LlmError naming what to check (the key, the model, the base URL, the server). */
export function httpError(reply: HttpReply, baseUrl: string, model: string): LlmError {
  const { status, text, url } = reply;
  const message = serverMessage(text);
  const said = message ? `: ${message}` : '';
  const statusLabel = `${status}${reply.statusText ? ` ${reply.statusText}` : ''}`;
  if (status === 401 || status === 403) {
    const ollama403 =
      status === 403
        ? ` From a browser, Ollama also answers 403 to pages whose origin it does not allow: start it with OLLAMA_ORIGINS=<this page's origin> ollama serve.`
        : '';
    return new LlmError(
      `The server at ${baseUrl} refused the request (${statusLabel}${said}): the API key is missing or wrong. ` +
        `Pass it as apiKey (CLI: the OPENAI_API_KEY or DREAMGYM_API_KEY environment variable; UI: the API key field, kept in memory only).${ollama403}`,
      'http',
    );
  }
  if ((status === 404 || status === 400) && mentionsMissingModel(text, status)) {
    return new LlmError(
      `Model '${model}' is not available at ${baseUrl} (${statusLabel}${said}). ${pullHint(model)}`,
      'model-not-found',
    );
  }
  if (status === 404) {
    return new LlmError(
      `${url} does not exist (${statusLabel}). The base URL must point at the OpenAI-compatible API, which usually ends in /v1: ` +
        `Ollama http://127.0.0.1:11434/v1, vLLM http://127.0.0.1:8000/v1, llama-server http://127.0.0.1:8080/v1.`,
      'http',
    );
  }
  if (status === 429 || status >= 500) {
    const advice =
      status === 429
        ? 'The server is rate-limiting: send fewer requests at once, or raise retries / backoffMs to wait longer.'
        : 'The server is failing or overloaded: check its log (out of memory? model still loading?), or raise retries / backoffMs.';
    return new LlmError(
      `The server at ${url} answered ${statusLabel} on all ${reply.attempts} attempt(s)${said}. ${advice}`,
      'http',
      { transient: true },
    );
  }
  return new LlmError(
    `The server at ${url} rejected the request (${statusLabel}${said}); not retried. Check the request against what the ` +
      `server supports (maxTokens within the context window, stop, jsonSchema or grammar).`,
    'http',
  );
}

/** Both structured-output shapes refused (response_format json_schema and json_object). */
export function noStructuredOutput(baseUrl: string, reply: HttpReply): LlmError {
  return new LlmError(
    `The server at ${baseUrl} rejects both structured-output shapes (response_format json_schema and json_object): ` +
      `${serverMessage(reply.text)}. Use a server with structured output (a recent Ollama, vLLM or llama-server), ` +
      `or constrain the output with a GBNF grammar instead (llama-server).`,
    'unsupported',
  );
}

export function bodyTooLarge(url: string, what: string, capBytes: number): LlmError {
  return new LlmError(
    `The answer from ${url} ${what}, over the cap of ${capBytes} bytes (maxResponseBytes); it was refused unread. A chat ` +
      'answer is a few kB: check that the base URL points at an OpenAI-compatible API and that maxTokens is small, or raise maxResponseBytes.',
    'bad-response',
  );
}

export function parseJsonBody(reply: HttpReply): unknown {
  try {
    return JSON.parse(reply.text);
  } catch (error) {
    throw new LlmError(
      `The server at ${reply.url} answered ${reply.status} with a body that is not JSON: "${snippet(reply.text)}". ` +
        `Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1).`,
      'bad-response',
      { cause: error },
    );
  }
}

export function badShape(reply: HttpReply, expected: string): LlmError {
  return new LlmError(
    `The server at ${reply.url} answered JSON without ${expected}: "${snippet(reply.text)}". ` +
      `Check that the base URL points at an OpenAI-compatible API (it usually ends in /v1).`,
    'bad-response',
  );
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || /^127\./.test(hostname);
}

export function pullHint(model: string): string {
  return (
    `For Ollama, download it with 'ollama pull ${model}'; otherwise list the served models (GET /models, or the ` +
    `connection test) and use one of those ids — vLLM serves the model named on 'vllm serve', llama-server the one loaded with -m.`
  );
}

/** The error codes along an error's cause chain (Node: TypeError 'fetch failed' → cause.code). */
export function networkCodes(error: unknown): string[] {
  const codes = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number) => {
    if (!e || typeof e !== 'object' || seen.has(e) || depth > 6) return;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.add(code);
    visit((e as { cause?: unknown }).cause, depth + 1);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(error, 0);
  return [...codes];
}

export function abortedError(url: string, signal: AbortSignal): LlmError {
  return new LlmError(`The request to ${url} was cancelled by its AbortSignal (not retried).`, 'aborted', {
    cause: signal.reason,
  });
}

function snippet(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}

/** The server's own error text: `error.message`, `error`, `message` or `detail`, else a snippet of the body. */
export function serverMessage(text: string): string {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const error = json?.error;
    if (typeof error === 'string') return snippet(error);
    const nested = pickString(error, 'message') ?? pickString(json, 'message');
    if (nested) return snippet(nested);
    if (typeof json?.detail === 'string') return snippet(json.detail);
    if (json?.detail !== undefined) return snippet(JSON.stringify(json.detail));
  } catch {
    /* not JSON: fall through */
  }
  return snippet(text);
}

export function mentionsResponseFormat(text: string): boolean {
  return /response_format|json_schema/i.test(text);
}

function mentionsMissingModel(text: string, status: number): boolean {
  if (!/model/i.test(text)) return false;
  // A 400 only counts when it says the model is missing (vLLM), not for any mention of "model".
  return status === 404 || /not found|does not exist|not exist|unknown model|no such model|try pulling/i.test(text);
}
