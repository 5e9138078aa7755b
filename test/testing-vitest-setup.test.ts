/**
 * `import 'actorloop/testing/vitest'` alone (docs/testing.md "Matchers for vitest") registers the run
 * matchers with vitest's `expect` and types them: this file never calls `expect.extend`, and
 * `npx tsc` checks the calls below against the declarations the import adds.
 */
import { createActor, toPromise } from 'xstate';
import { expect, it } from 'vitest';
import { createConversationMachine } from '../src/index.js';
import { scriptedProvider } from '../src/testing/index.js';
import '../src/testing/vitest.js';

it('the matchers are registered and typed by the import alone', async () => {
  const provider = scriptedProvider([{ toolCalls: [{ name: 'lookup', args: { id: 7 } }] }, { text: 'Found it.' }]);
  const machine = createConversationMachine({ provider });
  const output = await toPromise(createActor(machine, { input: { prompt: 'Find 7' } }).start());
  // `lookup` is no tool of the machine: the model gets an error result, and answers.
  expect(output).toCallTool('lookup', { id: 7 });
  expect(output).not.toCallTool('lookup', { id: 8 });
  expect(output).toCallTools([{ tool: 'lookup', result: /unknown tool/i }]);
  expect(output).toEndWith('done');
  expect(output).toHaveText('Found it.');
  expect(output).toStayUnderTokens(10_000);
  expect({ output }).toEqual({ output: expect.toEndWith('done') });
  // @ts-expect-error: a status a run never ends with
  expect(() => expect(output).toEndWith('finished')).toThrow('expected the run to end finished; it ended done');
});
