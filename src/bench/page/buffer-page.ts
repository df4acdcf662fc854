/** Runs the replay-buffer benchmarks in the browser: IndexedDB insert/load and retrieval latency. */
import { IndexedDbBufferStore } from '../../core/buffer/stores/indexeddb';
import { benchStoreInsertAndLoad } from '../buffer-stores';
import { benchRetrieval } from '../buffer-retrieval';

const DB = 'dreamgym-buffer-bench';

async function runBufferBench(n: number) {
  await IndexedDbBufferStore.deleteDatabase(DB);
  const store = await IndexedDbBufferStore.open({ name: DB });
  const result = await benchStoreInsertAndLoad(store, n, {
    reopen: async () => {
      await store.close();
      return IndexedDbBufferStore.open({ name: DB });
    },
  });
  const estimate = await navigator.storage?.estimate?.();
  await IndexedDbBufferStore.deleteDatabase(DB);
  const retrieval = benchRetrieval({ sizes: [1000, 10_000, 100_000, 300_000], dims: 256, k: 8, queries: 20 });
  return { store: result, retrieval, storageUsageBytes: estimate?.usage ?? null };
}

(window as unknown as { runBufferBench: typeof runBufferBench }).runBufferBench = runBufferBench;
document.body.dataset.ready = 'true';
