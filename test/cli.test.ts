/**
 * The `actorloop` command as a process (docs/cli.md): the offline demo, --json, exit codes, bad
 * flags, Ctrl-C, and a live provider through the real SDK against the local wire server.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliFailure, helpPointer } from '../src/cli/cli-failure.js';
import { CliUsageError } from '../src/cli/cli-usage-error.js';
import { CommandRefusedError } from '../src/cli/command-refused-error.js';
import { promptContent } from '../src/cli/attachments.js';
import { parseArguments, usage, usageLineOf } from '../src/cli/parse-arguments.js';
import { MissingDependencyError } from '../src/errors/missing-dependency-error.js';
import { EventRejectedError } from '../src/host/errors/event-rejected-error.js';
import { SqliteStoreError } from '../src/stores/sqlite/sqlite-store-error.js';
import { actorloop, actorloopInterrupted } from './support/cli-process.js';
import { closedPortUrl, openaiSse, startWireServer } from './support/wire-server.js';
import { responsesStream, textAnswer } from './support/responses-events.js';

/** A Chat Completions stream chunk of gpt-4o-mini. */
const chunk = (delta: Record<string, unknown>, finish: string | null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('actorloop run (offline)', () => {
  it('answers "what is 17*23?" with the real calculator, says it is offline, exits 0', async () => {
    const { code, stdout, stderr } = await actorloop(['run', 'what is 17*23?']);
    expect(code).toBe(0);
    expect(stdout).toBe('17*23 = 391\n');
    expect(stderr).toContain('offline scripted model');
    expect(stderr).toMatch(/tool calculator done in \d+ ms: 391/);
    expect(stderr).toContain('requesting offline offline-scripted (round 1, attempt 1)');
  });

  it('converts units and tells the time with the real tools', async () => {
    expect((await actorloop(['run', 'convert 100 °F to celsius'])).stdout).toBe('100 °F = 37.7777777778 celsius\n');
    const clock = await actorloop(['run', 'what time is it in Europe/Oslo?']);
    expect(clock.code).toBe(0);
    expect(clock.stdout).toMatch(/^It is .+ \(Europe\/Oslo\)\.\n$/);
  });

  it('--json writes every emitted event as a JSON line, labelled offline, ending with the output', async () => {
    const { code, stdout } = await actorloop(['run', '--json', 'what is 2 plus 3?']);
    expect(code).toBe(0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    expect(lines[0]).toEqual({ type: 'run.started', provider: 'offline', model: 'offline-scripted', offline: true });
    expect(lines.map((line) => line.type)).toEqual(
      expect.arrayContaining(['request.started', 'tool.call', 'tool.started', 'tool.result', 'text.delta', 'request.finished']),
    );
    expect(lines.at(-1)).toMatchObject({ type: 'run.output', output: { status: 'done', text: '2 + 3 = 5', iterations: 1 } });
  });

  it('says a --model given without a key or base URL is not used, and what to set', async () => {
    const { code, stderr } = await actorloop(['run', '--model', 'gpt-4o', 'hi']);
    expect(code).toBe(0);
    expect(stderr).toContain(
      'actorloop: --model gpt-4o is not used: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --base-url for an OpenAI-compatible server',
    );
  });

  it('exits 2 when the run halts (no tool rounds allowed)', async () => {
    const { code, stderr } = await actorloop(['run', '--max-iterations', '0', 'what is 1+1?']);
    expect(code).toBe(2);
    expect(stderr).toContain('actorloop: halted: max_iterations');
  });

  it('--max-tokens halts a run that spends its tokens, exit 2, naming the budget', async () => {
    const { code, stderr } = await actorloop(['run', '--max-tokens', '10', 'what is 17*23?']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/actorloop: halted: budget \(maxTotalTokens: used \d+ of 10\)/);
    expect(stderr).toContain('not executed: the run reached its budget (maxTotalTokens)');
  });

  it('--budget-usd prices the run (the offline model is free), and refuses a model without a price', async () => {
    const free = await actorloop(['run', '--budget-usd', '0.01', '--json', 'what is 17*23?']);
    expect(free.code).toBe(0);
    const output = JSON.parse(free.stdout.trim().split('\n').at(-1)!).output;
    expect(output).toMatchObject({ status: 'done', cost: { total: 0 } });
    const unpriced = await actorloop([
      'run',
      '--budget-usd',
      '0.01',
      '--provider',
      'compatible',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--model',
      'llama3',
      'hi',
    ]);
    expect(unpriced.code).toBe(1);
    expect(unpriced.stderr).toContain(
      'actorloop: --budget-usd needs a model with a known price, and llama3 has none: use --max-tokens instead',
    );
  });

  for (const [when, args, env, line] of [
    ['during a request', ['run', 'what is 6*7?'], { ACTORLOOP_OFFLINE_DELAY_MS: '3000' }, 'requesting'],
    ['during a running tool (wait, aborted)', ['run', 'wait 30 seconds'], {}, 'tool wait started'],
  ] as const) {
    it(`Ctrl-C ${when} cancels the run cleanly: halted / cancelled, exit 130`, async () => {
      const { sent, result } = await actorloopInterrupted([...args], env, line);
      expect(sent).toBe(true);
      expect(result.code).toBe(130);
      expect(result.stderr).toContain('actorloop: halted: cancelled');
      expect(result.stderr).not.toContain('waited 30 seconds');
    });
  }
});

describe('actorloop run (live providers over HTTP)', () => {
  it('--model <provider>/<model> resolves through the model registry: ollama/… on OLLAMA_BASE_URL; a missing package is named', async () => {
    const server = await startWireServer([openaiSse([chunk({ content: 'Hi from llama.' }, 'stop')])]);
    try {
      const { code, stdout } = await actorloop(['run', '--model', 'ollama/llama3.2', 'hi'], { OLLAMA_BASE_URL: `${server.url}/v1` });
      expect(code).toBe(0);
      expect(stdout).toBe('Hi from llama.\n');
      expect(server.requests[0]!.body).toMatchObject({ model: 'llama3.2' });
    } finally {
      await server.close();
    }
    const missing = await actorloop(['run', '--model', 'vertex/gemini-2.5-flash', 'hi']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--model vertex\/gemini-2.5-flash: .*npm install @ai-sdk\/google-vertex/);
  });

  it('--provider openai with a base URL streams the answer through the real SDK', async () => {
    const server = await startWireServer([openaiSse([chunk({ content: 'Hello ' }, null), chunk({ content: 'there.' }, 'stop')])]);
    try {
      const { code, stdout, stderr } = await actorloop(
        ['run', '--provider', 'openai', '--base-url', `${server.url}/v1`, '--system', 'Be brief.', 'hi'],
        {
          OPENAI_API_KEY: 'sk-test',
        },
      );
      expect(code).toBe(0);
      expect(stdout).toBe('Hello there.\n');
      expect(stderr).not.toContain('offline');
      expect(server.requests[0]!.body).toMatchObject({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'hi' },
        ],
      });
    } finally {
      await server.close();
    }
  });

  it('--api responses runs a tool round over the Responses API through the real SDK', async () => {
    const server = await startWireServer([
      responsesStream({ items: [{ type: 'function_call', callId: 'call_1', name: 'calculator', args: '{"expression":"17*23"}' }] }),
      textAnswer('17*23 = 391.'),
    ]);
    try {
      const { code, stdout } = await actorloop(
        ['run', '--provider', 'openai', '--api', 'responses', '--base-url', `${server.url}/v1`, 'what is 17*23?'],
        {
          OPENAI_API_KEY: 'sk-test',
        },
      );
      expect(code).toBe(0);
      expect(stdout).toBe('17*23 = 391.\n');
      expect(server.requests.map((request) => request.path)).toEqual(['/v1/responses', '/v1/responses']);
      const second = server.requests[1]!.body as { input: Array<{ type?: string; call_id?: string; output?: string }> };
      expect(second.input.find((item) => item.type === 'function_call_output')).toMatchObject({ call_id: 'call_1', output: '391' });
    } finally {
      await server.close();
    }
  });

  it('an empty OPENAI_API_KEY with --base-url is no key: the run reaches the server instead of failing in the SDK', async () => {
    const chunk = {
      id: 'c1',
      object: 'chat.completion.chunk',
      model: 'llama3',
      choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }],
    };
    for (const provider of ['compatible', 'openai']) {
      const server = await startWireServer([openaiSse([chunk])]);
      try {
        const { code, stdout, stderr } = await actorloop(
          ['run', '--provider', provider, '--model', 'llama3', '--base-url', `${server.url}/v1`, 'hi'],
          { OPENAI_API_KEY: '' },
        );
        expect({ code, stdout, stderr: stderr.includes('Missing credentials') }).toEqual({ code: 0, stdout: 'Hi.\n', stderr: false });
        expect(server.requests[0]!.headers.authorization).toBe('Bearer not-needed');
      } finally {
        await server.close();
      }
    }
  });

  it('exits 1 when the run ends in error (nothing listening), naming the error', async () => {
    const { code, stderr } = await actorloop([
      'run',
      '--provider',
      'compatible',
      '--model',
      'llama3',
      '--base-url',
      `${await closedPortUrl()}/v1`,
      'hi',
    ]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/actorloop: error: .*(connect|Connection)/i);
  }, 20_000);
});

describe('actorloop run --image / --file', () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  const folder = mkdtempSync(join(tmpdir(), 'actorloop-cli-media-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));
  const pixel = join(folder, 'pixel.png');
  const report = join(folder, 'q3.pdf');
  writeFileSync(pixel, Buffer.from(png, 'base64'));
  writeFileSync(report, '%PDF-1.4\n');

  it('sends the prompt, then each image and file in the order given, through the real SDK', async () => {
    const server = await startWireServer([openaiSse([chunk({ content: 'A pixel and a report.' }, 'stop')])]);
    try {
      const { code, stdout } = await actorloop(
        ['run', '--provider', 'openai', '--base-url', `${server.url}/v1`, '--file', report, '--image', pixel, 'what are these?'],
        { OPENAI_API_KEY: 'sk-test' },
      );
      expect(code).toBe(0);
      expect(stdout).toBe('A pixel and a report.\n');
      expect((server.requests[0]!.body as { messages: unknown[] }).messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what are these?' },
            {
              type: 'file',
              file: { file_data: `data:application/pdf;base64,${Buffer.from('%PDF-1.4\n').toString('base64')}`, filename: 'q3.pdf' },
            },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          ],
        },
      ]);
    } finally {
      await server.close();
    }
  });

  it('offline, the model says what it received and that it cannot look at it; --json shows the stored parts', async () => {
    const { code, stdout } = await actorloop(['run', '--json', '--image', pixel, 'what is this?']);
    expect(code).toBe(0);
    const output = JSON.parse(stdout.trim().split('\n').at(-1) as string) as { output: { text: string; messages: unknown[] } };
    expect(output.output.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', data: png, mediaType: 'image/png' },
      ],
    });
    expect(output.output.text).toMatch(/^I received an image with your message, but I cannot look at it: /);
  });

  it('refuses, before anything is sent or stored, a file that is not there, an image that is none, a type it cannot tell', async () => {
    const notes = join(folder, 'notes.bin');
    writeFileSync(notes, 'x');
    await expect(promptContent('hi', [{ kind: 'image', path: join(folder, 'none.png') }])).rejects.toThrow(
      new CliUsageError(`--image ${join(folder, 'none.png')}: no such file`),
    );
    await expect(promptContent('hi', [{ kind: 'image', path: report }])).rejects.toThrow(
      `--image ${report}: not a PNG, JPEG, GIF or WebP image (send other files with --file)`,
    );
    await expect(promptContent('hi', [{ kind: 'file', path: notes }])).rejects.toThrow(
      `--file ${notes}: cannot tell its media type from its name (expected .pdf, .txt, .md, .wav, .mp3, .png, .jpg, .jpeg, .gif, .webp)`,
    );
    await expect(promptContent('hi', [{ kind: 'file', path: folder }])).rejects.toThrow(`--file ${folder}: no such file`);
    expect(await promptContent('hi', [])).toBe('hi');
    expect(parseArguments(['run', '--image', 'a.png', '--file', 'b.pdf', '--image', 'c.png', 'hi'])).toMatchObject({
      attachments: [
        { kind: 'image', path: 'a.png' },
        { kind: 'file', path: 'b.pdf' },
        { kind: 'image', path: 'c.png' },
      ],
    });
    expect(() => parseArguments(['resume', '--db', 'c.db', 'c1', '--image', 'a.png'])).toThrow('resume does not take --image');
  });
});

describe.concurrent('actorloop usage errors', () => {
  for (const [args, env, message] of [
    [['run', '--frobnicate', 'hi'], {}, "Unknown option '--frobnicate'"],
    [['run', '--provider', 'gemini', 'hi'], {}, 'unknown provider "gemini" (expected openai, anthropic, compatible or offline)'],
    [['run', '--provider', 'openai', 'hi'], {}, '--provider openai needs OPENAI_API_KEY (or --base-url)'],
    [['run', '--provider', 'anthropic', 'hi'], {}, '--provider anthropic needs ANTHROPIC_API_KEY'],
    [['run', '--max-iterations', 'many', 'hi'], {}, '--max-iterations needs an integer ≥ 0, got "many"'],
    [['run', '--api', 'assistants', 'hi'], {}, '--api needs chat or responses, got "assistants"'],
    [['run', '--max-tokens', '0', 'hi'], {}, '--max-tokens needs a number of tokens > 0, got "0"'],
    [['run', '--max-tokens', '1.5', 'hi'], {}, '--max-tokens needs a number of tokens > 0, got "1.5"'],
    [['run', '--budget-usd', 'lots', 'hi'], {}, '--budget-usd needs an amount in USD > 0 (e.g. 0.05), got "lots"'],
    [
      ['run', '--provider', 'anthropic', '--api', 'responses', 'hi'],
      {},
      '--api applies to --provider openai and compatible, not anthropic',
    ],
    [['run'], {}, 'run needs a prompt'],
    [['run', '--image', '/nonexistent/pixel.png', 'what is this?'], {}, '--image /nonexistent/pixel.png: no such file'],
    [['fly'], {}, 'unknown command "fly"'],
    [['resume', 'c1'], {}, 'resume needs --db <file>'],
  ] as const) {
    it(`${args.join(' ')} → a one-line error, its command's usage line (if it is one) and a pointer to --help, exit 1`, async () => {
      const { code, stdout, stderr } = await actorloop([...args], env);
      expect(code).toBe(1);
      expect(stdout).toBe('');
      // The error stays in sight: not buried under the whole usage (issue 48 item 7).
      const line = usageLineOf(args[0]);
      expect(stderr.split('\n')).toEqual([
        expect.stringMatching(/^actorloop: /),
        ...(line === undefined ? [] : [`usage: ${line}`]),
        helpPointer,
        '',
      ]);
      expect(stderr.split('\n')[0]).toContain(message);
      expect(stderr).not.toContain('Usage:');
    });
  }

  // The same path as the rows above (a CliUsageError, exit 1 with its command's usage line), so their messages are checked in this process.
  for (const [args, message] of [
    [['resume', '--db', 'c.db'], 'resume needs a conversation id, e.g. actorloop resume --db conversations.db c1'],
    [['resume', '--db', 'c.db', 'c1', 'go on'], 'resume takes one conversation id, got "c1", "go on"'],
    [['resume', '--db', 'c.db', 'c1', '--provider', 'gemini'], 'unknown provider "gemini"'],
    [['resume', '--db', 'c.db', 'c1', '--reason', 'why'], 'resume does not take --reason'],
    [['cancel', '--db', 'c.db', '--id', 'c1', 'c2'], 'cancel takes one conversation id, got "c1", "c2"'],
    [['cancel', '--db', 'c.db', 'c1', '--provider', 'openai'], 'cancel does not take --provider'],
    [['cancel', '--db', 'c.db', 'c1', '--json'], 'cancel does not take --json'],
    [['list', '--db', 'c.db', '--port', '3000'], 'list does not take --port'],
    [['list', '--db', 'c.db', 'c1'], 'list takes no arguments, got "c1"'],
    [['run', '--force', 'hi'], 'run does not take --force'],
    [['show', 'c1'], 'show needs --db <file>'],
  ] as const) {
    it(`${args.join(' ')} → CliUsageError: ${message}`, () => {
      expect(() => parseArguments([...args])).toThrow(
        expect.objectContaining({ name: 'CliUsageError', message: expect.stringContaining(message) }),
      );
    });
  }

  it('resume and cancel take the conversation id, --force and (cancel) --reason; resume the provider options of run', () => {
    expect(parseArguments(['resume', '--db', 'c.db', 'c1', '--provider', 'offline', '--max-iterations', '3', '--json'])).toMatchObject({
      command: 'resume',
      db: 'c.db',
      id: 'c1',
      provider: 'offline',
      maxIterations: 3,
      json: true,
      force: false,
    });
    expect(parseArguments(['cancel', '--db', 'c.db', '--id', 'c1', '--force', '--reason', 'not needed'])).toEqual({
      command: 'cancel',
      db: 'c.db',
      id: 'c1',
      force: true,
      reason: 'not needed',
    });
  });

  it('help prints the usage and exits 0', async () => {
    const { code, stdout } = await actorloop(['help']);
    expect(code).toBe(0);
    expect(stdout).toContain('Exit codes: 0 done, 2 halted, 1 error, 3 refused\n');
    expect(stdout).toContain('130 cancelled (Ctrl-C).');
    for (const command of ['run', 'list', 'show', 'resume', 'cancel', 'inspect']) expect(stdout).toContain(`  actorloop ${command} `);
    expect(stdout).toBe(`${usage}\n`);
  });
});

describe('cliFailure: the exit code and text of each error class', () => {
  it("CliUsageError → exit 1, its message, its command's usage line (when the command is one) and where the whole usage is", () => {
    expect(cliFailure(new CliUsageError('run needs a prompt'), 'run')).toEqual({
      code: 1,
      text: `run needs a prompt\nusage: actorloop run [options] "prompt"\n${helpPointer}`,
    });
    expect(cliFailure(new CliUsageError('unknown command "fly"'), 'fly')).toEqual({
      code: 1,
      text: `unknown command "fly"\n${helpPointer}`,
    });
    expect(cliFailure(new CliUsageError('--seq needs a step number'), 'fork').text).toBe(
      `--seq needs a step number\nusage: actorloop fork --db <file> <id> --seq <n> [--new-id <id>] [options]\n${helpPointer}`,
    );
    // What the pointer names is the whole usage.
    expect(helpPointer).toContain('actorloop --help');
    expect(parseArguments(['--help'])).toEqual({ command: 'help' });
  });

  it('usageLineOf: the line of each command in the usage, without its description', () => {
    expect(usageLineOf('history')).toBe('actorloop history --db <file> <id>');
    expect(usageLineOf('view')).toBe('actorloop view [--db <file>] [options]');
    expect(usageLineOf('serve')).toBe('actorloop serve [--db <file>] [options]');
    for (const command of ['run', 'list', 'show', 'resume', 'cancel', 'history', 'fork', 'view', 'inspect', 'serve'])
      expect(usageLineOf(command)).toMatch(new RegExp(`^actorloop ${command} \\S`));
    for (const word of ['fly', 'help', '--frobnicate', undefined]) expect(usageLineOf(word)).toBeUndefined();
  });

  it('an actorloop error → exit 1, its message alone (no usage)', () => {
    for (const error of [
      new SqliteStoreError('not_a_store', 'c.db', 'the file is not a SQLite database'),
      new MissingDependencyError('elkjs', 'the live viewer'),
    ]) {
      expect(cliFailure(error)).toEqual({ code: 1, text: error.message });
    }
  });

  it("a refusal for the state of the conversation (the CLI's or the host's) → exit 3, its message alone", () => {
    for (const error of [
      new CommandRefusedError('conversation "c1" is done: there is nothing to resume; nothing changed'),
      new EventRejectedError({ conversationId: 'c1', eventType: 'user.message', code: 'busy', message: 'it is running in host "h"' }),
    ]) {
      expect(cliFailure(error)).toEqual({ code: 3, text: error.message });
    }
  });

  it('a store file that is not there → exit 1 in the words of the CLI, naming the path', () => {
    const missing = join(tmpdir(), 'actorloop-no-such-dir', 'c.db');
    expect(cliFailure(new SqliteStoreError('not_found', missing, 'no such file'))).toEqual({
      code: 1,
      text: `no database at ${missing} (run --db ${missing} "…" creates one); nothing was created`,
    });
  });

  it('classes are told by isInstance: a CliUsageError of another copy of actorloop still gets the pointer to the usage', () => {
    const fromAnotherCopy = Object.assign(new Error('unknown command "fly"'), {
      [Symbol.for('actorloop.error.ActorloopError')]: true,
      [Symbol.for('actorloop.error.CliUsageError')]: true,
    });
    expect(cliFailure(fromAnotherCopy, 'fly')).toEqual({ code: 1, text: `unknown command "fly"\n${helpPointer}` });
  });

  it('anything else → exit 1, its message (or name) and never its stack', () => {
    const bug = new TypeError("cannot read properties of undefined (reading 'x')");
    expect(cliFailure(bug)).toEqual({ code: 1, text: bug.message });
    expect(cliFailure(new RangeError(''))).toEqual({ code: 1, text: 'RangeError' });
    expect(cliFailure('a thrown string')).toEqual({ code: 1, text: 'a thrown string' });
  });

  it('as a process: a file that is no store → exit 1, one line from SqliteStoreError, no usage, no stack', async () => {
    const work = mkdtempSync(join(tmpdir(), 'actorloop-cli-'));
    try {
      const file = join(work, 'notes.txt');
      writeFileSync(file, 'not a database, only some notes\n');
      const { code, stdout, stderr } = await actorloop(['list', '--db', file]);
      expect({ code, stdout, stderr }).toEqual({
        code: 1,
        stdout: '',
        stderr: `actorloop: sqliteStore(${JSON.stringify(file)}): the file is not a SQLite database\n`,
      });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('stored conversations (--db, SQLite)', () => {
  const work = mkdtempSync(join(tmpdir(), 'actorloop-cli-'));
  const db = join(work, 'conversations.db');
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('run --db --id continues a stored conversation across processes; list and show read it', async () => {
    const first = await actorloop(['run', '--db', db, '--id', 'c1', 'what is 6*7?']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('6*7 = 42\n');
    expect(first.stderr).toContain(`conversation c1 in ${db} (new)`);
    const second = await actorloop(['run', '--db', db, '--id', 'c1', 'convert 5 km to miles']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('5 km = 3.10685596119 miles\n');
    expect(second.stderr).toContain('(continuing: 4 messages, done)');

    const list = await actorloop(['list', '--db', db]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^c1\tdone\t\d{4}-\d\d-\d\dT/);
    const show = await actorloop(['show', '--db', db, 'c1']);
    expect(show.code).toBe(0);
    expect(show.stdout.split('\n').slice(1, 9)).toEqual([
      'user: what is 6*7?',
      expect.stringMatching(/^assistant: → calculator\(\{"expression":"6\*7"\}\)$/),
      'tool calculator: 42',
      'assistant: 6*7 = 42',
      'user: convert 5 km to miles',
      'assistant: → convert_units({"value":5,"from":"km","to":"miles"})',
      'tool convert_units: 5 km = 3.10685596119 miles',
      'assistant: 5 km = 3.10685596119 miles',
    ]);
    const json = JSON.parse((await actorloop(['show', '--db', db, 'c1', '--json'])).stdout) as { status: string; messages: unknown[] };
    expect(json).toMatchObject({ status: 'done' });
    expect(json.messages).toHaveLength(8);

    const missing = await actorloop(['show', '--db', db, 'nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`actorloop: no conversation "nope" in ${db} (see actorloop list --db ${db})\n`);
  });

  it('Ctrl-C during a stored run cancels it, stores it halted, exits 130', async () => {
    const { result } = await actorloopInterrupted(
      ['run', '--db', db, '--id', 'c2', 'what is 1+2?'],
      { ACTORLOOP_OFFLINE_DELAY_MS: '3000' },
      'requesting',
    );
    expect(result.code).toBe(130);
    const show = JSON.parse((await actorloop(['show', '--db', db, 'c2', '--json'])).stdout) as { status: string };
    expect(show.status).toBe('halted');
  });

  it('inspect --db serves the live viewer on the store until Ctrl-C', async () => {
    let runs: unknown;
    const result = await actorloop(['inspect', '--db', db], {}, (child) => {
      child.stderr?.on('data', async (data: Buffer) => {
        const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(data.toString())?.[1];
        if (!url) return;
        // Give the first poll a moment to read the store.
        for (let tries = 0; tries < 20; tries++) {
          runs = await (await fetch(`${url}api/conversations`)).json();
          if (Array.isArray(runs) && runs.length >= 2) break;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        child.kill('SIGINT');
      });
    });
    expect(result.code).toBe(0);
    expect(runs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 'c1', status: 'done' }),
        expect.objectContaining({ id: 'c2', status: 'halted' }),
      ]),
    );
  });
});
