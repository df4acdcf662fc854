/**
 * The two palettes of src/app/app.css meet WCAG AA: text colours 4.5:1 on every background
 * they are drawn on, form control borders 3:1 (non-text contrast), and one palette block serves
 * the system preference and the explicit toggle (each colour a light-dark() pair; color-scheme
 * picks the side).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const css = readFileSync('src/app/app.css', 'utf8');

/** The declarations of the rule whose selector is exactly `selector`. */
function block(selector: string): string {
  const start = css.indexOf(`\n${selector} {`);
  if (start < 0) throw new Error(`app.css has no "${selector} {" block`);
  const open = start + selector.length + 3;
  return css.slice(open, css.indexOf('}', open));
}

const HEX = '#[0-9a-fA-F]{6}';
const pairs = [...block(':root').matchAll(new RegExp(`--([\\w-]+):\\s*light-dark\\((${HEX}),\\s*(${HEX})\\)`, 'g'))];
const light = Object.fromEntries(pairs.map((m) => [m[1], m[2].toLowerCase()]));
const dark = Object.fromEntries(pairs.map((m) => [m[1], m[3].toLowerCase()]));

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

describe('colour contrast of the app palettes', () => {
  it('computes the WCAG ratio (known values)', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it('has one palette block for the system preference and the toggle', () => {
    // Every colour has both sides, and none is set outside the pairs (a bare one would serve one theme only).
    expect(Object.keys(light).sort()).toEqual(
      ['accent', 'accent-soft', 'bad', 'bg', 'chip', 'control', 'dream', 'fg', 'line', 'muted', 'panel'].sort(),
    );
    expect(Object.keys(dark).sort()).toEqual(Object.keys(light).sort());
    expect(css.match(/--[\w-]+:\s*#/g)).toBeNull();
    expect(css).not.toContain('prefers-color-scheme');
    // The system picks the side unless the user did (data-theme on <html>).
    expect(block(':root')).toMatch(/color-scheme: light dark;/);
    expect(block(":root[data-theme='light']").trim()).toBe('color-scheme: light;');
    expect(block(":root[data-theme='dark']").trim()).toBe('color-scheme: dark;');
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
