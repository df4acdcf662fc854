/**
 * Task clusters as curriculum groups (the DreamGym paper's reward-entropy criterion, Eq. 7): for
 * PPO "tasks can be first clustered using a semantic embedder, and each cluster essentially forms
 * a group G from which task variations can be generated". A cluster's reward variance
 * V = p(1 − p) pools the rollouts of its similar tasks, so it is defined even with one rollout per
 * task, where a single task's V is always 0.
 *
 * Embedding: the instruction through the hashed n-gram embedder (unit vectors, so squared
 * Euclidean distance is 2 − 2·cosine). Clustering: k-means with k-means++ seeding from a seeded
 * Rng, Lloyd iterations until no assignment changes; empty clusters are re-seeded with the point
 * farthest from its centroid. Deterministic in (vectors, k, rng).
 */
import { HashedNgramEmbedder } from '../buffer/embedders';
import type { Rng } from '../rng';
import type { Task } from '../types';

/** One curriculum group's outcome: a task and how many of its rollouts succeeded. */
export interface GroupOutcome {
  task: Task;
  successes: number;
  rollouts: number;
}

function distance2(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    s += d * d;
  }
  return s;
}

export interface KMeansResult {
  /** Cluster index of every vector. */
  assignment: Int32Array;
  centroids: Float32Array[];
  iterations: number;
}

/** k-means (k-means++ seeding, Lloyd iterations); k is clamped to 1..n. */
export function kMeans(vectors: readonly Float32Array[], k: number, rng: Rng, maxIterations = 100): KMeansResult {
  const n = vectors.length;
  if (n === 0) return { assignment: new Int32Array(0), centroids: [], iterations: 0 };
  k = Math.max(1, Math.min(Math.floor(k), n));
  const dims = vectors[0].length;

  // ---- k-means++: each next centre drawn with probability ∝ squared distance to the nearest one
  const centroids: Float32Array[] = [Float32Array.from(vectors[rng.int(0, n - 1)])];
  const nearest = vectors.map((v) => distance2(v, centroids[0]));
  while (centroids.length < k) {
    const total = nearest.reduce((s, d) => s + d, 0);
    const index = total > 0 ? rng.weightedIndex(nearest) : rng.int(0, n - 1);
    const centre = Float32Array.from(vectors[index]);
    centroids.push(centre);
    for (let i = 0; i < n; i++) nearest[i] = Math.min(nearest[i], distance2(vectors[i], centre));
  }

  // ---- Lloyd iterations --------------------------------------------------------------------
  const assignment = new Int32Array(n).fill(-1);
  let iterations = 0;
  for (; iterations < maxIterations; iterations++) {
    let changed = false;
    for (let i = 0; i < n; i++) {
      let best = 0,
        bestD = Infinity;
      for (let c = 0; c < k; c++) {
        const d = distance2(vectors[i], centroids[c]);
        if (d < bestD) {
          bestD = d;
          best = c;
        }
      }
      if (assignment[i] !== best) {
        assignment[i] = best;
        changed = true;
      }
    }
    if (!changed) break;
    const sums = Array.from({ length: k }, () => new Float64Array(dims));
    const counts = new Int32Array(k);
    for (let i = 0; i < n; i++) {
      counts[assignment[i]]++;
      const s = sums[assignment[i]];
      for (let j = 0; j < dims; j++) s[j] += vectors[i][j];
    }
    for (let c = 0; c < k; c++) {
      if (counts[c] > 0) {
        centroids[c] = Float32Array.from(sums[c], (x) => x / counts[c]);
        continue;
      }
      // An empty cluster takes the point farthest from its own centroid.
      let far = 0,
        farD = -1;
      for (let i = 0; i < n; i++) {
        const d = distance2(vectors[i], centroids[assignment[i]]);
        if (d > farD) {
          farD = d;
          far = i;
        }
      }
      centroids[c] = Float32Array.from(vectors[far]);
    }
  }
  return { assignment, centroids, iterations };
}

/** A cluster of similar tasks as one curriculum group: its members and their pooled outcomes. */
export interface TaskCluster {
  members: GroupOutcome[];
  successes: number;
  rollouts: number;
}

const embedder = new HashedNgramEmbedder();

/** Clusters an iteration's task groups by instruction; k = 0 picks round(√(number of tasks)). */
export function clusterTasks(groups: readonly GroupOutcome[], k: number, rng: Rng): TaskCluster[] {
  if (groups.length === 0) return [];
  const vectors = groups.map((g) => embedder.embedOne(g.task.instruction));
  const { assignment, centroids } = kMeans(vectors, k > 0 ? k : Math.round(Math.sqrt(groups.length)), rng);
  const clusters: TaskCluster[] = centroids.map(() => ({ members: [], successes: 0, rollouts: 0 }));
  groups.forEach((g, i) => {
    const c = clusters[assignment[i]];
    c.members.push(g);
    c.successes += g.successes;
    c.rollouts += g.rollouts;
  });
  return clusters.filter((c) => c.members.length > 0);
}

/**
 * Seeds from clusters: the top-m clusters with pooled V > 0 (V descending, then p ascending, then
 * the smallest member id), and from each the member whose own success rate is nearest the
 * cluster's. The returned outcome carries the cluster's pooled counts, so the variation's
 * direction (harder when p ≥ 0.5) follows the cluster.
 */
export function selectClusterSeeds(clusters: readonly TaskCluster[], m: number): GroupOutcome[] {
  const id = (c: TaskCluster) => c.members.map((g) => g.task.id).sort()[0];
  return clusters
    .map((c) => {
      const p = c.rollouts ? c.successes / c.rollouts : 0;
      return { c, p, v: p * (1 - p) };
    })
    .filter((x) => x.v > 0)
    .sort((a, b) => b.v - a.v || a.p - b.p || (id(a.c) < id(b.c) ? -1 : id(a.c) > id(b.c) ? 1 : 0))
    .slice(0, Math.max(0, m))
    .map(({ c, p }) => {
      const rate = (g: GroupOutcome) => (g.rollouts ? g.successes / g.rollouts : 0);
      const representative = [...c.members].sort(
        (a, b) =>
          Math.abs(rate(a) - p) - Math.abs(rate(b) - p) || (a.task.id < b.task.id ? -1 : a.task.id > b.task.id ? 1 : 0),
      )[0];
      return { task: representative.task, successes: c.successes, rollouts: c.rollouts };
    });
}
