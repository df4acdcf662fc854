/**
 * NODE ONLY (src/node/): a child process that dies with its parent. When a parent is killed
 * (kill -9), its children are handed to another parent and their IPC channel closes; but a child
 * busy in a long job does not see the 'disconnect' event until the job yields. A small thread
 * watches the parent's pid instead, and ends the process the moment it changes.
 */
import { Worker } from 'node:worker_threads';

/** How often the watch looks (ms): the most a child outlives its parent. */
export const PARENT_WATCH_MS = 200;

const WATCH = `
const { workerData } = require('node:worker_threads');
setInterval(() => {
  if (process.ppid !== workerData.parent) process.kill(process.pid, 'SIGKILL');
}, workerData.everyMs);
`;

/** Ends this process (SIGKILL: nothing of its job is worth finishing) as soon as its parent is gone. */
export function exitWithParent(): void {
  const watch = new Worker(WATCH, { eval: true, workerData: { parent: process.ppid, everyMs: PARENT_WATCH_MS } });
  watch.unref(); // the watch never keeps the process alive by itself
}
