/**
 * `--set key=value,…`: overrides of named settings. Only the settings a command names are
 * accepted — own names looked up in a Set and collected in a Map, so `__proto__`, `constructor`
 * or `toString` are refused like any other unknown name, never read off or written to a prototype.
 */
import { DECIMAL, UsageError, type CommandSpec } from './args';

/** Typed values: true/false, decimal numbers, else the text itself (so '0x2' stays text and is refused as a number). */
function settingValue(raw: string): string | number | boolean {
  const value = raw.trim();
  return value === 'true' ? true : value === 'false' ? false : DECIMAL.test(value) ? Number(value) : value;
}

/**
 * The pairs of a --set text, refusing names not in `valid` (with the list of valid ones). The
 * result is a plain object whose keys are all own data properties (Object.fromEntries).
 */
export function parseSettings(
  text: string | undefined,
  valid: readonly string[],
  spec: CommandSpec,
): Record<string, string | number | boolean> {
  if (!text) return {};
  const names = new Set(valid);
  const settings = new Map<string, string | number | boolean>();
  for (const pair of text.split(',')) {
    const equals = pair.indexOf('=');
    const key = equals < 0 ? '' : pair.slice(0, equals).trim();
    if (!key) throw new UsageError(`--set expects key=value pairs separated by commas; got '${pair}'.`, spec);
    if (!names.has(key))
      throw new UsageError(`--set: unknown setting '${key}'; valid settings: ${valid.join(', ')}.`, spec);
    if (settings.has(key)) throw new UsageError(`--set: '${key}' is given twice; give each setting once.`, spec);
    settings.set(key, settingValue(pair.slice(equals + 1)));
  }
  return Object.fromEntries(settings);
}
