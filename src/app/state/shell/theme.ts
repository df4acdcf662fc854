/** Colour theme choice: follow the system (prefers-color-scheme) or force light / dark. */
export const THEMES = ['system', 'light', 'dark'] as const;
export type ThemeChoice = (typeof THEMES)[number];
/** localStorage key; index.html reads it before the first paint (no flash of the wrong theme). */
export const THEME_KEY = 'dreamgym.theme';

export function parseTheme(stored: string | null | undefined): ThemeChoice {
  return (THEMES as readonly string[]).includes(stored ?? '') ? (stored as ThemeChoice) : 'system';
}

export function resolveTheme(choice: ThemeChoice, prefersDark: boolean): 'light' | 'dark' {
  return choice === 'system' ? (prefersDark ? 'dark' : 'light') : choice;
}
