/**
 * The experience model (design.md §3; paper §2): the reasoning LLM model, its prompts and domain
 * cards, the noisy oracle, DreamEnv, the fidelity audit and the dream-cost benchmark.
 */
export * from './types';
export * from './domain-card';
export * from './prompts';
export * from './reasoning-model';
export * from './noisy-oracle';
export * from './dream-env';
export * from './audit';
export * from './bench';
export * from './seed-buffer';
