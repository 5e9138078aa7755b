import type { ProviderError } from '../../model/errors/provider-error.js';
import type { Provider } from '../../model/provider.js';
import type { Effects } from '../names/effects.js';
import { freshAttempt } from '../rounds/fresh-attempt.js';
import { runErrorOf } from './request-failure.js';
import type { ConversationContext } from '../names/types.js';

/** How a provider is named in `provider.fallback`: its name, and its model when it has one. */
export function providerLabel(provider: Pick<Provider, 'name' | 'model'>): string {
  return provider.model === undefined ? provider.name : `${provider.name}:${provider.model}`;
}

/**
 * Whether a failed request goes to the next provider of the list: its retries are over (the guard
 * before this one said no) on a retryable error, and there is a next provider. A fatal error
 * (400, 401, …) would fail there too, so it does not fall back.
 */
export function canFallBack(
  context: Pick<ConversationContext, 'control'>,
  failure: Pick<ProviderError, 'retryable'>,
  providers: number,
): boolean {
  return failure.retryable && context.control.provider + 1 < providers;
}

/** The next provider takes the same request, as a first attempt; `provider.fallback` says why. */
export function fellBack(
  context: Pick<ConversationContext, 'control' | 'stream'>,
  providers: ReadonlyArray<Pick<Provider, 'name' | 'model'>>,
  failure: ProviderError,
): Effects {
  const from = providers[context.control.provider];
  const to = providers[context.control.provider + 1];
  if (!from || !to) return {};
  return {
    context: { control: { ...context.control, provider: context.control.provider + 1 }, attempt: 1, ...freshAttempt },
    emitted: [
      {
        type: 'provider.fallback',
        from: providerLabel(from),
        to: providerLabel(to),
        error: runErrorOf(failure),
        discardPartial: context.stream.partial,
      },
    ],
  };
}
