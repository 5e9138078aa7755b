import { describe, expect, it } from 'vitest';
import { findMessagesProblem, type AssistantMessage, type Message } from '../src/model/messages.js';
import { toResponsesInput, toResponsesTools } from '../src/providers/openai-responses/to-responses-input.js';

const user: Message = { role: 'user', content: 'Weather in Paris?' };
const call = (id: string, extra: object = {}) => ({
  type: 'tool-call' as const,
  toolCallId: id,
  toolName: 'weather',
  args: { city: 'Paris' },
  ...extra,
});
const results = (...ids: string[]): Message => ({
  role: 'tool',
  content: ids.map((id) => ({ type: 'tool-result', toolCallId: id, toolName: 'weather', result: 'sunny' })),
});
const summary = (...texts: string[]) => texts.map((text) => ({ type: 'summary_text', text }));

describe('toResponsesInput: stateless (store: false)', () => {
  it('sends encrypted reasoning verbatim right before the item that followed it, never an id', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'Need the weather.',
          providerMetadata: { openai: { itemId: 'rs_1', responseId: 'resp_1', encryptedContent: 'enc-1' } },
        },
        { type: 'text', text: 'Checking.', providerMetadata: { openai: { itemId: 'msg_1', responseId: 'resp_1', phase: 'commentary' } } },
        { type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'enc-2' } } },
        call('call_1', { providerMetadata: { openai: { itemId: 'fc_1', responseId: 'resp_1' } } }),
      ],
    };
    expect(toResponsesInput([user, assistant, results('call_1')], { stored: false }).input).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { type: 'reasoning', summary: summary('Need the weather.'), encrypted_content: 'enc-1' },
      { role: 'assistant', content: 'Checking.', phase: 'commentary' },
      { type: 'reasoning', summary: [], encrypted_content: 'enc-2' },
      { type: 'function_call', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
    ]);
  });

  it('gives back the summary parts kept apart, else the text as one part', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'a\n\nb', providerMetadata: { openai: { encryptedContent: 'enc', summary: ['a', 'b'] } } },
        { type: 'text', text: 'ok' },
      ],
    };
    expect(toResponsesInput([assistant], { stored: false }).input[0]).toEqual({
      type: 'reasoning',
      summary: summary('a', 'b'),
      encrypted_content: 'enc',
    });
  });

  it('drops what this API cannot take: reasoning without encrypted content, Anthropic thinking, redacted thinking, reasoning nothing followed', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'DeepSeek reasoning_content' },
        { type: 'reasoning', text: 'Claude thinking', signature: 'EqQBCkgIARAB' },
        { type: 'redacted-reasoning', data: 'EmwKAhgB' },
        { type: 'reasoning', text: 'stored only', providerMetadata: { openai: { itemId: 'rs_9', responseId: 'resp_9' } } },
        { type: 'text', text: '' },
        { type: 'text', text: 'Answer.' },
        { type: 'reasoning', text: 'cut off after this', providerMetadata: { openai: { encryptedContent: 'enc-last' } } },
      ],
    };
    expect(toResponsesInput([assistant], { stored: false }).input).toEqual([{ role: 'assistant', content: 'Answer.' }]);
  });

  it('sends arguments that were not valid JSON as their raw text, and results as text', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'weather', args: '{"city":' }],
    };
    const tool: Message = {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'weather', result: { error: 'bad' }, isError: true }],
    };
    expect(toResponsesInput([assistant, tool], { stored: false }).input).toEqual([
      { type: 'function_call', call_id: 'c', name: 'weather', arguments: '{"city":' },
      { type: 'function_call_output', call_id: 'c', output: '{"error":"bad"}' },
    ]);
  });
});

describe('toResponsesInput: stored (store: true)', () => {
  it('reasoning without encrypted content goes by id, and then its follower goes by id too', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think', providerMetadata: { openai: { itemId: 'rs_1', responseId: 'resp_1' } } },
        call('call_1', { providerMetadata: { openai: { itemId: 'fc_1', responseId: 'resp_1' } } }),
        { type: 'text', text: 'after', providerMetadata: { openai: { itemId: 'msg_2', responseId: 'resp_1' } } },
      ],
    };
    expect(toResponsesInput([assistant], { stored: true }).input).toEqual([
      { type: 'reasoning', id: 'rs_1', summary: summary('think') },
      { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' },
      { role: 'assistant', content: 'after' },
    ]);
  });

  it('leaves out reasoning by id whose follower has no id (the API refuses it without its following item)', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'think', providerMetadata: { openai: { itemId: 'rs_1' } } },
        { type: 'text', text: 'The meaning of life is 42' },
      ],
    };
    expect(toResponsesInput([assistant], { stored: true }).input).toEqual([{ role: 'assistant', content: 'The meaning of life is 42' }]);
  });

  it('sends encrypted reasoning whole, without its id, even when stored', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: '', providerMetadata: { openai: { itemId: 'rs_1', encryptedContent: 'enc' } } },
        { type: 'text', text: 'hi', providerMetadata: { openai: { itemId: 'msg_1' } } },
      ],
    };
    expect(toResponsesInput([assistant], { stored: true }).input).toEqual([
      { type: 'reasoning', summary: [], encrypted_content: 'enc' },
      { role: 'assistant', content: 'hi' },
    ]);
  });
});

describe('toResponsesInput: previous_response_id', () => {
  const first: AssistantMessage = {
    role: 'assistant',
    content: [{ type: 'text', text: 'Hello', providerMetadata: { openai: { itemId: 'msg_1', responseId: 'resp_1' } } }],
  };
  const second: AssistantMessage = {
    role: 'assistant',
    content: [call('call_1', { providerMetadata: { openai: { itemId: 'fc_1', responseId: 'resp_2' } } })],
  };

  it('names the last stored response and sends only what came after it', () => {
    const history: Message[] = [user, first, { role: 'user', content: 'And Rome?' }, second, results('call_1')];
    expect(toResponsesInput(history, { stored: true, chain: true })).toEqual({
      previousResponseId: 'resp_2',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
    });
  });

  it('sends messages of other wires after the anchor as items, and the whole history when there is no anchor', () => {
    const chat: AssistantMessage = { role: 'assistant', content: [{ type: 'text', text: 'From Chat Completions' }] };
    expect(toResponsesInput([user, first, chat, { role: 'user', content: 'Go on' }], { stored: true, chain: true })).toEqual({
      previousResponseId: 'resp_1',
      input: [
        { role: 'assistant', content: 'From Chat Completions' },
        { role: 'user', content: 'Go on' },
      ],
    });
    expect(toResponsesInput([user, chat], { stored: true, chain: true })).toEqual({
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: 'From Chat Completions' },
      ],
    });
    // Without store nothing can be named.
    expect(toResponsesInput([user, first], { stored: false, chain: true }).previousResponseId).toBeUndefined();
  });

  it('converts a message once per mode: the stored and the stateless forms do not mix', () => {
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'r', providerMetadata: { openai: { itemId: 'rs_1' } } },
        { type: 'text', text: 't', providerMetadata: { openai: { itemId: 'msg_1' } } },
      ],
    };
    const stored = toResponsesInput([assistant], { stored: true }).input;
    expect(toResponsesInput([assistant], { stored: false }).input).toEqual([{ role: 'assistant', content: 't' }]);
    expect(toResponsesInput([assistant], { stored: true }).input).toEqual(stored);
    expect(stored).toHaveLength(2);
  });
});

describe('toResponsesTools', () => {
  it('is flat, and strict defaults to false (the Responses API would default to strict mode)', () => {
    const tool = { name: 'weather', description: 'Weather', inputSchema: { type: 'object', properties: {} } };
    expect(toResponsesTools([tool])).toEqual([
      { type: 'function', name: 'weather', description: 'Weather', parameters: { type: 'object', properties: {} }, strict: false },
    ]);
    expect(toResponsesTools([tool], true)[0]?.strict).toBe(true);
  });
});

describe('findMessagesProblem: Responses metadata on parts', () => {
  it('accepts well-formed metadata and names what is wrong otherwise', () => {
    const ok: Message[] = [
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: '',
            providerMetadata: { openai: { itemId: 'rs_1', responseId: 'resp_1', encryptedContent: 'enc', summary: ['a', 'b'] } },
          },
          { type: 'text', text: 'hi', providerMetadata: { openai: { phase: 'final_answer' } } },
          call('c', { providerMetadata: { openai: { itemId: 'fc_1' } } }),
        ],
      },
    ];
    expect(findMessagesProblem(ok)).toBeUndefined();
    const bad = (part: object) => findMessagesProblem([{ role: 'assistant', content: [part] }]);
    // The neutral check: an object of plain JSON, keyed by provider.
    expect(bad({ type: 'text', text: 'x', providerMetadata: 'msg_1' })).toBe(
      'input.messages[0]: content[0].providerMetadata must be an object keyed by provider, got "msg_1"',
    );
    expect(bad({ type: 'text', text: 'x', providerMetadata: { openai: { at: new Date(0) } } })).toMatch(
      /content\[0\]\.providerMetadata\.openai\.at must be plain JSON/,
    );
    // What the Responses wire keeps there it checks itself, when it sends the history.
    const sent = (part: object) => () =>
      toResponsesInput([{ role: 'assistant', content: [part, { type: 'text', text: 'after' }] } as Message], { stored: false });
    expect(sent({ type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 42 } } })).toThrow(
      'messages[0].content[0].providerMetadata.openai.encryptedContent must be a string',
    );
    expect(sent({ type: 'reasoning', text: '', providerMetadata: { openai: { encryptedContent: 'e', summary: 'a' } } })).toThrow(
      'messages[0].content[0].providerMetadata.openai.summary must be an array of strings',
    );
    expect(sent({ type: 'text', text: 'x', providerMetadata: { openai: { phase: 1 } } })).toThrow(
      /content\[0\]\.providerMetadata\.openai\.phase must be a string/,
    );
    expect(sent({ type: 'text', text: 'x', providerMetadata: { openai: 'msg_1' } })).toThrow(/providerMetadata\.openai must be an object/);
    // Another wire's key is none of this wire's business.
    expect(
      toResponsesInput([{ role: 'assistant', content: [{ type: 'text', text: 'x', providerMetadata: { other: { id: 1 } } }] }], {
        stored: true,
      }).input,
    ).toEqual([{ role: 'assistant', content: 'x' }]);
  });
});
