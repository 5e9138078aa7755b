import { ProviderError } from '../../model/errors/provider-error.js';
import type { ProviderEvent } from '../../model/provider.js';
import { ResponseAssembler } from './response-assembler.js';
import type { OpenAIResponsesResponse, OpenAIResponsesStreamEvent } from './wire-types.js';

/**
 * Options of {@link fromResponsesStream} and {@link fromResponsesResponse}.
 *
 * @example
 * ```ts
 * const options: ResponsesReadOptions = { keepIds: false, signal: request.signal };
 * ```
 */
export type ResponsesReadOptions = {
  /** Keep item and response ids in the content; set it when the request had `store: true`. */
  keepIds: boolean;
  /**
   * The request's signal. The SDK ends its stream quietly when the request is aborted, which would
   * otherwise look like a cut connection; with the signal the two are told apart.
   */
  signal?: AbortSignal;
};

/**
 * Turns the SDK's Responses stream (`responses.create({ stream: true })`) into provider events:
 * `response.output_text.delta` → `text.delta`, reasoning summary deltas → `reasoning.delta` (parts
 * joined by a blank line), `response.function_call_arguments.delta` → `tool.call.delta` (keyed by
 * `call_id`), and at `response.completed` / `response.incomplete` one `finish` with the whole
 * content and usage. A function call the response was cut off in is dropped from the content.
 * `response.failed` and `error` events throw a classified {@link ProviderError}; a stream that ends
 * without a terminal event is incomplete and fails as retryable.
 *
 * @example
 * ```ts
 * const stream = await client.responses.create({ ...body, stream: true }, { signal });
 * for await (const event of fromResponsesStream(stream, { keepIds: false, signal })) {
 *   if (event.type === 'text.delta') process.stdout.write(event.delta);
 * }
 * ```
 */
export async function* fromResponsesStream(
  events: AsyncIterable<OpenAIResponsesStreamEvent>,
  options: ResponsesReadOptions,
): AsyncGenerator<ProviderEvent> {
  const assembler = new ResponseAssembler({ keepIds: options.keepIds });
  for await (const event of events) {
    if (event === null || typeof event !== 'object') {
      throw new ProviderError(`expected a Responses stream event object, got ${event === null ? 'null' : typeof event}`, {
        code: 'bad_request',
        retryable: false,
      });
    }
    yield* assembler.event(event);
    // Nothing follows the terminal event; the caller has the whole response.
    if (assembler.finished) return;
  }
  if (options.signal?.aborted) throw new ProviderError('the request was aborted', { code: 'aborted', retryable: false });
  throw new ProviderError('the stream ended without response.completed, .incomplete or .failed: the response is incomplete', {
    code: 'incomplete_stream',
    retryable: true,
  });
}

/**
 * A non-streamed response (`responses.create({ stream: false })`) as the same provider events a
 * stream gives: one delta per text, reasoning and call, then `finish`. A body with
 * `status: "failed"` throws a classified {@link ProviderError}.
 *
 * @example
 * ```ts
 * const response = await client.responses.create({ ...body, stream: false }, { signal });
 * for (const event of fromResponsesResponse(response, { keepIds: false })) console.log(event.type);
 * ```
 */
export function* fromResponsesResponse(response: OpenAIResponsesResponse, options: ResponsesReadOptions): Generator<ProviderEvent> {
  yield* new ResponseAssembler({ keepIds: options.keepIds }).finish(response);
}
