/**
 * Which model an example talks to: a live one when the environment names one, otherwise the
 * example's scripted model (offline, said so in the first line the example prints).
 *
 * | environment                                          | model                                          |
 * | ---------------------------------------------------- | ---------------------------------------------- |
 * | `OPENAI_BASE_URL` (+ `OPENAI_MODEL`, `OPENAI_API_KEY`) | that OpenAI-compatible server (Ollama, vLLM, …) |
 * | `OPENAI_API_KEY` (+ `OPENAI_MODEL`)                    | OpenAI, `gpt-4o-mini` unless `OPENAI_MODEL`      |
 * | `ANTHROPIC_API_KEY` (+ `ANTHROPIC_MODEL`)              | Anthropic, `claude-sonnet-4-5` unless `ANTHROPIC_MODEL` |
 * | none of them                                         | the scripted model, offline                    |
 */
import { anthropicProvider, openaiProvider, type Provider } from 'actorloop';
import { type Script, scriptedProvider } from './script.js';

export type ModelChoice = { provider: Provider; live: boolean; label: string };

/** A placeholder key for local servers that need none (the `openai` SDK insists on one). */
const noKey = 'not-needed';

/**
 * The model an OpenAI-compatible server serves: `OPENAI_MODEL`, else the first one its
 * `GET /models` lists (Ollama and vLLM both answer it).
 */
export async function modelOfServer(baseURL: string, apiKey: string): Promise<string> {
  const named = process.env.OPENAI_MODEL;
  if (named) return named;
  const url = `${baseURL.replace(/\/$/, '')}/models`;
  const response = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } }).catch((error: unknown) => {
    throw new Error(`cannot reach ${url} (${error instanceof Error ? error.message : String(error)}): is the server running?`);
  });
  if (!response.ok) throw new Error(`GET ${baseURL}/models answered ${response.status}: set OPENAI_MODEL to the model to use`);
  const { data } = (await response.json()) as { data?: Array<{ id?: string }> };
  const first = data?.[0]?.id;
  if (!first) throw new Error(`${baseURL}/models lists no model: set OPENAI_MODEL`);
  return first;
}

/** A live model from the environment, or `undefined` when none is configured. */
export async function liveModel(): Promise<ModelChoice | undefined> {
  const baseURL = process.env.OPENAI_BASE_URL;
  if (baseURL) {
    const apiKey = process.env.OPENAI_API_KEY ?? noKey;
    const model = await modelOfServer(baseURL, apiKey);
    return { provider: openaiProvider({ model, baseURL, apiKey, name: 'openai-compatible' }), live: true, label: `${model} at ${baseURL}` };
  }
  if (process.env.OPENAI_API_KEY) {
    const model = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
    return { provider: openaiProvider({ model }), live: true, label: `OpenAI ${model}` };
  }
  if (process.env.ANTHROPIC_API_KEY) {
    const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5';
    return { provider: anthropicProvider({ model, maxTokens: 1024 }), live: true, label: `Anthropic ${model}` };
  }
  return undefined;
}

/** The live model if the environment names one, else `script` as an in-process scripted model. */
export async function chooseModel(script: Script): Promise<ModelChoice> {
  return (
    (await liveModel()) ?? {
      provider: scriptedProvider(script),
      live: false,
      label: 'a SCRIPTED model (handlerProvider, in this process; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL to go live)',
    }
  );
}

/** The first line every example prints: what it talks to. */
export function printMode(example: string, choice: { live: boolean; label: string }): void {
  console.log(`actorloop example "${example}" — ${choice.live ? 'LIVE' : 'OFFLINE'}: ${choice.label}`);
}
