/**
 * State of the Setup page: what this browser's hardware and storage can do. WebGPU through
 * core's checkWebGpu()/pickQuantization(); storage through the replay buffer store's
 * estimate()/requestPersistence() (navigator.storage), which never open the database.
 */
import {
  checkWebGpu,
  pickQuantization,
  type QuantizationChoice,
  type WebGpuCapabilities,
} from '../../../core/llm/capabilities';
import { IndexedDbBufferStore } from '../../../core/buffer/stores/indexeddb';

export interface StorageReport {
  usage: number | null;
  quota: number | null;
  persisted: boolean | null;
}

/** The adapter limits the WebGPU card lists: the ones that bound a WebLLM model's size. */
export const ADAPTER_LIMIT_NAMES = [
  'maxBufferSize',
  'maxStorageBufferBindingSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxStorageBuffersPerShaderStage',
] as const;

export class SetupReport {
  gpu = $state.raw<WebGpuCapabilities | null>(null);
  quantization = $state.raw<QuantizationChoice | null>(null);
  storage = $state.raw<StorageReport | null>(null);
  /** When the storage estimate was read (it grows while runs train; Buffer reads the same one). */
  storageReadAt = $state<string | null>(null);
  persistAnswer = $state<string | null>(null);
  checking = $state(false);
  cores = typeof navigator !== 'undefined' ? (navigator.hardwareConcurrency ?? null) : null;
  /** A software adapter (SwiftShader, WARP) runs WebLLM on the CPU: a download there is asked for twice. */
  readonly softwareAdapter = $derived(Boolean(this.gpu?.adapter?.isFallbackAdapter));
  /** The second ask: a WebLLM download on a software adapter, accepted anyway. */
  slowAdapterAccepted = $state(false);
  private readonly store = new IndexedDbBufferStore();

  async check(): Promise<void> {
    this.checking = true;
    try {
      const [gpu, estimate, persisted] = await Promise.all([
        checkWebGpu(),
        this.store.estimate(),
        navigator.storage?.persisted?.().catch(() => null) ?? Promise.resolve(null),
      ]);
      this.gpu = gpu;
      this.quantization = pickQuantization(gpu);
      this.storage = { ...estimate, persisted };
      this.storageReadAt = new Date().toLocaleTimeString();
    } finally {
      this.checking = false;
    }
  }

  /** Reads the storage estimate again (runs in other tabs and workers write meanwhile). */
  async refreshStorage(): Promise<void> {
    const estimate = await this.store.estimate();
    this.storage = { ...estimate, persisted: this.storage?.persisted ?? null };
    this.storageReadAt = new Date().toLocaleTimeString();
  }

  /** navigator.storage.persist(), with the browser's answer in words. */
  async askPersistence(): Promise<void> {
    const answer = await this.store.requestPersistence();
    this.persistAnswer = answer.reason;
    if (this.storage) this.storage = { ...this.storage, persisted: answer.persisted };
  }
}

export function formatBytes(bytes: number | null): string {
  if (bytes === null) return 'unknown';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes,
    u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(u === 0 ? 0 : 1)} ${units[u]}`;
}
