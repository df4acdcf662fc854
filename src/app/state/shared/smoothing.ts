/**
 * TensorBoard's (and W&B's) exponential moving average with debiasing: with weight w in [0, 1),
 * s_t = w·s_{t-1} + (1−w)·x_t, divided by (1 − w^n) so the first points are not pulled to 0.
 * Gaps (null) stay gaps and do not advance the average.
 */
export function smooth(values: readonly (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) return values.slice();
  let last = 0,
    n = 0;
  return values.map((v) => {
    if (v === null || !Number.isFinite(v)) return null;
    last = last * weight + (1 - weight) * v;
    n++;
    return last / (1 - weight ** n);
  });
}

/**
 * Sparse series (a held-out evaluation every K iterations) are never smoothed: an average over a
 * handful of points bends the curve away from what was measured (TensorBoard smooths dense scalars).
 */
export function smoothable(metric: string): boolean {
  return !metric.startsWith('eval/');
}
