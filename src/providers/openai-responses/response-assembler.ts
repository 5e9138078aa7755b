import { classifyResponseFailure } from '../errors/classify-response-failure.js';
import type { ProviderError } from '../../model/errors/provider-error.js';
import type { ProviderEvent } from '../../model/provider.js';
import { emptyUsage } from '../../model/usage.js';
import { finishOf, fromResponsesUsage, isRefusal, isWholeCall, messageText, partsFromOutput, reasoningText } from './responses-output.js';
import type { OpenAIResponsesOutputItem, OpenAIResponsesResponse, OpenAIResponsesStreamEvent } from './wire-types.js';

type DeltaEvent = Exclude<ProviderEvent, { type: 'finish' }>;

/** One output item as the stream has built it so far, and what its deltas already showed. */
type Draft = {
  index: number;
  type: string;
  id?: string;
  callId?: string;
  name?: string;
  /** The item of `output_item.done` (or, before it, of `.added`). */
  item?: OpenAIResponsesOutputItem;
  done: boolean;
  /** Message text, function arguments, reasoning text as streamed (separators included). */
  text: string;
  args: string;
  reasoning: string;
  summaryParts: number;
  /** Whether the call's start (its name) was announced. */
  announced: boolean;
};

/**
 * Options of {@link ResponseAssembler}.
 *
 * @example
 * ```ts
 * const assembler = new ResponseAssembler({ keepIds: false });
 * ```
 */
export type ResponseAssemblerOptions = {
  /** Keep item and response ids in the content (`store: true`): only stored items can be referred to. */
  keepIds: boolean;
};

/**
 * Builds one response from Responses stream events: deltas as they come, the whole content at
 * the terminal event. Items are kept by `output_index`; their final form is the item of
 * `output_item.done` (whose `encrypted_content` is the one to send back), else the terminal
 * response's, else what the deltas built. Whatever the deltas did not show (a server that sends
 * no deltas, a non-streamed response) is emitted as one more delta before the finish, so deltas
 * always add up to the content.
 *
 * @example
 * ```ts
 * const assembler = new ResponseAssembler({ keepIds: false });
 * for await (const event of stream) {
 *   for (const out of assembler.event(event)) console.log(out);
 *   if (assembler.finished) break;
 * }
 * ```
 */
export class ResponseAssembler {
  private readonly drafts = new Map<number, Draft>();
  private readonly byItemId = new Map<string, Draft>();
  private responseId: string | undefined;
  private model: string | undefined;
  private done = false;

  constructor(private readonly options: ResponseAssemblerOptions) {}

  /** True once the terminal event (`response.completed` / `.incomplete`) has been read. */
  get finished(): boolean {
    return this.done;
  }

  /**
   * The provider events one stream event leads to: deltas, and after the terminal event the
   * remaining deltas and `finish`. Throws a classified error for `response.failed` and `error`.
   */
  event(event: OpenAIResponsesStreamEvent): ProviderEvent[] {
    if (this.done || typeof event !== 'object' || event === null) return [];
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        if (typeof event.response?.id === 'string') this.responseId = event.response.id;
        if (typeof event.response?.model === 'string') this.model = event.response.model;
        return [];
      case 'response.output_item.added':
        return event.item ? this.itemAdded(event.item, event.output_index) : [];
      case 'response.output_item.done':
        return event.item ? this.itemDone(event.item, event.output_index) : [];
      case 'response.output_text.delta':
      case 'response.refusal.delta': {
        const draft = this.draftFor(event, 'message');
        const delta = event.delta ?? '';
        if (delta === '') return [];
        draft.text += delta;
        return [{ type: 'text.delta', delta }];
      }
      case 'response.reasoning_summary_part.added':
        return this.summaryPart(this.draftFor(event, 'reasoning'), event.summary_index ?? 0);
      case 'response.reasoning_summary_text.delta': {
        const draft = this.draftFor(event, 'reasoning');
        const out = this.summaryPart(draft, event.summary_index ?? 0);
        const delta = event.delta ?? '';
        if (delta !== '') {
          draft.reasoning += delta;
          out.push({ type: 'reasoning.delta', delta });
        }
        return out;
      }
      case 'response.reasoning_text.delta': {
        const draft = this.draftFor(event, 'reasoning');
        const delta = event.delta ?? '';
        if (delta === '') return [];
        draft.reasoning += delta;
        return [{ type: 'reasoning.delta', delta }];
      }
      case 'response.function_call_arguments.delta': {
        const draft = this.draftFor(event, 'function_call');
        const out = this.announce(draft);
        const delta = event.delta ?? '';
        draft.args += delta;
        if (delta !== '') out.push({ type: 'tool.call.delta', toolCallId: this.callIdOf(draft), argsDelta: delta });
        return out;
      }
      case 'response.function_call_arguments.done':
        return typeof event.arguments === 'string' ? this.catchUpArgs(this.draftFor(event, 'function_call'), event.arguments) : [];
      case 'response.completed':
      case 'response.incomplete':
        return this.finish(event.response ?? {});
      case 'response.failed':
        throw this.failure(event.response ?? {});
      case 'error':
        throw classifyResponseFailure(event, 'error event', undefined, this.model === undefined ? {} : { model: this.model });
      default:
        // Lifecycle and content-part events, annotations, built-in tool progress: nothing to show.
        return [];
    }
  }

  /**
   * The remaining deltas and the `finish` event of a response: the terminal event's payload, or a
   * whole non-streamed response. Throws a classified error for a response with `status: "failed"`.
   */
  finish(response: OpenAIResponsesResponse): ProviderEvent[] {
    this.done = true;
    if (response.status === 'failed') throw this.failure(response);
    const responseId = typeof response.id === 'string' ? response.id : this.responseId;
    const model = typeof response.model === 'string' ? response.model : this.model;
    const items = this.finalItems(response);
    const status = response.status ?? undefined;
    const out: ProviderEvent[] = [];
    for (const { item, draft } of items) {
      // A call cut off is dropped: nothing more of it to show.
      if (item.type !== 'function_call' || isWholeCall(item, status)) out.push(...this.catchUp(item, draft));
    }
    const finalItems = items.map(({ item }) => item);
    const content = partsFromOutput(finalItems, { status, responseId, keepIds: this.options.keepIds });
    const messages = finalItems.filter((item) => item.type === 'message');
    const refused = messages.length > 0 && messages.every(isRefusal);
    out.push({
      type: 'finish',
      content,
      ...finishOf(response, content, refused),
      usage: response.usage ? fromResponsesUsage(response.usage) : emptyUsage(),
      ...(model === undefined ? {} : { model }),
      // The response's id names it in traces whether or not it was stored.
      ...(responseId === undefined ? {} : { responseId }),
    });
    return out;
  }

  /** A failed response as a classified error, with what the attempt reported it cost. */
  private failure(response: OpenAIResponsesResponse): ProviderError {
    const model = typeof response.model === 'string' ? response.model : this.model;
    return classifyResponseFailure(response.error, 'the response failed', undefined, {
      ...(response.usage ? { usage: fromResponsesUsage(response.usage) } : {}),
      ...(model === undefined ? {} : { model }),
    });
  }

  private itemAdded(item: OpenAIResponsesOutputItem, index: number | undefined): DeltaEvent[] {
    const draft = this.draftAt(index, item);
    draft.item = item;
    if (item.type !== 'function_call') return [];
    const out = this.announce(draft);
    // Some servers send the arguments whole with the item.
    if (typeof item.arguments === 'string' && item.arguments !== '') out.push(...this.catchUpArgs(draft, item.arguments));
    return out;
  }

  private itemDone(item: OpenAIResponsesOutputItem, index: number | undefined): DeltaEvent[] {
    const draft = this.draftAt(index, item);
    draft.item = item;
    draft.done = true;
    return this.catchUp(item, draft);
  }

  /** The draft an item belongs to, found by id, then by output index, else a new one. */
  private draftAt(index: number | undefined, item: OpenAIResponsesOutputItem): Draft {
    const known =
      (item.id !== undefined ? this.byItemId.get(item.id) : undefined) ?? (index !== undefined ? this.drafts.get(index) : undefined);
    const draft = known ?? this.newDraft(index, item.type, item.id);
    draft.type = item.type;
    if (item.id !== undefined && draft.id === undefined) {
      draft.id = item.id;
      this.byItemId.set(item.id, draft);
    }
    if (typeof item.call_id === 'string') draft.callId = item.call_id;
    if (typeof item.name === 'string') draft.name = item.name;
    return draft;
  }

  /** The draft a delta event refers to (by `item_id`, then `output_index`); a delta without its item starts one. */
  private draftFor(event: OpenAIResponsesStreamEvent, type: string): Draft {
    const known =
      (event.item_id !== undefined ? this.byItemId.get(event.item_id) : undefined) ??
      (event.output_index !== undefined ? this.drafts.get(event.output_index) : undefined);
    return known ?? this.newDraft(event.output_index, type, event.item_id);
  }

  private newDraft(index: number | undefined, type: string, id: string | undefined): Draft {
    const draft: Draft = {
      index: index ?? (this.drafts.size === 0 ? 0 : Math.max(...this.drafts.keys()) + 1),
      type,
      done: false,
      text: '',
      args: '',
      reasoning: '',
      summaryParts: 0,
      announced: false,
    };
    if (id !== undefined) {
      draft.id = id;
      this.byItemId.set(id, draft);
    }
    this.drafts.set(draft.index, draft);
    return draft;
  }

  private callIdOf(draft: Draft): string {
    return draft.callId ?? draft.id ?? `call_${draft.index}`;
  }

  /** The first delta of a call names its tool, as on the other wires. */
  private announce(draft: Draft): DeltaEvent[] {
    if (draft.announced) return [];
    draft.announced = true;
    return [{ type: 'tool.call.delta', toolCallId: this.callIdOf(draft), ...(draft.name ? { name: draft.name } : {}), argsDelta: '' }];
  }

  /** Summary parts are shown joined by a blank line, as the reasoning part's text holds them. */
  private summaryPart(draft: Draft, index: number): DeltaEvent[] {
    const out: DeltaEvent[] = [];
    while (draft.summaryParts <= index) {
      if (draft.summaryParts > 0) {
        draft.reasoning += '\n\n';
        out.push({ type: 'reasoning.delta', delta: '\n\n' });
      }
      draft.summaryParts++;
    }
    return out;
  }

  private catchUpArgs(draft: Draft, args: string): DeltaEvent[] {
    const out = this.announce(draft);
    if (args.startsWith(draft.args) && args.length > draft.args.length) {
      out.push({ type: 'tool.call.delta', toolCallId: this.callIdOf(draft), argsDelta: args.slice(draft.args.length) });
    }
    draft.args = args;
    return out;
  }

  /** Deltas for what an item's final form holds beyond what was streamed of it. */
  private catchUp(item: OpenAIResponsesOutputItem, draft: Draft | undefined): DeltaEvent[] {
    const target = draft ?? this.newDraft(undefined, item.type, item.id);
    switch (item.type) {
      case 'message': {
        const text = messageText(item);
        const shown = target.text;
        target.text = text;
        return text.startsWith(shown) && text.length > shown.length ? [{ type: 'text.delta', delta: text.slice(shown.length) }] : [];
      }
      case 'reasoning': {
        const text = reasoningText(item);
        const shown = target.reasoning;
        target.reasoning = text;
        return text.startsWith(shown) && text.length > shown.length ? [{ type: 'reasoning.delta', delta: text.slice(shown.length) }] : [];
      }
      case 'function_call':
        if (typeof item.call_id === 'string') target.callId = item.call_id;
        if (typeof item.name === 'string') target.name = item.name;
        return this.catchUpArgs(target, typeof item.arguments === 'string' ? item.arguments : target.args);
      default:
        return [];
    }
  }

  /**
   * The items of the response, in output order: the terminal response's list (each replaced by
   * its `output_item.done` form), then streamed items it does not list, each with its draft.
   */
  private finalItems(response: OpenAIResponsesResponse): Array<{ item: OpenAIResponsesOutputItem; draft: Draft | undefined }> {
    const result: Array<{ item: OpenAIResponsesOutputItem; draft: Draft | undefined }> = [];
    const used = new Set<Draft>();
    const listed = Array.isArray(response.output) ? response.output : [];
    for (const [index, listedItem] of listed.entries()) {
      if (typeof listedItem !== 'object' || listedItem === null) continue;
      const draft = (listedItem.id !== undefined ? this.byItemId.get(listedItem.id) : undefined) ?? this.drafts.get(index);
      const matches = draft !== undefined && !used.has(draft) && (draft.id === undefined || draft.id === listedItem.id);
      if (matches) used.add(draft);
      result.push({ item: matches && draft.done && draft.item ? draft.item : listedItem, draft: matches ? draft : undefined });
    }
    const rest = [...this.drafts.values()].filter((draft) => !used.has(draft)).sort((a, b) => a.index - b.index);
    for (const draft of rest) result.push({ item: draft.done && draft.item ? draft.item : this.partialItem(draft), draft });
    return result;
  }

  /** An item that never got its `output_item.done`, as far as the deltas built it. */
  private partialItem(draft: Draft): OpenAIResponsesOutputItem {
    const base = { ...(draft.item ?? {}), type: draft.type, ...(draft.id === undefined ? {} : { id: draft.id }), status: 'in_progress' };
    switch (draft.type) {
      case 'message':
        return { ...base, content: [{ type: 'output_text', text: draft.text }] };
      case 'function_call':
        return { ...base, call_id: this.callIdOf(draft), name: draft.name ?? '', arguments: draft.args };
      case 'reasoning':
        // Summary parts cannot be told apart any more; without `.done` there is no trustworthy encrypted content.
        return {
          type: 'reasoning',
          ...(draft.id === undefined ? {} : { id: draft.id }),
          summary: draft.reasoning === '' ? [] : [{ type: 'summary_text', text: draft.reasoning }],
        };
      default:
        return base;
    }
  }
}
