// NODE ONLY: starts train-worker.ts in a worker thread through tsx (a thread does not inherit the CLI's loader in every host, e.g. under vitest).
import { register } from 'tsx/esm/api';

register();
await import('./train-worker.ts');
