/**
 * The learned model's decoder, one of two engines over the same network:
 *   'fused'  the default: fused-network.ts on the WebAssembly kernel, with continuous batching
 *   'tfjs'   the reference: the tfjs network with its KV cache (decode-cache.ts), static batches
 * Both run the same grammar and choice (decode.ts); they differ only in float order, and tests hold
 * them to the same answers. A model's weights are frozen once it decodes (it is made from its files),
 * so the fused copy is made once.
 */
import { buildMasks, decodeBatch, type AnswerKind, type DecodeLimits, type Decoded, type Sampling } from './decode';
import { decodeFused } from './fused-decode';
import { FusedNetwork } from './fused-network';
import type { Sequence } from './format';
import type { ExperienceNetwork } from './network';
import type { Tokenizer, Tokens } from './tokenizer';

export type DecoderKind = 'fused' | 'tfjs';
export const DECODER_KINDS: readonly DecoderKind[] = ['fused', 'tfjs'];

export class Decoder {
  private readonly masks: ReturnType<typeof buildMasks>;
  private fused: FusedNetwork | null = null;

  constructor(
    readonly net: ExperienceNetwork,
    readonly tokenizer: Tokenizer,
    readonly limits: DecodeLimits,
    readonly kind: DecoderKind = 'fused',
    /** Rows the fused decoder keeps in flight at once (its memory is sized for them). */
    readonly capacity = 64,
  ) {
    this.masks = buildMasks(tokenizer);
  }

  async decode(
    contexts: readonly Sequence[],
    prompts: readonly Tokens[],
    kinds: readonly AnswerKind[],
    sampling?: Sampling,
  ): Promise<Decoded[]> {
    if (this.kind === 'tfjs')
      return decodeBatch(this.net, this.tokenizer, this.masks, contexts, prompts, kinds, this.limits, sampling);
    this.fused ??= FusedNetwork.fromNetwork(this.net, this.capacity);
    const { tokenizer, masks, limits } = this;
    return decodeFused(this.fused, tokenizer, masks.allowedIds, contexts, prompts, kinds, limits, sampling);
  }

  /** Floating-point operations the fused decoder ran so far (0 with tfjs). */
  get flops(): number {
    return this.fused?.flops ?? 0;
  }

  dispose(): void {
    this.masks.table.dispose();
    this.fused = null;
  }
}
