import { describe, expect, it } from 'vitest';
import { offlineMessage, offlineState } from '../../../src/app/state/shell/offline';
import { parseTheme, resolveTheme } from '../../../src/app/state/shell/theme';

describe('the offline status line', () => {
  it('follows the service worker life cycle', () => {
    expect(offlineState({ installing: 'installing', waiting: 'none', active: 'none', controlled: false })).toBe(
      'installing',
    );
    expect(offlineState({ installing: 'none', waiting: 'none', active: 'activating', controlled: false })).toBe(
      'installing',
    );
    expect(offlineState({ installing: 'none', waiting: 'none', active: 'activated', controlled: false })).toBe('ready');
    expect(offlineState({ installing: 'none', waiting: 'none', active: 'activated', controlled: true })).toBe('ready');
    // A new build arrives while an older copy serves the page.
    expect(offlineState({ installing: 'installing', waiting: 'none', active: 'activated', controlled: true })).toBe(
      'updating',
    );
    expect(offlineState({ installing: 'none', waiting: 'installed', active: 'activated', controlled: true })).toBe(
      'updating',
    );
    expect(offlineState({ installing: 'none', waiting: 'none', active: 'none', controlled: false })).toBe('checking');
    // The new build has taken over a page that the old one served: the page should reload.
    expect(
      offlineState({ installing: 'none', waiting: 'none', active: 'activated', controlled: true, replaced: true }),
    ).toBe('reload');
    expect(
      offlineState({
        installing: 'installing',
        waiting: 'none',
        active: 'activated',
        controlled: true,
        replaced: true,
      }),
    ).toBe('updating');
  });

  it('says what it means, and when the network is off', () => {
    expect(offlineMessage('ready', true)).toBe('Ready offline');
    expect(offlineMessage('updating', true)).toBe('Offline copy updating…');
    expect(offlineMessage('ready', false)).toBe('Ready offline · network off');
    expect(offlineMessage('error', true, 'quota exceeded')).toMatch(
      /^Offline copy failed: quota exceeded\. The app still works online; reload to retry$/,
    );
    expect(offlineMessage('dev', true)).toBe(''); // the header says nothing about how it is served
    expect(offlineMessage('dev', false)).toBe('Network off');
    expect(offlineMessage('reload', true)).toMatch(/new version .*reload the page/);
  });
});

describe('the colour theme', () => {
  it('reads the stored choice, defaulting to the system', () => {
    expect(parseTheme('dark')).toBe('dark');
    expect(parseTheme('light')).toBe('light');
    expect(parseTheme(null)).toBe('system');
    expect(parseTheme('purple')).toBe('system');
  });

  it('resolves the system choice from prefers-color-scheme', () => {
    expect(resolveTheme('system', true)).toBe('dark');
    expect(resolveTheme('system', false)).toBe('light');
    expect(resolveTheme('light', true)).toBe('light');
    expect(resolveTheme('dark', false)).toBe('dark');
  });
});
