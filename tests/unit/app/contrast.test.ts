/**
 * The two palettes of src/app/app.css meet WCAG AA: text colours 4.5:1 on every background
 * they are drawn on, form control borders 3:1 (non-text contrast), and the dark palette is the
 * same under the system preference and the explicit toggle.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const css = readFileSync('src/app/app.css', 'utf8');

function block(selector: string): Record<string, string> {
  const start = css.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`app.css has no "${selector} {" block`);
  const body = css.slice(start + selector.length + 2, css.indexOf('}', start));
  return Object.fromEntries(
    [...body.matchAll(/--([\w-]+):\s*(#[0-9a-fA-F]{6})/g)].map((m) => [m[1], m[2].toLowerCase()]),
  );
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5]
    .map((i) => parseInt(hex.slice(i, i + 2), 16) / 255)
    .map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

const light = block(':root');
const dark = block(":root[data-theme='dark']");

describe('colour contrast of the app palettes', () => {
  it('computes the WCAG ratio (known values)', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('has the same dark palette for the system preference and the toggle', () => {
    expect(block(":root:not([data-theme='light'])")).toEqual(dark);
    expect(Object.keys(dark).sort()).toEqual(Object.keys(light).sort());
  });

  for (const [name, palette] of [
    ['light', light],
    ['dark', dark],
  ] as const) {
    it(`${name}: text 4.5:1 on every background, control borders 3:1`, () => {
      const failures: string[] = [];
      for (const text of ['fg', 'muted', 'accent', 'bad', 'dream']) {
        for (const background of ['bg', 'panel', 'chip', 'accent-soft']) {
          const ratio = contrast(palette[text], palette[background]);
          if (ratio < 4.5) failures.push(`--${text} on --${background}: ${ratio.toFixed(2)}`);
        }
      }
      for (const background of ['bg', 'panel']) {
        const ratio = contrast(palette.control, palette[background]);
        if (ratio < 3) failures.push(`--control on --${background}: ${ratio.toFixed(2)}`);
      }
      expect(failures).toEqual([]);
    });
  }
});
