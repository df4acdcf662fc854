import { beforeAll, describe, expect, it } from 'vitest';
import * as tf from '@tensorflow/tfjs';
import { initBackend } from '../../../src/core/tfjs/backend';
import { Rng } from '../../../src/core/rng';

/** The element of `x` (nested arrays) at `index`. */
function at(x: unknown, index: number[]): number {
  return index.reduce<unknown>((a, i) => (a as unknown[])[i], x) as number;
}

/** Every index of a block of `size`. */
function* indices(size: number[]): Generator<number[]> {
  const total = size.reduce((a, b) => a * b, 1);
  for (let n = 0; n < total; n++) {
    const index: number[] = [];
    let rest = n;
    for (let i = size.length - 1; i >= 0; i--) {
      index.unshift(rest % size[i]);
      rest = Math.floor(rest / size[i]);
    }
    yield index;
  }
}

beforeAll(async () => {
  expect((await initBackend('wasm')).backend).toBe('wasm');
});

describe('wasm kernels (backend.ts): the same values, fewer copies', () => {
  it('slices every rank from 1 to 5, continuous or not, int32 too', () => {
    expect(tf.getKernel('Slice', 'wasm')?.kernelFunc.name).toBe('sliceInPlace');
    const rng = Rng.fromSeed(3, 'slices');
    for (let trial = 0; trial < 120; trial++) {
      const rank = 1 + (trial % 5);
      const shape = Array.from({ length: rank }, () => 1 + Math.floor(rng.next() * 5));
      const begin = shape.map((d) => Math.floor(rng.next() * d));
      const size = shape.map((d, i) => 1 + Math.floor(rng.next() * (d - begin[i])));
      const dtype = trial % 3 === 0 ? 'int32' : 'float32';
      const x = tf.tidy(() =>
        tf.cast(
          tf.reshape(
            tf.range(
              0,
              shape.reduce((a, b) => a * b, 1),
            ),
            shape,
          ),
          dtype,
        ),
      );
      const y = tf.slice(x, begin, size);
      const all = x.arraySync();
      const got = y.dataSync();
      const want = [...indices(size)].map((index) =>
        at(
          all,
          index.map((v, i) => v + begin[i]),
        ),
      );
      expect(Array.from(got)).toEqual(want);
      expect(y.dtype).toBe(dtype);
      tf.dispose([x, y]);
    }
  });

  it('gives a concat the right gradient (it slices its upstream gradient once per part)', () => {
    const weights = tf.tensor2d([[1, 2, 3, 4, 5, 6]]);
    const [ga, gb] = tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.sum(tf.mul(tf.concat([a, b], 1), weights)))([
      tf.ones([1, 4]),
      tf.ones([1, 2]),
    ]);
    expect(Array.from(ga.dataSync())).toEqual([1, 2, 3, 4]);
    expect(Array.from(gb.dataSync())).toEqual([5, 6]);
    tf.dispose([weights, ga, gb]);
  });

  it("shares a clone's data: it outlives its source, and nothing leaks", () => {
    expect(tf.getKernel('Identity', 'wasm')?.kernelFunc.name).toBe('sharedIdentity');
    const before = tf.memory().numTensors;
    const source = tf.tensor1d([1, 2, 3]);
    const copy = tf.clone(source);
    source.dispose();
    expect(Array.from(copy.dataSync())).toEqual([1, 2, 3]);
    // A variable's assign swaps its data; an earlier clone keeps the old values.
    const first = tf.tensor1d([4, 5]);
    const v = tf.variable(first);
    const snapshot = tf.clone(v);
    const next = tf.tensor1d([6, 7]);
    v.assign(next);
    tf.dispose([first, next]);
    expect(Array.from(snapshot.dataSync())).toEqual([4, 5]);
    expect(Array.from(v.dataSync())).toEqual([6, 7]);
    tf.dispose([copy, snapshot, v]);
    expect(tf.memory().numTensors).toBe(before);
  });
});
