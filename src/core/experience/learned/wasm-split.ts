/**
 * A SplitV kernel for tfjs-wasm that slices in place. wasm's own SplitV calls its internal slice,
 * which first copies the whole input out of the heap, once per part: splitting a batch into its
 * 16 rows copied it 16 times, and the encoder's window gradient (a 5-way concat's) cost ~45 ms.
 * This one runs the registered Slice kernel per part (backend.ts replaces it with one that reads
 * the input in place). The values are the same; tf.split's gradient is one Concat.
 */
import * as tf from '@tensorflow/tfjs';

let registered = false;

/** Registers the in-place SplitV on the wasm backend (once; nothing on other backends). */
export function useInPlaceSplit(): void {
  if (registered || tf.getBackend() !== 'wasm') return;
  registered = true;
  const slice = tf.getKernel('Slice', 'wasm');
  if (!slice || tf.getKernel('SplitV', 'wasm')?.kernelFunc.name === 'splitInPlace') return;
  tf.unregisterKernel('SplitV', 'wasm');
  tf.registerKernel({
    kernelName: 'SplitV',
    backendName: 'wasm',
    kernelFunc: function splitInPlace({ inputs, attrs, backend }) {
      const x = inputs.x as tf.TensorInfo;
      const { numOrSizeSplits, axis } = attrs as unknown as { numOrSizeSplits: number | number[]; axis: number };
      const along = tf.util.parseAxisParam(axis, x.shape)[0];
      const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, numOrSizeSplits, along);
      const begin = x.shape.map(() => 0);
      return sizes.map((n) => {
        const size = x.shape.slice();
        size[along] = n;
        const part = slice.kernelFunc({ inputs: { x }, attrs: { begin: begin.slice(), size }, backend });
        begin[along] += n;
        return part as tf.TensorInfo;
      });
    },
  });
}
