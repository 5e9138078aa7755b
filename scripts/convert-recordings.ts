/**
 * Converts recorded API traffic for the Gemini API, Mistral, Amazon Bedrock Converse and two
 * OpenAI-compatible servers (DeepSeek, Z.ai) out of public repositories' test cassettes into actorloop's JSON cassette format (test/fixtures/recorded/README.md,
 * and ../shared/fixtures/recorded/README.md for the format itself), then checks every cassette it wrote.
 *
 * Run from the repository root:
 *
 * ```sh
 * npx tsx scripts/convert-recordings.ts --repos DIR   # convert (needs the source repositories), then check
 * npx tsx scripts/convert-recordings.ts --check       # only check the cassettes already in test/fixtures/recorded/{google,mistral,bedrock,deepseek,zai}
 * ```
 *
 * `--repos DIR`: a folder with one git repository (bare or not) per source, named `<owner>+<name>` (or
 * `<owner>+<name>/repo`), each holding the commit listed in SOURCES below: charmbracelet+fantasy,
 * crmne+ruby_llm, pydantic+pydantic-ai, Mirascope+mirascope. Each recording is read with
 * `git show <commit>:<path>`, checked against its git blob id (`git rev-parse <commit>:<path>`), and
 * converted without editing recorded data: response bodies byte-exact (UTF-8 text, or base64 for AWS
 * binary event streams with `bodyEncoding: "base64"`), request bodies parsed as JSON, host dropped from
 * the path and the query kept apart (`query`), response headers filtered (HEADER_KEEP below).
 *
 * YAML is read with the `yaml` package already in node_modules (a dev dependency of
 * @seriousme/openapi-schema-validator); nothing is added to package.json. No network.
 *
 * Checks (also run after converting): every file parses as JSON; every SSE `data:` line parses as JSON
 * (`[DONE]` excepted); JSON bodies parse; base64 bodies decode to AWS event-stream frames that tile
 * the body exactly, each with a matching prelude total length, prelude CRC32 and message CRC32 and a
 * JSON payload; every Gemini function-call `thoughtSignature`, every Bedrock `reasoningContent`
 * signature and every Chat Completions `reasoning_content` a response returned is found unchanged in
 * the next request of the same file.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

type Provider = 'google' | 'mistral' | 'bedrock' | 'deepseek' | 'zai';

/** The wires that speak the Chat Completions dialect. */
const CHAT: ReadonlySet<Provider> = new Set(['mistral', 'deepseek', 'zai']);
type Format = 'go-vcr' | 'ruby-vcr' | 'vcrpy' | 'har';

interface Source {
  provider: Provider;
  name: string;
  repo: string;
  commit: string;
  path: string;
  format: Format;
}

const FANTASY = { repo: 'charmbracelet/fantasy', commit: 'f6d4d1e3022229bd6e77717416336bf50e1693ad', format: 'go-vcr' } as const;
const RUBYLLM = { repo: 'crmne/ruby_llm', commit: 'fb5a49bf04da78d3e74496431ad1c99df5e7e5f0', format: 'ruby-vcr' } as const;
const PYDANTIC = { repo: 'pydantic/pydantic-ai', commit: '4fda38988f2939fa6ea9cdefcf120693e10ef491', format: 'vcrpy' } as const;
const MIRASCOPE = { repo: 'Mirascope/mirascope', commit: '41d433578653411dbff96c6eaca4fa869aafc931', format: 'har' } as const;

const FT = 'providertests/testdata';
const RV = 'spec/fixtures/vcr_cassettes';
const PB = 'tests/models/cassettes/test_bedrock';
const FTT = `${FT}/TestOpenAICompatibleThinking`;

export const SOURCES: Source[] = [
  // Gemini API (generativelanguage.googleapis.com)
  {
    provider: 'google',
    name: 'fantasy-gemini-3-pro-preview-simple-streaming',
    ...FANTASY,
    path: `${FT}/TestGoogleCommon/gemini-3-pro-preview/simple_streaming.yaml`,
  },
  {
    provider: 'google',
    name: 'fantasy-gemini-3-pro-preview-tool-streaming',
    ...FANTASY,
    path: `${FT}/TestGoogleCommon/gemini-3-pro-preview/tool_streaming.yaml`,
  },
  {
    provider: 'google',
    name: 'fantasy-gemini-3-pro-preview-multi-tool-streaming',
    ...FANTASY,
    path: `${FT}/TestGoogleCommon/gemini-3-pro-preview/multi_tool_streaming.yaml`,
  },
  {
    provider: 'google',
    name: 'fantasy-gemini-3-pro-preview-tool',
    ...FANTASY,
    path: `${FT}/TestGoogleCommon/gemini-3-pro-preview/tool.yaml`,
  },
  {
    provider: 'google',
    name: 'fantasy-gemini-2.5-flash-thinking-tool-streaming',
    ...FANTASY,
    path: `${FT}/TestGoogleThinking/gemini-2.5-flash/thinking-streaming.yaml`,
  },
  {
    provider: 'google',
    name: 'mirascope-ts-gemini-2.5-flash-tool-loop-streaming',
    ...MIRASCOPE,
    path: 'typescript/tests/e2e/output/cassettes/tools/google/streams-tool-calls-and-resumes-with-results.har',
  },
  {
    provider: 'google',
    name: 'rubyllm-gemini-3.1-pro-preview-thought-signatures-tool-loop',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_thought_signatures_gemini_gemini-3_1-pro-preview_includes_thought_signatures_for_tool_calls.yml`,
  },
  {
    provider: 'google',
    name: 'rubyllm-error-400-api-key-invalid',
    ...RUBYLLM,
    path: `${RV}/chat_error_handling_with_gemini_gemini-2_5-flash_raises_appropriate_auth_error.yml`,
  },
  {
    provider: 'google',
    name: 'rubyllm-error-429-resource-exhausted',
    ...RUBYLLM,
    path: `${RV}/chat_real_error_scenarios_gemini_gemini-2_5-flash_handles_context_length_exceeded_errors.yml`,
  },
  {
    provider: 'google',
    name: 'mirascope-ts-error-404-stream-model-not-found',
    ...MIRASCOPE,
    path: 'typescript/tests/e2e/output/cassettes/stream/google/wraps-api-errors-on-stream-call.har',
  },
  // Mistral (api.mistral.ai)
  {
    provider: 'mistral',
    name: 'rubyllm-mistral-small-latest-tool-loop',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_mistral_mistral-small-latest_can_use_tools.yml`,
  },
  {
    provider: 'mistral',
    name: 'rubyllm-mistral-small-latest-parallel-tools',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_mistral_mistral-small-latest_can_use_parallel_tool_calls.yml`,
  },
  {
    provider: 'mistral',
    name: 'rubyllm-mistral-small-latest-tools-multiturn-streaming',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_mistral_mistral-small-latest_can_use_tools_with_multi-turn_streaming_conversations.yml`,
  },
  {
    provider: 'mistral',
    name: 'rubyllm-mistral-small-latest-reasoning-streaming',
    ...RUBYLLM,
    path: `${RV}/chat_mistral_hybrid_reasoning_streams_thinking_separately_from_content.yml`,
  },
  {
    provider: 'mistral',
    name: 'rubyllm-error-401-invalid-api-key',
    ...RUBYLLM,
    path: `${RV}/chat_error_handling_with_mistral_mistral-small-latest_raises_appropriate_auth_error.yml`,
  },
  // Amazon Bedrock Converse (bedrock-runtime.<region>.amazonaws.com)
  {
    provider: 'bedrock',
    name: 'pydanticai-nova-micro-tool-loop-streaming',
    ...PYDANTIC,
    path: `${PB}/test_bedrock_model_iter_stream.yaml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-nova-2-lite-tools-multiturn-streaming',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_bedrock_amazon_nova-2-lite-v1_0_can_use_tools_with_multi-turn_streaming_conversations.yml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-nova-2-lite-tool-loop',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_bedrock_amazon_nova-2-lite-v1_0_can_use_tools.yml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-claude-sonnet-4.5-parallel-tools',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_bedrock_claude-sonnet-4-5_can_use_parallel_tool_calls.yml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-claude-haiku-4.5-thinking-signature-multiturn',
    ...RUBYLLM,
    path: `${RV}/chat_with_extended_thinking_bedrock_claude-haiku-4-5_preserves_thinking_signatures_between_turns_when_provided.yml`,
  },
  {
    provider: 'bedrock',
    name: 'pydanticai-claude-sonnet-4-thinking-streaming',
    ...PYDANTIC,
    path: `${PB}/test_bedrock_model_thinking_part_stream.yaml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-error-400-validation-input-too-long',
    ...RUBYLLM,
    path: `${RV}/chat_real_error_scenarios_bedrock_amazon_nova-2-lite-v1_0_handles_context_length_exceeded_errors.yml`,
  },
  {
    provider: 'bedrock',
    name: 'rubyllm-error-403-unrecognized-client',
    ...RUBYLLM,
    path: `${RV}/chat_error_handling_with_bedrock_amazon_nova-2-lite-v1_0_raises_appropriate_auth_error.yml`,
  },
  // OpenAI-compatible Chat Completions: DeepSeek (api.deepseek.com) and Z.ai (api.z.ai)
  {
    provider: 'deepseek',
    name: 'rubyllm-deepseek-chat-tools-multiturn-streaming',
    ...RUBYLLM,
    path: `${RV}/chat_function_calling_deepseek_deepseek-chat_can_use_tools_with_multi-turn_streaming_conversations.yml`,
  },
  {
    provider: 'deepseek',
    name: 'rubyllm-deepseek-reasoner-reasoning-multiturn',
    ...RUBYLLM,
    path: `${RV}/chat_with_extended_thinking_deepseek_deepseek-reasoner_preserves_thinking_signatures_between_turns_when_provided.yml`,
  },
  {
    provider: 'deepseek',
    name: 'rubyllm-error-401-authentication-fails',
    ...RUBYLLM,
    path: `${RV}/chat_error_handling_with_deepseek_deepseek-chat_raises_appropriate_auth_error.yml`,
  },
  {
    provider: 'deepseek',
    name: 'rubyllm-error-400-context-length',
    ...RUBYLLM,
    path: `${RV}/chat_real_error_scenarios_deepseek_deepseek-chat_handles_context_length_exceeded_errors.yml`,
  },
  {
    provider: 'zai',
    name: 'fantasy-glm-4.7-flash-thinking-tool-streaming',
    ...FANTASY,
    path: `${FTT}/zai-glm-4-7-flash/thinking-streaming.yaml`,
  },
];

/** Response headers kept, per wire (lower-case names; everything else is dropped). */
const HEADER_KEEP: Record<Provider, (name: string) => boolean> = {
  google: (n) => n === 'content-type',
  mistral: (n) => n === 'content-type' || n === 'mistral-correlation-id' || n === 'x-kong-request-id' || n.startsWith('x-ratelimit-'),
  bedrock: (n) => n === 'content-type' || n === 'x-amzn-requestid' || n === 'x-amzn-errortype',
  deepseek: (n) => n === 'content-type' || n === 'x-ds-trace-id',
  zai: (n) => n === 'content-type',
};

const FORMAT_NAME: Record<Format, string> = {
  'go-vcr': 'go-vcr v2 cassette',
  'ruby-vcr': 'Ruby VCR cassette (VCR 6.4.0)',
  vcrpy: 'vcrpy cassette with pydantic-ai serializer',
  har: 'HAR 1.2 (Polly.JS 6.0.6)',
};

const OUT = join('test', 'fixtures', 'recorded');

interface Raw {
  method: string;
  url: string;
  requestBody: string | null;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

interface Cassette {
  provider: Provider;
  source: { repo: string; path: string; commit: string; note: string };
  description: string;
  framing: 'recorded';
  interactions: {
    request: { method: string; path: string; query?: string; body: unknown };
    response: { status: number; headers: Record<string, string>; bodyEncoding?: 'base64'; body: string };
  }[];
}

// ---------------------------------------------------------------------------------------------
// reading the recordings

type YamlParse = (src: string, options: { customTags: unknown[] }) => unknown;

async function loadYaml(): Promise<YamlParse> {
  const specifier: string = 'yaml';
  const mod = (await import(specifier)) as { parse: YamlParse };
  return mod.parse;
}

const toBuffer = (v: unknown): Buffer => {
  if (v == null) return Buffer.alloc(0);
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v instanceof Uint8Array) return Buffer.from(v);
  throw new Error(`unexpected body ${typeof v}`);
};

const headerMap = (h: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (Array.isArray(h)) {
    for (const { name, value } of h as { name: string; value: string }[]) out[name.toLowerCase()] = value;
  } else if (h && typeof h === 'object') {
    for (const [k, v] of Object.entries(h)) {
      const values = (Array.isArray(v) ? v : [v]).map((x) => (x instanceof Uint8Array ? Buffer.from(x).toString('utf8') : String(x)));
      out[k.toLowerCase()] = values.join(', ');
    }
  }
  return out;
};

function readInteractions(format: Format, text: string, parseYaml: YamlParse): Raw[] {
  const tags = ['binary', { tag: '!binary', resolve: (s: string) => Buffer.from(s, 'base64') }];
  // biome-ignore lint/suspicious/noExplicitAny: free-form recorder documents
  const doc: any = format === 'har' ? JSON.parse(text) : parseYaml(text, { customTags: tags });
  switch (format) {
    case 'go-vcr':
      // biome-ignore lint/suspicious/noExplicitAny: idem
      return doc.interactions.map((i: any) => ({
        method: i.request.method,
        url: i.request.url,
        requestBody: i.request.body ?? null,
        status: i.response.code,
        headers: headerMap(i.response.headers),
        body: toBuffer(i.response.body),
      }));
    case 'ruby-vcr':
      // biome-ignore lint/suspicious/noExplicitAny: idem
      return doc.http_interactions.map((i: any) => ({
        method: i.request.method,
        url: i.request.uri,
        requestBody: i.request.body?.string == null ? null : toBuffer(i.request.body.string).toString('utf8'),
        status: i.response.status.code,
        headers: headerMap(i.response.headers),
        body: toBuffer(i.response.body.string),
      }));
    case 'vcrpy':
      // biome-ignore lint/suspicious/noExplicitAny: idem
      return doc.interactions.map((i: any) => {
        if (i.response.parsed_body !== undefined) throw new Error('parsed_body responses are not taken by this converter');
        const rb = i.request.body ?? (i.request.parsed_body === undefined ? null : JSON.stringify(i.request.parsed_body));
        return {
          method: i.request.method,
          url: i.request.uri,
          requestBody: rb == null ? null : toBuffer(rb).toString('utf8'),
          status: i.response.status.code,
          headers: headerMap(i.response.headers),
          body: toBuffer(i.response.body?.string),
        };
      });
    case 'har':
      // biome-ignore lint/suspicious/noExplicitAny: idem
      return doc.log.entries.map((e: any) => ({
        method: e.request.method,
        url: e.request.url,
        requestBody: e.request.postData?.text ?? null,
        status: e.response.status,
        headers: headerMap(e.response.headers),
        body: e.response.content.encoding === 'base64' ? Buffer.from(e.response.content.text, 'base64') : toBuffer(e.response.content.text),
      }));
  }
}

const git = (dir: string, ...args: string[]): Buffer => execFileSync('git', ['-C', dir, ...args], { maxBuffer: 1 << 28 });

function repoDir(root: string, repo: string): string {
  const base = join(root, repo.replace('/', '+'));
  for (const d of [join(base, 'repo'), base]) if (existsSync(d)) return d;
  throw new Error(`no repository for ${repo} under ${root}`);
}

// ---------------------------------------------------------------------------------------------
// summaries for `description`

const isEventStream = (r: { headers: Record<string, string> }) => (r.headers['content-type'] ?? '').includes('vnd.amazon.eventstream');
const isSse = (r: { headers: Record<string, string> }) => (r.headers['content-type'] ?? '').includes('text/event-stream');

function sseData(body: string): unknown[] {
  const out: unknown[] = [];
  for (const line of body.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trimStart();
    if (data === '[DONE]') continue;
    out.push(JSON.parse(data));
  }
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
const crc32 = (b: Uint8Array): number => {
  let c = 0xffffffff;
  for (const x of b) c = (CRC_TABLE[(c ^ x) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};

export interface Frame {
  headers: Record<string, string>;
  payload: Buffer;
}

/** AWS event-stream framing: prelude (total length, headers length, prelude CRC), headers, payload, message CRC. */
export function decodeEventStream(buf: Buffer): Frame[] {
  const frames: Frame[] = [];
  let o = 0;
  while (o < buf.length) {
    if (buf.length - o < 16) throw new Error(`truncated frame at ${o}`);
    const total = buf.readUInt32BE(o);
    const hlen = buf.readUInt32BE(o + 4);
    if (o + total > buf.length) throw new Error(`frame at ${o}: total length ${total} runs past the body (${buf.length})`);
    if (crc32(buf.subarray(o, o + 8)) !== buf.readUInt32BE(o + 8)) throw new Error(`frame at ${o}: prelude CRC mismatch`);
    if (crc32(buf.subarray(o, o + total - 4)) !== buf.readUInt32BE(o + total - 4)) throw new Error(`frame at ${o}: message CRC mismatch`);
    const headers: Record<string, string> = {};
    let h = o + 12;
    while (h < o + 12 + hlen) {
      const nl = buf[h] as number;
      const name = buf.subarray(h + 1, h + 1 + nl).toString('utf8');
      h += 1 + nl;
      const type = buf[h];
      h += 1;
      if (type !== 7) throw new Error(`frame at ${o}: header ${name} has type ${type}, expected 7 (string)`);
      const vl = buf.readUInt16BE(h);
      headers[name] = buf.subarray(h + 2, h + 2 + vl).toString('utf8');
      h += 2 + vl;
    }
    frames.push({ headers, payload: buf.subarray(o + 12 + hlen, o + total - 4) });
    o += total;
  }
  return frames;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const trunc = (s: string, n = 90) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** Appends a label unless it repeats the previous one (streams repeat text parts chunk by chunk). */
const push = (items: string[], label: string) => {
  if (items[items.length - 1] !== label) items.push(label);
};

// biome-ignore lint/suspicious/noExplicitAny: recorded JSON
type J = any;

function summarizeGoogle(status: number, body: string, sse: boolean): { text: string; model?: string } {
  if (status >= 400) {
    const e: J = JSON.parse(body).error;
    const retry = (e.details ?? []).find((d: J) => String(d['@type']).endsWith('RetryInfo'));
    return { text: `HTTP ${status} ${e.status} "${trunc(e.message, 70)}"${retry ? `, RetryInfo retryDelay ${retry.retryDelay}` : ''}` };
  }
  const chunks: J[] = sse ? sseData(body) : [JSON.parse(body)];
  const items: string[] = [];
  let finish = '';
  let model: string | undefined;
  for (const c of chunks) {
    model ??= c.modelVersion;
    for (const cand of c.candidates ?? []) {
      for (const p of cand.content?.parts ?? []) {
        const sig = p.thoughtSignature ? ' + thoughtSignature' : '';
        if (p.functionCall)
          push(items, `functionCall ${p.functionCall.name} (${p.functionCall.id ? `id ${p.functionCall.id}` : 'no id'})${sig}`);
        else if (p.thought) push(items, 'thought summary');
        else if (typeof p.text === 'string') {
          if (p.text === '') {
            if (sig) push(items, `empty text part${sig}`);
          } else push(items, `text${sig}`);
        }
      }
      if (cand.finishReason) finish = cand.finishReason;
    }
  }
  return { text: `${sse ? `${plural(chunks.length, 'chunk')}: ` : ''}${items.join(', ')} -> ${finish}`, model };
}

/** A Chat Completions answer (Mistral, DeepSeek, Z.ai): content, Mistral's thinking arrays, `reasoning_content`, tool calls. */
function summarizeChat(status: number, body: string, sse: boolean): { text: string; model?: string } {
  if (status >= 400) return { text: `HTTP ${status} ${trunc(body.trim(), 70)}` };
  const items: string[] = [];
  let finish = '';
  let model: string | undefined;
  const content = (c: J) => {
    if (typeof c === 'string') {
      if (c !== '') push(items, 'text');
    } else if (Array.isArray(c)) for (const part of c) push(items, part.type === 'thinking' ? 'thinking chunks' : String(part.type));
  };
  const calls = (tc: J[] | null | undefined) => {
    // Streamed calls whose arguments come in pieces name the function on their first delta only.
    for (const t of tc ?? []) if (t.function?.name) push(items, `tool call ${t.function.name}`);
  };
  const reasoning = (r: unknown) => {
    if (typeof r === 'string' && r !== '') push(items, 'reasoning_content');
  };
  if (sse) {
    const chunks: J[] = sseData(body);
    for (const c of chunks) {
      model ??= c.model;
      for (const ch of c.choices) {
        reasoning(ch.delta.reasoning_content);
        content(ch.delta.content);
        calls(ch.delta.tool_calls);
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    }
    return { text: `${plural(chunks.length, 'chunk')} + [DONE]: ${items.join(', ')} -> ${finish}`, model };
  }
  const j: J = JSON.parse(body);
  const ch = j.choices[0];
  reasoning(ch.message.reasoning_content);
  content(ch.message.content);
  calls(ch.message.tool_calls);
  return { text: `${items.join(', ')} -> ${ch.finish_reason}`, model: j.model };
}

function summarizeBedrock(status: number, headers: Record<string, string>, body: Buffer): { text: string } {
  if (status >= 400) {
    const type = (headers['x-amzn-errortype'] ?? '').split(':')[0];
    return { text: `HTTP ${status} ${type} "${trunc(JSON.parse(body.toString('utf8')).message, 70)}"` };
  }
  const items: string[] = [];
  if (isEventStream({ headers })) {
    const frames = decodeEventStream(body);
    let stop = '';
    for (const f of frames) {
      const p: J = JSON.parse(f.payload.toString('utf8'));
      const t = f.headers[':event-type'];
      if (t === 'contentBlockStart' && p.start?.toolUse) push(items, `toolUse ${p.start.toolUse.name}`);
      if (t === 'contentBlockDelta') {
        if (p.delta.text !== undefined) push(items, 'text');
        if (p.delta.reasoningContent?.text !== undefined) push(items, 'reasoningContent');
        if (p.delta.reasoningContent?.signature !== undefined) push(items, 'signature');
      }
      if (t === 'messageStop') stop = p.stopReason;
    }
    return { text: `${plural(frames.length, 'frame')}: ${items.join(', ')} -> ${stop}` };
  }
  const j: J = JSON.parse(body.toString('utf8'));
  for (const b of j.output.message.content) {
    if (b.toolUse) push(items, `toolUse ${b.toolUse.name}`);
    else if (b.reasoningContent) push(items, `reasoningContent${b.reasoningContent.reasoningText?.signature ? ' + signature' : ''}`);
    else if (b.text !== undefined) push(items, 'text');
  }
  return { text: `${items.join(', ')} -> ${j.stopReason}` };
}

const COUNT = ['zero', 'one', 'two', 'three', 'four', 'five', 'six'];

function describe(provider: Provider, raws: Raw[], paths: string[]): string {
  const parts: string[] = [];
  let model = '';
  let streaming = false;
  raws.forEach((r, i) => {
    const path = paths[i] as string;
    let s: { text: string; model?: string };
    if (provider === 'google') {
      streaming ||= path.includes(':streamGenerateContent');
      s = summarizeGoogle(r.status, r.body.toString('utf8'), isSse(r) && r.status < 400);
      const requested = /\/models\/([^:]+):/.exec(path)?.[1] ?? '';
      if (!model) model = s.model && s.model !== requested ? `${requested} (served as ${s.model})` : requested;
    } else if (CHAT.has(provider)) {
      streaming ||= isSse(r);
      s = summarizeChat(r.status, r.body.toString('utf8'), isSse(r) && r.status < 400);
      const requested: string = r.requestBody ? (JSON.parse(r.requestBody).model ?? '') : '';
      if (!model) model = s.model && requested && s.model !== requested ? `${requested} (served as ${s.model})` : (s.model ?? requested);
    } else {
      streaming ||= path.endsWith('/converse-stream');
      s = summarizeBedrock(r.status, r.headers, r.body);
      if (!model) model = decodeURIComponent(/\/model\/(.+)\/converse/.exec(path)?.[1] ?? '');
    }
    parts.push(raws.length > 1 ? `[${i + 1}] ${s.text}` : s.text);
  });
  const mode = streaming ? 'streaming' : 'non-streaming';
  const n = raws.length > 1 ? `, ${COUNT[raws.length] ?? raws.length} requests` : '';
  return `${model} ${mode}${n}: ${parts.join('; ')}`;
}

// ---------------------------------------------------------------------------------------------
// converting

function splitUrl(url: string): { path: string; query?: string } {
  const m = /^https?:\/\/[^/]+(\/[^?]*)(?:\?(.*))?$/.exec(url);
  if (!m) throw new Error(`unexpected URL ${url}`);
  return m[2] ? { path: m[1] as string, query: m[2] } : { path: m[1] as string };
}

async function convert(root: string): Promise<void> {
  const parseYaml = await loadYaml();
  for (const s of SOURCES) {
    const dir = repoDir(root, s.repo);
    const bytes = git(dir, 'show', `${s.commit}:${s.path}`);
    const blob = git(dir, 'rev-parse', `${s.commit}:${s.path}`).toString().trim();
    const ours = createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
    if (ours !== blob) throw new Error(`${s.name}: blob ${ours} != ${blob}`);
    const [touched = '', date = ''] = git(dir, 'log', '-1', '--format=%H %cs', s.commit, '--', s.path).toString().trim().split(' ');
    const raws = readInteractions(s.format, bytes.toString('utf8'), parseYaml);
    const paths: string[] = [];
    const interactions: Cassette['interactions'] = raws.map((r) => {
      const { path, query } = splitUrl(r.url);
      paths.push(path);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers)) if (HEADER_KEEP[s.provider](k)) headers[k] = v;
      let response: Cassette['interactions'][number]['response'];
      if (isEventStream(r) && r.status < 400) {
        response = { status: r.status, headers, bodyEncoding: 'base64', body: r.body.toString('base64') };
      } else {
        const text = r.body.toString('utf8');
        if (!Buffer.from(text, 'utf8').equals(r.body)) throw new Error(`${s.name}: a response body is not UTF-8`);
        response = { status: r.status, headers, body: text };
      }
      return {
        request: {
          method: r.method.toUpperCase(),
          path,
          ...(query ? { query } : {}),
          body: r.requestBody == null ? null : JSON.parse(r.requestBody),
        },
        response,
      };
    });
    const ext = s.path.slice(s.path.lastIndexOf('.') + 1);
    const cassette: Cassette = {
      provider: s.provider,
      source: {
        repo: s.repo,
        path: s.path,
        commit: s.commit,
        note: `converted from ${FORMAT_NAME[s.format]}, file ${s.provider}/${s.name}.${ext}; git blob ${blob}; last touched in ${touched.slice(0, 12)} (${date})`,
      },
      description: describe(s.provider, raws, paths),
      framing: 'recorded',
      interactions,
    };
    mkdirSync(join(OUT, s.provider), { recursive: true });
    writeFileSync(join(OUT, s.provider, `${s.name}.json`), `${JSON.stringify(cassette, null, 2)}\n`);
    console.log(`wrote ${s.provider}/${s.name}.json  (${s.repo} ${s.path}, blob ${blob}, ${bytes.length} bytes)`);
  }
}

// ---------------------------------------------------------------------------------------------
// checking

/** Opaque signatures a response returned that a follow-up request must send back unchanged. */
function collectSignatures(provider: Provider, c: Cassette, i: number): { kind: string; values: string[] } {
  const r = c.interactions[i]?.response;
  if (!r || r.status >= 400 || provider === 'mistral') return { kind: '', values: [] };
  const values: string[] = [];
  if (CHAT.has(provider)) {
    // DeepSeek's thinking mode refuses a tool loop whose assistant turns lack their `reasoning_content`.
    let text = '';
    if (isSse(r)) {
      for (const c of sseData(r.body) as J[]) for (const ch of c.choices ?? []) text += ch.delta?.reasoning_content ?? '';
    } else {
      text = JSON.parse(r.body).choices?.[0]?.message?.reasoning_content ?? '';
    }
    if (text) values.push(text);
    return { kind: 'reasoning_content', values };
  }
  if (provider === 'google') {
    const chunks: J[] = isSse(r) ? sseData(r.body) : [JSON.parse(r.body)];
    for (const ch of chunks)
      for (const cand of ch.candidates ?? [])
        for (const p of cand.content?.parts ?? []) if (p.functionCall && p.thoughtSignature) values.push(p.thoughtSignature);
    return { kind: 'thoughtSignature', values };
  }
  if (r.bodyEncoding === 'base64') {
    let sig = '';
    for (const f of decodeEventStream(Buffer.from(r.body, 'base64'))) {
      const p: J = JSON.parse(f.payload.toString('utf8'));
      if (typeof p.delta?.reasoningContent?.signature === 'string') sig += p.delta.reasoningContent.signature;
    }
    if (sig) values.push(sig);
  } else {
    for (const b of JSON.parse(r.body).output?.message?.content ?? [])
      if (b.reasoningContent?.reasoningText?.signature) values.push(b.reasoningContent.reasoningText.signature);
  }
  return { kind: 'reasoningContent signature', values };
}

function check(): boolean {
  let ok = true;
  for (const provider of ['google', 'mistral', 'bedrock', 'deepseek', 'zai'] as Provider[]) {
    const dir = join(OUT, provider);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
      const notes: string[] = [];
      try {
        const c = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Cassette;
        if (c.provider !== provider) throw new Error(`provider ${c.provider} in ${provider}/`);
        c.interactions.forEach((it, i) => {
          const r = it.response;
          if (r.bodyEncoding === 'base64') {
            const frames = decodeEventStream(Buffer.from(r.body, 'base64'));
            for (const fr of frames) JSON.parse(fr.payload.toString('utf8'));
            notes.push(`#${i + 1} ${frames.length} event-stream frames`);
          } else if (isSse(r) && r.status < 400) {
            notes.push(`#${i + 1} ${sseData(r.body).length} SSE data lines`);
          } else {
            JSON.parse(r.body);
            notes.push(`#${i + 1} JSON ${r.status}`);
          }
          // Gemini function-call thoughtSignatures and Bedrock reasoning signatures must come back unchanged.
          const sigs = collectSignatures(provider, c, i);
          const next = c.interactions[i + 1]?.request.body;
          if (sigs.values.length && next) {
            const sent = JSON.stringify(next);
            const back = sigs.values.filter((sig) => sent.includes(JSON.stringify(sig)));
            notes.push(`#${i + 1}→#${i + 2} ${sigs.kind} ${back.length}/${sigs.values.length} sent back unchanged`);
            if (back.length !== sigs.values.length) ok = false;
          }
        });
        console.log(`ok   ${provider}/${f}: ${notes.join('; ')}`);
      } catch (e) {
        ok = false;
        console.log(`FAIL ${provider}/${f}: ${(e as Error).message}`);
      }
    }
  }
  return ok;
}

const args = process.argv.slice(2);
const reposAt = args.indexOf('--repos');
if (reposAt >= 0) {
  const root = args[reposAt + 1];
  if (!root) throw new Error('--repos needs a folder');
  await convert(root);
} else if (!args.includes('--check')) {
  console.error('usage: npx tsx scripts/convert-recordings.ts --repos DIR | --check');
  process.exit(2);
}
process.exit(check() ? 0 : 1);
