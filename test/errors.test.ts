/**
 * The error classes (docs/behaviour.md, "Errors"): one base, `ActorloopError`, whose `isInstance`
 * answers per class and across copies of the package, where `instanceof` cannot.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/tools/define-tool.js';
import { runConversation } from './support/run-conversation.js';

/** Every error class, each from its own file, the way a copy of the package holds them. */
async function loadCopy() {
  const [
    base,
    invalid,
    missing,
    conflict,
    load,
    notFound,
    rejected,
    closed,
    provider,
    halt,
    mcp,
    sqlite,
    middleware,
    stopped,
    usage,
    http,
    leaseLost,
    postgres,
    toolContent,
    workflowProblems,
    trajectory,
    dataset,
    judge,
    cassetteMismatch,
    cassetteMissing,
    cassetteFormat,
  ] = await Promise.all([
    import('../src/errors/actorloop-error.js'),
    import('../src/errors/invalid-options-error.js'),
    import('../src/errors/missing-dependency-error.js'),
    import('../src/host/errors/conversation-conflict-error.js'),
    import('../src/host/errors/conversation-load-error.js'),
    import('../src/host/errors/conversation-not-found-error.js'),
    import('../src/host/errors/event-rejected-error.js'),
    import('../src/host/errors/host-closed-error.js'),
    import('../src/model/errors/provider-error.js'),
    import('../src/tools/halt-error.js'),
    import('../src/tools/mcp/mcp-tool-error.js'),
    import('../src/stores/sqlite/sqlite-store-error.js'),
    import('../src/middleware/middleware-error.js'),
    import('../src/observe/rx/run-stopped-error.js'),
    import('../src/cli/cli-usage-error.js'),
    import('../src/http/http-problem-error.js'),
    import('../src/host/errors/conversation-lease-lost-error.js'),
    import('../src/stores/postgres/postgres-store-error.js'),
    import('../src/tools/tool-content-error.js'),
    import('../src/machines/workflow/workflow-problems-error.js'),
    import('../src/testing/trajectory-mismatch-error.js'),
    import('../src/testing/dataset-error.js'),
    import('../src/testing/judge-verdict-error.js'),
    import('../src/testing/cassette-mismatch-error.js'),
    import('../src/testing/cassette-missing-error.js'),
    import('../src/testing/cassette-format-error.js'),
  ]);
  return {
    ActorloopError: base.ActorloopError,
    InvalidOptionsError: invalid.InvalidOptionsError,
    MissingDependencyError: missing.MissingDependencyError,
    ConversationConflictError: conflict.ConversationConflictError,
    ConversationLoadError: load.ConversationLoadError,
    ConversationNotFoundError: notFound.ConversationNotFoundError,
    EventRejectedError: rejected.EventRejectedError,
    HostClosedError: closed.HostClosedError,
    ProviderError: provider.ProviderError,
    HaltError: halt.HaltError,
    McpToolError: mcp.McpToolError,
    SqliteStoreError: sqlite.SqliteStoreError,
    MiddlewareError: middleware.MiddlewareError,
    RunStoppedError: stopped.RunStoppedError,
    CliUsageError: usage.CliUsageError,
    HttpProblemError: http.HttpProblemError,
    ConversationLeaseLostError: leaseLost.ConversationLeaseLostError,
    PostgresStoreError: postgres.PostgresStoreError,
    ToolContentError: toolContent.ToolContentError,
    WorkflowProblemsError: workflowProblems.WorkflowProblemsError,
    TrajectoryMismatchError: trajectory.TrajectoryMismatchError,
    DatasetError: dataset.DatasetError,
    JudgeVerdictError: judge.JudgeVerdictError,
    CassetteMismatchError: cassetteMismatch.CassetteMismatchError,
    CassetteMissingError: cassetteMissing.CassetteMissingError,
    CassetteFormatError: cassetteFormat.CassetteFormatError,
  };
}

type Copy = Awaited<ReturnType<typeof loadCopy>>;
type ClassName = Exclude<keyof Copy, 'ActorloopError'>;

const cause = new Error('underneath');

/** One error of each class, made from a given copy, with the fields it must keep. */
const samples: Record<ClassName, { make: (copy: Copy) => Error; fields: Record<string, unknown> }> = {
  InvalidOptionsError: {
    make: (copy) => new copy.InvalidOptionsError('retry.maxRetries', 'an integer ≥ 0', -1),
    fields: { option: 'retry.maxRetries', message: 'Invalid option retry.maxRetries: expected an integer ≥ 0, got -1' },
  },
  MissingDependencyError: {
    make: (copy) => new copy.MissingDependencyError('rxjs', 'actorloop/rx', cause),
    fields: {
      packageName: 'rxjs',
      cause,
      message: 'actorloop/rx needs the optional package "rxjs", which could not be loaded: install it (npm install rxjs)',
    },
  },
  ConversationConflictError: {
    make: (copy) => new copy.ConversationConflictError('c-1', 3, 4),
    fields: { conversationId: 'c-1', expectedRevision: 3, storedRevision: 4 },
  },
  ConversationLoadError: {
    make: (copy) => new copy.ConversationLoadError('c-1', 'unknown_version', 'version 9'),
    fields: {
      conversationId: 'c-1',
      problem: 'unknown_version',
      message: 'stored conversation "c-1" cannot be loaded (unknown version): version 9',
    },
  },
  ConversationNotFoundError: {
    make: (copy) => new copy.ConversationNotFoundError('c-1', 'nothing to approve'),
    fields: { conversationId: 'c-1', message: 'conversation "c-1" does not exist: nothing to approve' },
  },
  EventRejectedError: {
    make: (copy) => new copy.EventRejectedError({ conversationId: 'c-1', eventType: 'user.message', code: 'busy', message: 'running' }),
    fields: { conversationId: 'c-1', eventType: 'user.message', code: 'busy', message: 'conversation "c-1": running' },
  },
  HostClosedError: {
    make: (copy) => new copy.HostClosedError('send'),
    fields: { message: 'the conversation host is closed: send' },
  },
  ProviderError: {
    make: (copy) => new copy.ProviderError('slow down', { code: 'rate_limit', retryable: true, status: 429, retryAfterMs: 1000, cause }),
    fields: { code: 'rate_limit', retryable: true, status: 429, retryAfterMs: 1000, cause, message: 'slow down' },
  },
  HaltError: {
    make: (copy) => new copy.HaltError('Handed to a human.', { cause }),
    fields: { content: 'Handed to a human.', cause, message: 'Handed to a human.' },
  },
  McpToolError: {
    make: (copy) => new copy.McpToolError('no such method', { kind: 'server', code: -32601, cause }),
    fields: { kind: 'server', code: -32601, cause },
  },
  SqliteStoreError: {
    make: (copy) => new copy.SqliteStoreError('corrupt', 'c.db', 'damaged', { cause }),
    fields: { code: 'corrupt', path: 'c.db', cause, message: 'sqliteStore("c.db"): damaged' },
  },
  MiddlewareError: {
    make: (copy) => new copy.MiddlewareError(1, 'called next twice'),
    fields: { index: 1, message: 'middleware[1]: called next twice' },
  },
  RunStoppedError: {
    make: (copy) => new copy.RunStoppedError(),
    fields: { message: expect.stringContaining('stopped before its run reached a final state') },
  },
  CliUsageError: {
    make: (copy) => new copy.CliUsageError('run needs a prompt'),
    fields: { message: 'run needs a prompt' },
  },
  HttpProblemError: {
    make: (copy) => new copy.HttpProblemError('invalid-field', 'content: expected a non-empty string, got 42', { field: 'content' }),
    fields: {
      message: 'content: expected a non-empty string, got 42',
      problem: { type: 'urn:actorloop:problem:invalid-field', status: 400, field: 'content' },
      headers: {},
    },
  },
  ConversationLeaseLostError: {
    make: (copy) => new copy.ConversationLeaseLostError('c-1', 7, 'host "b" holds it'),
    fields: {
      conversationId: 'c-1',
      token: 7,
      message: 'conversation "c-1": the lease (token 7) was refused, nothing written: host "b" holds it',
    },
  },
  PostgresStoreError: {
    make: (copy) =>
      new copy.PostgresStoreError('connection', { tables: 'public.actorloop_', operation: 'save', conversationId: 'c-1' }, 'gone', {
        cause,
      }),
    fields: {
      code: 'connection',
      tables: 'public.actorloop_',
      operation: 'save',
      conversationId: 'c-1',
      cause,
      message: 'postgresStore(public.actorloop_): save of conversation "c-1" failed: gone',
    },
  },
  ToolContentError: {
    make: (copy) => new copy.ToolContentError('toolContent part 1.data is a file: URL'),
    fields: { name: 'ToolContentError', message: 'toolContent part 1.data is a file: URL' },
  },
  WorkflowProblemsError: {
    make: (copy) => new copy.WorkflowProblemsError('wf', [{ state: 'stuck', kind: 'unreachable-final', message: 'no way out' }]),
    fields: {
      machineId: 'wf',
      problems: [{ state: 'stuck', kind: 'unreachable-final', message: 'no way out' }],
      message: 'workflow "wf" has 1 problem:\n- stuck (unreachable-final): no way out',
    },
  },
  TrajectoryMismatchError: {
    make: (copy) => new copy.TrajectoryMismatchError('trajectory differs', { steps: [{ tool: 'add' }], calls: [], difference: '− add' }),
    fields: { steps: [{ tool: 'add' }], calls: [], difference: '− add', message: 'trajectory differs' },
  },
  DatasetError: {
    make: (copy) => new copy.DatasetError('not JSON', { line: 3, source: 'cases.jsonl' }, { cause }),
    fields: { line: 3, index: undefined, cause, message: 'cases.jsonl line 3: not JSON' },
  },
  JudgeVerdictError: {
    make: (copy) => new copy.JudgeVerdictError('judge', 'no verdict'),
    fields: { judge: 'judge', message: 'judge "judge": no verdict' },
  },
  CassetteMismatchError: {
    make: (copy) => new copy.CassetteMismatchError('request #2: no interaction left', { file: 'c.json', request: 2, reason: 'exhausted' }),
    fields: { file: 'c.json', request: 2, reason: 'exhausted', message: 'request #2: no interaction left' },
  },
  CassetteMissingError: {
    make: (copy) => new copy.CassetteMissingError('c.json'),
    fields: { file: 'c.json', message: expect.stringContaining('Cassette c.json does not exist') },
  },
  CassetteFormatError: {
    make: (copy) => new copy.CassetteFormatError('c.json', 'interactions', 'expected an array'),
    fields: { file: 'c.json', field: 'interactions', message: 'Cassette c.json field interactions: expected an array' },
  },
};

const classNames = Object.keys(samples) as ClassName[];

let copyA: Copy;
let copyB: Copy;
beforeAll(async () => {
  copyA = await loadCopy();
  // A fresh module registry: the same files evaluated again, as a second copy in node_modules would be.
  vi.resetModules();
  copyB = await loadCopy();
});

describe('every error class', () => {
  for (const name of classNames) {
    it(`${name} is an ActorloopError with its name and fields, and only its own isInstance says yes`, () => {
      const error = samples[name].make(copyA);
      expect(error).toBeInstanceOf(Error);
      expect(error).toBeInstanceOf(copyA.ActorloopError);
      expect(error).toBeInstanceOf(copyA[name]);
      expect(error.name).toBe(name);
      expect(error).toMatchObject(samples[name].fields);
      expect(copyA.ActorloopError.isInstance(error)).toBe(true);
      expect(copyA[name].errorName).toBe(name);
      for (const other of classNames) expect({ other, is: copyA[other].isInstance(error) }).toEqual({ other, is: other === name });
      expect(String(error)).toBe(`${name}: ${error.message}`);
    });
  }

  it('isInstance says no to what is not an actorloop error', () => {
    for (const value of [
      new Error('plain'),
      { name: 'HaltError', message: 'look-alike', content: 'x' },
      'HaltError',
      null,
      undefined,
      42,
    ]) {
      expect(copyA.ActorloopError.isInstance(value)).toBe(false);
      expect(copyA.HaltError.isInstance(value)).toBe(false);
    }
  });
});

describe('isInstance passed on unbound', () => {
  it('keeps its class: filter, find and toSatisfy take it as it is', () => {
    const errors = classNames.map((name) => samples[name].make(copyA));
    const { isInstance } = copyA.HaltError;
    expect(errors.filter(isInstance).map((error) => error.name)).toEqual(['HaltError']);
    expect(errors.filter(copyA.ActorloopError.isInstance)).toHaveLength(classNames.length);
    expect(errors.find(copyA.ProviderError.isInstance)?.name).toBe('ProviderError');
    expect(samples.RunStoppedError.make(copyB)).toSatisfy(copyA.RunStoppedError.isInstance);
  });
});

describe('across copies of the package', () => {
  it('the second copy is really another module graph: instanceof says no', () => {
    expect(copyB.HaltError).not.toBe(copyA.HaltError);
    expect(copyB.ActorloopError).not.toBe(copyA.ActorloopError);
    expect(samples.HaltError.make(copyB)).not.toBeInstanceOf(copyA.HaltError);
  });

  for (const name of classNames) {
    it(`${name} from the other copy: its class and ActorloopError say yes, every other class no`, () => {
      const fromB = samples[name].make(copyB);
      const fromA = samples[name].make(copyA);
      expect(copyA.ActorloopError.isInstance(fromB)).toBe(true);
      expect(copyB.ActorloopError.isInstance(fromA)).toBe(true);
      for (const other of classNames) {
        expect({ other, is: copyA[other].isInstance(fromB) }).toEqual({ other, is: other === name });
        expect({ other, is: copyB[other].isInstance(fromA) }).toEqual({ other, is: other === name });
      }
    });
  }

  it('an error of an older copy, which carried only its own marker, still passes its class', () => {
    const older = Object.assign(new Error('stop'), { name: 'HaltError', content: 'stop', [Symbol.for('actorloop.error.HaltError')]: true });
    expect(copyA.HaltError.isInstance(older)).toBe(true);
    expect(copyA.ProviderError.isInstance(older)).toBe(false);
  });

  it('a tool that throws the HaltError of another copy halts the run (tool_halt)', async () => {
    const stop = defineTool({
      name: 'stop',
      parameters: z.object({}),
      execute: () => {
        throw samples.HaltError.make(copyB);
      },
    });
    const { output } = await runConversation([{ toolCalls: [{ id: 'halt', name: 'stop', args: {} }] }], { tools: [stop] });
    expect(output).toMatchObject({ status: 'halted', reason: 'tool_halt', text: 'Handed to a human.' });
  });
});

describe('subclasses of your own', () => {
  it('with an errorName of their own, get their own isInstance, across copies too', () => {
    const defineQuotaError = (base: Copy['ActorloopError']) =>
      class QuotaError extends base {
        static override readonly errorName = 'QuotaError';
        constructor(readonly customerId: string) {
          super(`customer ${customerId} is over quota`);
        }
      };
    const QuotaA = defineQuotaError(copyA.ActorloopError);
    const QuotaB = defineQuotaError(copyB.ActorloopError);
    const error = new QuotaB('k-7');
    expect(error).toMatchObject({ name: 'QuotaError', customerId: 'k-7', message: 'customer k-7 is over quota' });
    expect(QuotaA.isInstance(error)).toBe(true);
    expect(copyA.ActorloopError.isInstance(error)).toBe(true);
    expect(QuotaA.isInstance(samples.HaltError.make(copyA))).toBe(false);
    expect(copyA.HaltError.isInstance(error)).toBe(false);
  });

  it('without one, keep the parent class name and its isInstance; their own isInstance is instanceof', () => {
    class LoudHalt extends copyA.HaltError {}
    const error = new LoudHalt('LOUD');
    expect(error.name).toBe('HaltError');
    expect(copyA.HaltError.isInstance(error)).toBe(true);
    expect(copyB.HaltError.isInstance(error)).toBe(true);
    expect(LoudHalt.isInstance(error)).toBe(true);
    expect(LoudHalt.isInstance(samples.HaltError.make(copyA))).toBe(false);
  });
});
