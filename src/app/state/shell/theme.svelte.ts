/**
 * The colour theme: `data-theme` on <html> ('light' | 'dark'; absent = follow the system), the
 * choice kept in localStorage. app.css holds both palettes; charts re-read the colours when
 * `data-theme` or the system preference changes.
 */
import { THEME_KEY, parseTheme, resolveTheme, type ThemeChoice } from './theme';

export class Theme {
  choice = $state<ThemeChoice>('system');
  prefersDark = $state(false);
  resolved = $derived(resolveTheme(this.choice, this.prefersDark));

  constructor() {
    let stored: string | null = null;
    try {
      stored = localStorage.getItem(THEME_KEY);
    } catch {
      /* storage blocked: follow the system */
    }
    this.choice = parseTheme(stored);
    const media = matchMedia('(prefers-color-scheme: dark)');
    this.prefersDark = media.matches;
    media.addEventListener('change', (e) => {
      this.prefersDark = e.matches;
    });
    this.apply();
  }

  set(choice: ThemeChoice): void {
    this.choice = choice;
    try {
      if (choice === 'system') localStorage.removeItem(THEME_KEY);
      else localStorage.setItem(THEME_KEY, choice);
    } catch {
      /* not persisted; still applied */
    }
    this.apply();
  }

  private apply(): void {
    const root = document.documentElement;
    if (this.choice === 'system') delete root.dataset.theme;
    else root.dataset.theme = this.choice;
  }
}
