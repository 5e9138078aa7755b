/**
 * examples/chat-ui in headless Chromium: the page built by vite (into a temp folder) with the AI
 * SDK's `useChat`, served by the example's node:http server with the chat routes. A message, its
 * answer streaming, a tool call, an approval button, a reload in the middle of an answer that
 * resumes it; attachments (an image and a PDF chosen in the file picker) and a tool's image, shown
 * as thumbnails and named by the scripted model as it received them — and, as a process, the
 * example's one command on its scripted model.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPage } from '../examples/chat-ui/build-page.js';
import { barChartPng } from '../examples/chat-ui/chart-png.js';
import { maxAttachmentBytes } from '../examples/chat-ui/page/attachments.js';
import { scriptedChatModel } from '../examples/chat-ui/scripted-model.js';
import { type ChatServer, startChatServer } from '../examples/chat-ui/server.js';
import { openaiProvider } from '../src/index.js';
import { launchChromium, resultsDir } from './support/chromium.js';
import { deferred } from './support/run-conversation.js';
import { gatedTextStep, textStep, toolCallsStep } from './support/chat-steps.js';
import { startWireServer, type WireServer } from './support/wire-server.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-chat-ui-'));
const pageDir = join(work, 'page');
const shots = resultsDir('chat-ui');

let browser: { context: BrowserContext; close: () => Promise<void> };
beforeAll(async () => {
  await buildPage(pageDir);
  browser = await launchChromium({ width: 900, height: 900 });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  rmSync(work, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// The page.

type Opened = { page: Page; problems: string[] };

async function open(url: string): Promise<Opened> {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`${message.type()}: ${message.text()}`);
  });
  await page.goto(url);
  await page.waitForSelector('[data-testid=input]');
  return { page, problems };
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('[data-testid=input]', text);
  await page.click('[data-testid=send]');
}

/** What the page shows: each message's role, id and parts, as text. */
const shown = (page: Page) =>
  page.$$eval('li.message', (items) =>
    items.map((item) => ({
      role: item.getAttribute('data-testid')?.replace('message-', ''),
      id: item.getAttribute('data-id'),
      texts: [...item.querySelectorAll('[data-testid=text]')].map((node) => node.textContent ?? ''),
      tools: [...item.querySelectorAll('.tool')].map((node) => ({
        state: node.getAttribute('data-state'),
        text: node.textContent ?? '',
      })),
    })),
  );

const status = (page: Page) => page.$eval('main', (main) => main.getAttribute('data-status'));

async function until(page: Page, check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; !(await check()); tries++) {
    if (tries > 1_500) {
      await page.screenshot({ path: join(shots, `${what.replace(/\W+/g, '-')}.png`) });
      throw new Error(`the page never showed: ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const lastTexts = async (page: Page) => (await shown(page)).at(-1)?.texts.join('') ?? '';

/** What the tests read of an `<img>` in the page (they compile without the DOM's types). */
type ImageFields = { alt: string; naturalWidth: number; naturalHeight: number; complete: boolean; src: string };

/** The images a message shows (its attachments, its tools' outputs): each as the browser decoded it. */
const thumbnailsOf = (page: Page, selector: string) =>
  page.$$eval(selector, (images) =>
    (images as unknown as ImageFields[]).map((image) => ({
      alt: image.alt,
      width: image.naturalWidth,
      height: image.naturalHeight,
      complete: image.complete,
      scheme: image.src.slice(0, image.src.indexOf(':')),
    })),
  );

/** Whether every image on the page has loaded (decoded or failed): a reload draws them again. */
const imagesLoaded = (page: Page) => page.$$eval('img', (images) => (images as unknown as ImageFields[]).every((image) => image.complete));

// ---------------------------------------------------------------------------------------------

describe('the chat-ui example in headless Chromium', () => {
  let wire: WireServer;
  let server: ChatServer;
  const gates = { sum: deferred(), paid: deferred() };

  beforeAll(async () => {
    wire = await startWireServer([
      toolCallsStep([{ id: 'call_add', name: 'add', args: { a: 2, b: 3 } }], 'Let me add them. '),
      gatedTextStep('2 + 3 ', 'is 5.', gates.sum.promise),
      toolCallsStep([{ id: 'call_pay', name: 'pay', args: { amount: 80 } }]),
      gatedTextStep('Paid ', '80 euros, as you approved.', gates.paid.promise),
      toolCallsStep([{ id: 'call_pay_big', name: 'pay', args: { amount: 5000 } }]),
      textStep('I did not pay.'),
    ]);
    server = await startChatServer({
      provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
      db: join(work, 'chat.db'),
      pageDir,
    });
  });
  afterAll(async () => {
    gates.sum.resolve();
    gates.paid.resolve();
    await server?.close();
    await wire?.close();
  });

  it('streams an answer with a tool call, asks for approval with buttons, and resumes an answer after a reload', async () => {
    const { page, problems } = await open(`${server.url}/?chat=c-browser`);

    // A message: the tool call shows with its output, and the answer streams (its first words, while streaming).
    await send(page, 'what is 2+3?');
    await until(page, async () => (await lastTexts(page)).endsWith('2 + 3 ') && (await status(page)) === 'streaming', 'the first words');
    let messages = await shown(page);
    expect(messages.map(({ role, id }) => ({ role, id }))).toEqual([
      { role: 'user', id: expect.any(String) },
      { role: 'assistant', id: 'm1' },
    ]);
    expect(messages[1]?.tools).toEqual([{ state: 'output-available', text: expect.stringContaining('{"sum":5}') }]);
    expect(messages[1]?.tools[0]?.text).toContain('add');
    gates.sum.resolve();
    await until(page, async () => (await status(page)) === 'ready', 'the answer done');
    expect(await lastTexts(page)).toBe('Let me add them. 2 + 3 is 5.');
    await page.screenshot({ path: join(shots, '1-answer.png') });

    // A call that needs approval: the buttons; Approve runs it and the answer goes on in the same message.
    await send(page, 'pay 80');
    await page.waitForSelector('[data-testid=tool-call_pay][data-state=approval-requested] [data-testid=approve]');
    expect(await status(page)).toBe('ready');
    await page.screenshot({ path: join(shots, '2-approval.png') });
    // A reload while the run waits: nothing streams (204), the buttons come back from the history.
    await page.reload();
    await page.waitForSelector('[data-testid=tool-call_pay][data-state=approval-requested] [data-testid=approve]');
    expect(await status(page)).toBe('ready');
    await page.click('[data-testid=tool-call_pay] [data-testid=approve]');
    await until(page, async () => (await lastTexts(page)) === 'Paid ', 'the answer after approval starts');
    expect((await shown(page)).at(-1)?.tools).toEqual([{ state: 'output-available', text: expect.stringContaining('"paid €80"') }]);

    // A reload in the middle of that answer: the page loads the chat and resumes the stream.
    await page.reload();
    await page.waitForSelector('[data-testid=input]');
    await until(page, async () => (await lastTexts(page)) === 'Paid ' && (await status(page)) === 'streaming', 'the resumed answer');
    gates.paid.resolve();
    await until(
      page,
      async () => (await status(page)) === 'ready' && (await lastTexts(page)).endsWith('approved.'),
      'the resumed answer done',
    );
    messages = await shown(page);
    expect(messages.map(({ role, id }) => ({ role, id }))).toEqual([
      { role: 'user', id: 'm0' },
      { role: 'assistant', id: 'm1' },
      { role: 'user', id: 'm4' },
      { role: 'assistant', id: 'm5' },
    ]);
    expect(messages[3]?.texts.join('')).toBe('Paid 80 euros, as you approved.');
    expect(messages[3]?.tools).toEqual([{ state: 'output-available', text: expect.stringContaining('"paid €80"') }]);
    await page.screenshot({ path: join(shots, '3-resumed.png') });

    // Deny: the call shows denied, the model answers.
    await send(page, 'pay 5000');
    await page.click('[data-testid=tool-call_pay_big][data-state=approval-requested] [data-testid=deny]');
    await until(page, async () => (await lastTexts(page)) === 'I did not pay.', 'the answer after denial');
    expect((await shown(page)).at(-1)?.tools).toEqual([{ state: 'output-denied', text: expect.stringContaining('denied') }]);
    expect((await server.host.get('c-browser'))?.status).toBe('done');
    expect(wire.requests).toHaveLength(6);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('a page of another session cannot read the chat', async () => {
    // Another browser: a new session cookie comes with the page.
    await browser.context.clearCookies();
    const page = await browser.context.newPage();
    await page.goto(`${server.url}/?chat=c-browser`);
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toContain('403');
    expect(await page.textContent('body')).not.toContain('paid');
    await page.close();
  });
});

describe("attachments and images on the chat-ui page (headless Chromium, the example's scripted model)", () => {
  /** A picture to attach: 4 bars, 86×80 px (any PNG would do; this one shows in the screenshots). */
  const png = Buffer.from(barChartPng([2, 7, 1, 8]));
  const pdf = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n', 'latin1');
  let server: ChatServer;
  beforeAll(async () => {
    server = await startChatServer({ provider: scriptedChatModel({ wordDelayMs: 2 }), db: join(work, 'media.db'), pageDir });
  });
  afterAll(async () => {
    await server?.close();
  });

  const ready = (page: Page, ending: string) =>
    until(page, async () => (await status(page)) === 'ready' && (await lastTexts(page)).endsWith(ending), `an answer ending ${ending}`);

  it('attaches an image: a thumbnail in the bubble, an answer naming the image as the model got it, the same bytes stored', async () => {
    const { page, problems } = await open(`${server.url}/?chat=c-image`);
    await page.setInputFiles('[data-testid=attach]', { name: 'bars.png', mimeType: 'image/png', buffer: png });
    expect(await page.textContent('[data-testid=pending]')).toContain(`bars.png (${png.length} B)`);
    await send(page, 'what is in this picture?');
    await ready(page, 'not what it shows.');

    const [user, answer] = await shown(page);
    expect(user).toMatchObject({ role: 'user', texts: ['what is in this picture?'] });
    expect(await thumbnailsOf(page, '.message.user [data-testid=thumbnail]')).toEqual([
      { alt: 'bars.png', width: 86, height: 80, complete: true, scheme: 'data' },
    ]);
    // What the model received, read from its request: the type and size of the image part.
    expect(answer?.texts.join('')).toBe(
      `I received an image (image/png, ${png.length} bytes). I am a scripted model: I can tell what I was sent, not what it shows.`,
    );
    // The picker is empty again: the next message goes without the image.
    expect(await page.$('[data-testid=pending]')).toBeNull();
    expect(
      await page.$eval('[data-testid=attach]', (input) => (input as unknown as { files: { length: number } | null }).files?.length),
    ).toBe(0);
    // The conversation as the server keeps it: the image part, the file's very bytes.
    expect((await server.host.get('c-image'))?.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'image', data: png.toString('base64'), mediaType: 'image/png' },
        { type: 'text', text: 'what is in this picture?' },
      ],
    });
    await page.screenshot({ path: join(shots, '5-attached-image.png') });

    // A reload: the image comes back from the stored history (a data: URL), decoded again.
    await page.reload();
    await page.waitForSelector('.message.user [data-testid=thumbnail]');
    await until(page, () => imagesLoaded(page), 'the thumbnails after a reload');
    expect(await thumbnailsOf(page, '.message.user [data-testid=thumbnail]')).toEqual([
      { alt: 'image/png', width: 86, height: 80, complete: true, scheme: 'data' },
    ]);

    // A PDF shows as a chip with its name; the model names it too.
    await page.setInputFiles('[data-testid=attach]', { name: 'q3.pdf', mimeType: 'application/pdf', buffer: pdf });
    await send(page, 'summarize this');
    await ready(page, 'not what it shows.');
    expect(await page.$$eval('.message.user [data-testid=file-chip]', (chips) => chips.map((chip) => chip.textContent))).toEqual([
      '📄 q3.pdf',
    ]);
    expect(await lastTexts(page)).toMatch(new RegExp(`^I received a file q3\\.pdf \\(application/pdf, ${pdf.length} bytes\\)\\.`));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("draws a tool's image (the chart tool) as a thumbnail in the tool's output, and the model names the chart it got", async () => {
    const { page, problems } = await open(`${server.url}/?chat=c-chart`);
    await send(page, 'chart 3 1 4');
    const chart = barChartPng([3, 1, 4]);
    await ready(page, 'bytes).');
    expect(await lastTexts(page)).toBe(`Drawing it. Here is the chart of 3, 1, 4: an image (image/png, ${chart.length} bytes).`);
    const [tool] = (await shown(page)).at(-1)?.tools ?? [];
    expect(tool).toEqual({ state: 'output-available', text: expect.stringContaining('A bar chart of 3, 1, 4:') });
    // 3 bars of 14 px with 6 px gaps, 80 px high: the PNG the tool drew, decoded by the browser.
    expect(await thumbnailsOf(page, '.tool [data-testid=thumbnail]')).toEqual([
      { alt: 'image/png', width: 66, height: 80, complete: true, scheme: 'data' },
    ]);
    // The output's text, never the image's base64.
    expect(tool?.text).not.toContain(Buffer.from(chart).toString('base64').slice(0, 40));
    await page.screenshot({ path: join(shots, '6-chart-tool.png') });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('refuses, before sending, a file of a type the wires do not take and files over the size limit', async () => {
    const { page, problems } = await open(`${server.url}/?chat=c-refused`);
    await page.setInputFiles('[data-testid=attach]', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    expect(await page.textContent('[data-testid=refused]')).toBe('notes.txt is text/plain: attach PNG, JPEG, GIF or WebP images, or PDFs');
    expect(await page.$('[data-testid=pending]')).toBeNull();
    const big = Buffer.concat([png, Buffer.alloc(maxAttachmentBytes)]);
    await page.setInputFiles('[data-testid=attach]', { name: 'huge.png', mimeType: 'image/png', buffer: big });
    expect(await page.textContent('[data-testid=refused]')).toMatch(/^the files weigh 4\.1 MB: attach at most 4\.0 MB with a message$/);
    expect(await page.$('[data-testid=pending]')).toBeNull();
    // A file that fits clears the complaint.
    await page.setInputFiles('[data-testid=attach]', { name: 'bars.png', mimeType: 'image/png', buffer: png });
    expect(await page.$('[data-testid=refused]')).toBeNull();
    expect(await page.textContent('[data-testid=pending]')).toContain('bars.png');
    // …and ✕ takes it back.
    await page.click('[data-testid=clear-files]');
    expect(await page.$('[data-testid=pending]')).toBeNull();
    expect(
      await page.$eval('[data-testid=attach]', (input) => (input as unknown as { files: { length: number } | null }).files?.length),
    ).toBe(0);
    expect(await server.host.get('c-refused')).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('the chat-ui example as one command', () => {
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child?.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('npm run example -- chat-ui: builds the page, serves it offline on the scripted model, approvals included', async () => {
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'scripts/example.ts', 'chat-ui', '--port', '0', '--db', join(work, 'one-command.db')],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const output: string[] = [];
    child.stderr?.on('data', (data: Buffer) => output.push(data.toString()));
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    const url = await new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        output.push(line);
        const found = /open (http:\/\/\S+)\//.exec(line);
        if (found?.[1]) resolve(found[1]);
      });
      child?.once('exit', (code) => reject(new Error(`the example exited (${code}): ${output.join('\n')}`)));
    });
    expect(output[0]).toMatch(/OFFLINE: a SCRIPTED model/);
    const { page, problems } = await open(`${url}/`);
    expect(page.url()).toMatch(/\?chat=chat-/);
    await send(page, 'what is 2+3?');
    await until(
      page,
      async () => (await status(page)) === 'ready' && (await lastTexts(page)).endsWith('2 + 3 = 5.'),
      'the scripted answer',
    );
    await send(page, 'pay 80');
    await page.click('[data-state=approval-requested] [data-testid=approve]');
    await until(page, async () => (await lastTexts(page)).endsWith('Done: paid €80.'), 'the payment');
    await page.screenshot({ path: join(shots, '4-one-command.png') });
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
