/**
 * The import boundaries of docs/architecture.md §2, checked by `npm run lint` (dependency-cruiser).
 * src/core's layers, from the ground up — a file imports from its own layer or below, never up:
 *   rng/text/types/errors, llm, tfjs → policy, envs, buffer → rl, data → experience → curriculum → train → domain
 *   → experiments
 * and src/core imports nothing of the page, the CLI, the Node stores, the workers or the benchmarks (src/bench).
 * src/bench is imported by the CLI's bench command alone; outside src/bench/node/ it runs in a browser page too.
 * The page's workers (src/app/workers/<name>/) and its browser storage (src/app/storage/) run inside workers:
 * they import no Svelte, and storage, which workers and pages share, imports no worker's host or client.
 */
const LAYERS = [
  ['rng\\.ts', 'text\\.ts', 'types\\.ts', 'errors\\.ts', 'llm/', 'tfjs/'],
  ['policy/', 'envs/', 'buffer/'],
  ['rl/', 'data/'],
  ['experience/'],
  ['curriculum/'],
  ['train/'],
  ['domain/'],
  ['experiments/'],
];
const core = (parts) => `^src/core/(${parts.join('|')})`;

/** One rule a layer: nothing in it imports from any layer above it. */
const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `core-layer-${i}-up`,
  comment: `src/core/{${layer.join(', ')}} imports only its own layer or below (docs/architecture.md §2.1)`,
  severity: 'error',
  from: { path: core(layer) },
  to: { path: core(LAYERS.slice(i + 1).flat()) },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'core-stays-core',
      comment:
        'src/core runs in Node, workers and the page: it never imports the page, its workers, the CLI or the Node stores',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/(app|bench|cli|node|sw|build)/' },
    },
    {
      name: 'bench-only-from-cli',
      comment: 'the page, its workers and the Node stores never run a benchmark: only the CLI imports src/bench',
      severity: 'error',
      from: { path: '^src/(app|node|sw|build)/' },
      to: { path: '^src/bench/' },
    },
    {
      name: 'bench-not-cli',
      comment: 'a benchmark returns figures; the CLI parses the options and prints the tables',
      severity: 'error',
      from: { path: '^src/bench/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'bench-browser-safe',
      comment: "src/bench outside node/ also runs in the buffer suite's browser page: no Node modules there",
      severity: 'error',
      from: { path: '^src/bench/', pathNot: '^src/bench/node/' },
      to: { path: '^src/(node|bench/node)/' },
    },
    {
      name: 'bench-browser-safe-builtins',
      comment: "src/bench outside node/ also runs in the buffer suite's browser page: no node: built-ins there",
      severity: 'error',
      from: { path: '^src/bench/', pathNot: '^src/bench/node/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'page-not-node',
      comment: 'the page and its workers never import the CLI or the Node-only stores',
      severity: 'error',
      from: { path: '^src/app/' },
      to: { path: '^src/(cli|node)/' },
    },
    {
      name: 'node-not-page',
      comment: 'the Node stores and worker threads serve the CLI: they never import the page or the CLI',
      severity: 'error',
      from: { path: '^src/node/' },
      to: { path: '^src/(app|cli)/' },
    },
    {
      name: 'workers-no-svelte',
      comment:
        'a worker has no DOM: the workers and the browser storage import no page, component or Svelte state class',
      severity: 'error',
      from: { path: '^src/app/(workers|storage)/' },
      to: { path: '(^src/app/(pages|components)/|\\.svelte(\\.ts)?$)' },
    },
    {
      name: 'storage-below-workers',
      comment: 'browser storage is shared by the page and the workers: it imports no worker host or client',
      severity: 'error',
      from: { path: '^src/app/storage/' },
      to: { path: '^src/app/workers/.*-(host|client)\\.ts$' },
    },
    {
      name: 'no-cycles-in-core',
      comment: 'a cycle in src/core means two files each need the other: one of them is in the wrong room',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // .svelte files hold TypeScript imports too.
    extraExtensionsToScan: ['.svelte'],
  },
};
