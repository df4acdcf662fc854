/** Small helpers the chat engines share (openai.ts, webllm.ts, wllama.ts, capabilities.ts). */

/** `url` resolved against the page's address (none in Node); undefined when it is not a URL. */
export function absoluteUrl(url: string): string | undefined {
  try {
    const base = (globalThis as { location?: { href?: string } }).location?.href;
    return new URL(url, base).href;
  } catch {
    return undefined;
  }
}

/** A finite number from a server's or a library's answer, or `fallback` for anything else. */
export function finiteOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

/** What went wrong, for an error message: `Name: message` of an Error, or the thrown value as text. */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/** `value[key]` when `value` is an object and that field a string. */
export function pickString(value: unknown, key: string): string | undefined {
  const v = value && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' ? v : undefined;
}
