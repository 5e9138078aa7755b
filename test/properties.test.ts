/**
 * docs/behaviour.md "Behaviour every run keeps" as properties: random fault schedules (test/support/fault-server.ts), random tool sets,
 * random options and random cancel / approval points, over the real `openai` (Chat Completions and
 * Responses) and `@anthropic-ai/sdk` clients, and over `aiSdkProvider` with the real chat models of
 * `@ai-sdk/openai-compatible` and `@ai-sdk/openai` (the `ai-sdk` sample: Chat Completions through the
 * adapter, so every guarantee below holds through it too, and a fallback list mixes it with the native providers).
 * Each run is checked by `runCase` (test/support/property-run.ts):
 *
 * - the run reaches a final state and `toPromise` resolves; nothing escapes (unhandled rejection,
 *   uncaught exception);
 * - every tool call of the history has exactly one result, right after it, in call order, and one
 *   `tool.result` event agreeing with it; denied calls never run; results respect the byte cap;
 * - the history converts with the real converters to a valid OpenAI request, a valid Responses
 *   request and a valid Anthropic request (results after their calls with matching ids,
 *   user/assistant alternation starting with user, tool_result blocks first, no empty content,
 *   thinking blocks byte-identical and in order, encrypted reasoning right before its follower);
 * - at most `maxToolIterations` rounds run and each call executes at most once, never one settled
 *   as "not executed"; halt reasons agree with what happened; a cancel sent to an active run ends it
 *   halted/cancelled;
 * - attempts per request ≤ `maxRetries + 1`, numbered 1, 2, …; a retry after a 429 waits at least
 *   its `retry-after` (the event's `delayMs` and the wall time between the two requests); a run ends
 *   in a retryable error only with its retries spent, and never takes a fault item 6 retries as fatal;
 * - nothing is left behind: no child actors, every HTTP request answered or its connection closed,
 *   no handle (timer, socket, server) more than before the run;
 * - the run's API key never appears in the output, an emitted event, an error or a persisted
 *   snapshot, and the persisted snapshot is plain JSON at every event;
 * - whatever ends the run or abandons a round leaves nothing running: every tool and guardrail check
 *   still running when the run ends has had its signal fire; every answered request's tokens are counted.
 *
 * About half of the cases also draw `controls` (DESIGN §12), and the same properties hold with them,
 * besides their own: guardrails (pass, trip, throw, garbage, hang past `timeoutMs` honouring its
 * signal or not) run one at a time in order, before any request and on every message that joins
 * later, and the run ends as the first that does not pass says (`halted`/`guardrail`, `error`/
 * `guardrail_error` or `guardrail_timeout`); budgets (`maxTotalTokens` crossed mid-run, a short
 * `maxDurationMs`) halt with `budget` and `output.budget` true to the usage, no request or tool
 * starting at or over them; with `steering: 'queue'` the stray message is queued and is in the
 * history once (answered, or at its end); `user.interrupt` at random points and states abandons the
 * attempt (nothing of it in the history) or the round (`cancelled: the user interrupted the run`)
 * and its text is in the history once; a fallback list of 2–3 providers (same server, or a second
 * fault server on the same or another wire, all consuming one plan) falls back only after the
 * retries on a retryable error, never after a fatal one, at most list length − 1 times a request.
 *
 * A fixed seed keeps the sample reproducible; `PROPERTY_SEED=<n>` replays another one, and
 * `PROPERTY_RUNS=<n>` changes the size (runs over all the wires, shared out evenly). The big run is
 * `npm run test:soak -- --runs 10000`.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aiSdkWires, runCase, runCaseArbFor, type RunCase, type RunWire } from './support/property-run.js';

const seed = Number(process.env.PROPERTY_SEED ?? 20_261_202);
/**
 * What the adapter got wrong before these properties ran through it, each the smallest case, on
 * both packages: a key the server echoed left in the error (the adapter now redacts the model's
 * credentials); an empty body and a connection dropped mid-stream taken as fatal errors (now broken
 * transfers, retried). Run before the drawn cases.
 */
const adapterCases: RunCase[] = aiSdkWires.flatMap((wire) =>
  (
    [
      [{ kind: 'rateLimit', retryAfter: null, echoKey: true }],
      [{ kind: 'status', status: 401, echoKey: true }],
      [{ kind: 'empty', body: false }],
      [{ kind: 'cut', how: 'destroy' }],
    ] satisfies RunCase['plan'][]
  ).map(
    (plan): RunCase => ({
      wire,
      stream: true,
      tools: ['ok'],
      plan,
      options: {
        maxToolIterations: 1,
        retry: { maxRetries: 1, initialDelayMs: 0, maxDelayMs: 3, jitter: false },
        toolTimeoutMs: 20,
        requestTimeoutMs: 300,
        doomLoop: false,
      },
      system: false,
      cancel: null,
      approvals: [],
      asyncDecisions: false,
      strayMessageAfterEvents: null,
    }),
  ),
);

/** One sample per wire; the adapter's draws its package for each case. */
const wires: Array<{ name: string; drawn: [RunWire, ...RunWire[]]; examples?: RunCase[] }> = [
  { name: 'openai', drawn: ['openai'] },
  { name: 'anthropic', drawn: ['anthropic'] },
  { name: 'responses', drawn: ['responses'] },
  { name: 'ai-sdk', drawn: [...aiSdkWires], examples: adapterCases },
];
// The 300 runs the three native wires had, shared by the four: a wire more costs no time.
const runsPerWire = Math.ceil(Number(process.env.PROPERTY_RUNS ?? 300) / wires.length);

describe('docs/behaviour.md "Behaviour every run keeps" holds under random faults, tools, options, cancels and approvals', () => {
  for (const [position, { name: wire, drawn, examples = [] }] of wires.entries()) {
    it(`over the ${wire} wire (${runsPerWire} runs, seed ${seed + position})`, { timeout: 120_000 }, async () => {
      console.log(
        `properties (${wire}): seed ${seed + position}, ${runsPerWire} runs — replay with PROPERTY_SEED=${seed} (wire offset ${position})`,
      );
      const known = new Map<string, number>();
      let withControls = 0;
      let runs = 0;
      await fc.assert(
        fc.asyncProperty(runCaseArbFor(...drawn), async (testCase: RunCase) => {
          runs++;
          if (testCase.controls) withControls++;
          const report = await runCase(testCase, { checkResources: true, watchdogMs: 15_000 });
          for (const bug of report.knownBugs) known.set(bug, (known.get(bug) ?? 0) + 1);
          expect(report.violations, `case ${JSON.stringify(testCase)}`).toEqual([]);
        }),
        {
          seed: seed + position,
          numRuns: runsPerWire,
          examples: examples.map((example) => [example]),
          endOnFailure: false,
          interruptAfterTimeLimit: 100_000,
          markInterruptAsFailure: false,
        },
      );
      console.log(`properties (${wire}): ${withControls} of ${runs} cases drew controls`);
      // The time limit above stops the sample without failing it: a run cut short by a loaded machine must not pass as the whole sample.
      expect(runs, `${runs} of ${runsPerWire} cases ran before the time limit`).toBe(runsPerWire);
      if (known.size > 0) {
        console.log(
          `known engine bugs hit (it.fails in test/property-regressions.test.ts):\n${[...known].map(([bug, count]) => `  ${count} × ${bug}`).join('\n')}`,
        );
      }
    });
  }
});
