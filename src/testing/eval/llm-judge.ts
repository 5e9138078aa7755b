import { createActor, toPromise } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { createConversationMachine } from '../../machines/chart/conversation.js';
import type { ConversationOptions } from '../../machines/chart/options.js';
import type { RunOutput } from '../../machines/names/types.js';
import { conversationInput } from '../../machines/workflow/conversation-input.js';
import { type Message, type UserContentPart, userContentText } from '../../model/messages.js';
import type { Provider } from '../../model/provider.js';
import { isRecord } from '../../util/is-record.js';
import { JudgeVerdictError } from '../judge-verdict-error.js';
import { type Scorer, textOf } from './scorer.js';

/**
 * What {@link llmJudge} takes.
 *
 * @example
 * ```ts
 * const options: LlmJudgeOptions = { provider: judgeModel, rubric: 'Answers the question and cites a source.' };
 * ```
 */
export type LlmJudgeOptions = {
  /** The judge model (any provider: `openaiProvider(...)`, `anthropicProvider(...)`, …). */
  provider: Provider;
  /** What a good answer does, in words: the judge scores against this only. */
  rubric: string;
  /** The report's column. Default `judge`. */
  name?: string;
  /** Repairs of a verdict that is not the verdict object before the item gets an error. Default 1. */
  maxRepairs?: number;
  /** The judge model's prices, to count what judging cost (as a machine's `prices`). */
  prices?: ConversationOptions['prices'];
};

const verdictSchema = {
  type: 'object',
  properties: {
    score: { type: 'number', minimum: 0, maximum: 1, description: '0: fails the rubric, 1: meets it fully' },
    reason: { type: 'string', description: 'why, in one sentence' },
  },
  required: ['score', 'reason'],
  additionalProperties: false,
} as const;

const system = [
  'You are a strict evaluator of answers given by an assistant.',
  'Judge the answer by the rubric only: not by its style, not by what you would have said.',
  'A reference answer, when given, shows what is expected; an answer may word it differently.',
  'Give your verdict as the verdict object: score from 0 (fails the rubric) to 1 (meets it fully), and the reason in one sentence.',
].join('\n');

/** The task as the judge reads it: the prompt, a history as `role: text` lines (media as their labels), any other input as JSON. */
function taskText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (Array.isArray(input) && input.every((one) => isRecord(one) && typeof one.role === 'string'))
    return (input as Message[]).map((message) => `${message.role}: ${messageText(message)}`).join('\n');
  if (Array.isArray(input)) return userContentText(input as UserContentPart[]);
  return JSON.stringify(input) ?? String(input);
}

function messageText(message: Message): string {
  if (typeof message.content === 'string') return message.content;
  if (message.role === 'user') return userContentText(message.content);
  return message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : `[${part.type}]`)).join('');
}

/**
 * A scorer that asks a model to judge each answer against a rubric: the judge answers with a
 * structured verdict (`{ score: 0..1, reason }`, checked, repaired at most `maxRepairs` times).
 * A judge that gives no valid verdict, or fails, gives the item an error — never a pass.
 *
 * @example
 * ```ts
 * import { openaiProvider } from 'actorloop/openai';
 * import { evaluate, llmJudge, scorers } from 'actorloop/testing';
 *
 * const judge = llmJudge({ provider: openaiProvider({ model: 'gpt-4o-mini' }), rubric: 'Names the capital and nothing false.' });
 * const report = await evaluate({ machine, dataset: 'capitals.jsonl', scorers: [scorers.includes(), judge] });
 * ```
 */
export function llmJudge(options: LlmJudgeOptions): Scorer {
  if (!isRecord(options)) throw new InvalidOptionsError('llmJudge(options)', 'an object { provider, rubric, name?, maxRepairs? }', options);
  const { provider, rubric, name = 'judge', maxRepairs = 1, prices } = options;
  if (!isRecord(provider) || typeof provider.stream !== 'function')
    throw new InvalidOptionsError('llmJudge(options).provider', 'a provider (openaiProvider(...), anthropicProvider(...), …)', provider);
  if (typeof rubric !== 'string' || rubric.trim() === '')
    throw new InvalidOptionsError('llmJudge(options).rubric', 'the rubric in words', rubric);
  if (typeof name !== 'string' || name === '') throw new InvalidOptionsError('llmJudge(options).name', 'a non-empty string', name);
  if (!Number.isInteger(maxRepairs) || maxRepairs < 0)
    throw new InvalidOptionsError('llmJudge(options).maxRepairs', 'an integer ≥ 0', maxRepairs);
  const machine = createConversationMachine({
    provider,
    system,
    output: { schema: verdictSchema, name: 'verdict', description: 'The verdict on the answer', maxRepairs },
    ...(prices === undefined ? {} : { prices }),
  });
  return {
    name,
    async score({ item, output, expected, signal }) {
      const prompt = [
        `Rubric:\n${rubric}`,
        `The task the assistant was given:\n${taskText(item.input)}`,
        ...(expected === undefined ? [] : [`Reference answer:\n${typeof expected === 'string' ? expected : JSON.stringify(expected)}`]),
        `The assistant's answer:\n${textOf(output)}`,
      ].join('\n\n');
      const actor = createActor(machine, { input: conversationInput(prompt) });
      const cancel = () => actor.send({ type: 'cancel', reason: 'the eval was aborted' });
      signal.addEventListener('abort', cancel, { once: true });
      let verdict: RunOutput;
      try {
        actor.start();
        verdict = (await toPromise(actor)) as RunOutput;
      } finally {
        signal.removeEventListener('abort', cancel);
      }
      const object = verdict.object;
      if (verdict.status !== 'done' || !isRecord(object) || typeof object.score !== 'number') {
        throw new JudgeVerdictError(
          name,
          verdict.error ? `its run ended ${verdict.status}: ${verdict.error.message}` : `no verdict (its run ended ${verdict.status})`,
        );
      }
      return {
        score: object.score,
        ...(typeof object.reason === 'string' ? { reason: object.reason } : {}),
        usage: verdict.usage,
        ...(verdict.cost ? { costUsd: verdict.cost.total } : {}),
      };
    },
  };
}
