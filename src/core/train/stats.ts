/**
 * The statistics of a reported table (docs/architecture.md §7.2): over a row's seeds, the mean, the
 * sample standard deviation (n − 1) and a two-sided 95 % Student-t interval of the mean; and the
 * ratio of two rows' means (dream over real) with a 95 % interval by the delta method.
 */

/** Mean, sample std and 95 % interval of the mean over seeds, with the per-seed values. */
export interface Stat {
  mean: number;
  /** Sample standard deviation (n − 1); 0 for a single value, which has no spread to show. */
  std: number;
  /** Two-sided 95 % t-interval of the mean; null below two values. */
  ci95: [number, number] | null;
  values: number[];
}

/** Two-sided 95 % quantiles t(0.975, df) for df = 1 … 30. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11,
  2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/** t(0.975, df): the table up to 30, then the Cornish–Fisher expansion around z = 1.96 (error < 1e-3). */
export function tQuantile975(df: number): number {
  if (!(df >= 1)) throw new RangeError(`degrees of freedom must be ≥ 1; got ${df}`);
  if (df <= 30) return T975[Math.floor(df) - 1];
  const z = 1.959964;
  return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2);
}

export function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/** Sample variance (n − 1); 0 below two values. */
export function sampleVariance(values: readonly number[]): number {
  if (values.length < 2) return 0;
  const m = mean(values);
  return values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1);
}

export function stat(values: readonly number[]): Stat {
  if (values.length === 0) return { mean: NaN, std: NaN, ci95: null, values: [] };
  const m = mean(values);
  const std = Math.sqrt(sampleVariance(values));
  const half = values.length >= 2 ? (tQuantile975(values.length - 1) * std) / Math.sqrt(values.length) : NaN;
  return { mean: m, std, ci95: values.length >= 2 ? [m - half, m + half] : null, values: [...values] };
}

/** A ratio of two rows' means, with its 95 % interval. */
export interface Ratio {
  ratio: number;
  ci95: [number, number] | null;
}

/**
 * mean(a) / mean(b) with a 95 % interval by the delta method, the rows taken as independent
 * samples: se² = r² (s_a² / (n_a ā²) + s_b² / (n_b b̄²)), t with the smaller n − 1 degrees of
 * freedom (conservative). Null interval below two values per row or for a zero denominator.
 */
export function ratioOfMeans(a: readonly number[], b: readonly number[]): Ratio {
  const ma = mean(a);
  const mb = mean(b);
  const ratio = ma / mb;
  if (a.length < 2 || b.length < 2 || !(mb > 0) || !Number.isFinite(ratio)) return { ratio, ci95: null };
  const relA = ma === 0 ? 0 : sampleVariance(a) / (a.length * ma ** 2);
  const relB = sampleVariance(b) / (b.length * mb ** 2);
  // With ā = 0 the relative form breaks down; use the absolute form of the same expansion.
  const se = ma === 0 ? Math.sqrt(sampleVariance(a) / a.length) / mb : Math.abs(ratio) * Math.sqrt(relA + relB);
  const half = tQuantile975(Math.min(a.length, b.length) - 1) * se;
  return { ratio, ci95: [ratio - half, ratio + half] };
}
