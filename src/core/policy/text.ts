/**
 * Words of the policy's features (docs/architecture.md §3.8): tokens, stems and the generic stopwords. A domain's own
 * boilerplate words are mined from its data (feature-schema.ts), never listed here.
 */
import { stem } from '../text';

export { stem } from '../text';

const TOKEN_RE = /[a-z0-9]+(?:\.[0-9]+)?/g;

/** Lower-cased word/number tokens ('$64.98' → '64.98', "l'eau" → 'l', 'eau'). */
export function tokenize(text: string): string[] {
  return text.toLowerCase().match(TOKEN_RE) ?? [];
}

/** English function words and the generic words of a request: they carry no task content in any domain. */
export const GENERIC_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an the and or of for to in on at by with from into onto is are be it its this that these those ' +
    'i me my you your we our need want looking look find get some please would like can could then using use ' +
    'than less s x'
  ).split(' '),
);

/** Stemmed content tokens: the generic stopwords and `extra` (a domain's mined ones) dropped. */
export function contentStems(tokens: readonly string[], extra?: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const t of tokens) if (!GENERIC_STOPWORDS.has(t) && !extra?.has(t)) out.push(stem(t));
  return out;
}
