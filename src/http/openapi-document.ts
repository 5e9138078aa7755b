import { type ProblemTypeName, problemTypePrefix, problemTypes } from './problem.js';
import { conversationIdPattern, type JsonSchema, objectSchema } from './request-fields.js';
import type { Route, RouteSettings } from './route.js';

/** Problems any route may answer, by what it does. */
const problemsOfEvery: ProblemTypeName[] = ['internal-error', 'host-closed'];
const problemsOfAuthorized: ProblemTypeName[] = ['unauthorized', 'forbidden'];
const problemsOfPath: ProblemTypeName[] = ['invalid-field'];
const problemsOfBody: ProblemTypeName[] = ['malformed-body', 'invalid-field', 'body-timeout', 'body-too-large', 'unsupported-media-type'];

const message: JsonSchema = {
  description: 'A message of the history, in the neutral model (docs/behaviour.md)',
  type: 'object',
  required: ['role', 'content'],
  properties: {
    role: { enum: ['system', 'user', 'assistant', 'tool'] },
    content: {
      oneOf: [
        { type: 'string' },
        { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
      ],
    },
  },
};

const components = {
  schemas: {
    Problem: {
      description: 'RFC 9457 problem details; `field` names the part of the request the problem is about',
      type: 'object',
      required: ['type', 'title', 'status', 'detail'],
      properties: {
        type: { type: 'string', enum: Object.keys(problemTypes).map((name) => `${problemTypePrefix}${name}`) },
        title: { type: 'string' },
        status: { type: 'integer' },
        detail: { type: 'string' },
        field: { type: 'string' },
      },
    },
    Message: message,
    ConversationView: {
      type: 'object',
      required: ['id', 'status', 'value', 'messages', 'pendingApprovals', 'updatedAt'],
      properties: {
        id: { type: 'string' },
        status: { enum: ['idle', 'running', 'awaitingApproval', 'done', 'halted', 'error'] },
        value: { description: 'The state of the current (or last) run', oneOf: [{ type: 'string' }, { type: 'object' }] },
        messages: { type: 'array', items: { $ref: '#/components/schemas/Message' } },
        pendingApprovals: {
          type: 'array',
          items: {
            type: 'object',
            required: ['toolCallId', 'name', 'args'],
            properties: {
              toolCallId: { type: 'string' },
              name: { type: 'string' },
              args: {},
              path: { type: 'array', items: { type: 'string' } },
            },
          },
        },
        usage: { type: 'object', description: 'Tokens its current (or last) run has used so far' },
        updatedAt: { type: 'integer', description: 'When it was last stored (epoch milliseconds)' },
        seq: { type: 'integer', description: 'The last stored step (a `seq` of `GET /conversations/{id}/steps`)' },
      },
    },
    Step: {
      type: 'object',
      required: ['seq', 'at', 'state', 'status'],
      properties: {
        seq: { type: 'integer' },
        at: { type: 'integer', description: 'Epoch milliseconds' },
        state: { description: 'The state the step stored', oneOf: [{ type: 'string' }, { type: 'object' }] },
        status: { enum: ['idle', 'running', 'awaitingApproval', 'done', 'halted', 'error'] },
      },
    },
    StepsPage: {
      type: 'object',
      required: ['steps'],
      properties: {
        steps: { type: 'array', items: { $ref: '#/components/schemas/Step' } },
        nextAfterSeq: { type: 'integer', description: 'There is more: ask again with `afterSeq` set to this' },
      },
    },
    StreamEvent: {
      description:
        'The `data:` of an SSE message: an event a run emitted (`text.delta`, `tool.call`, `tool.result`, ' +
        '`tool.approval.requested`, `usage`, …) or a state change (`state`: `value`, `status`, and `output` without the ' +
        'history when the run ends); the SSE `event:` is its `type`, the SSE `id:` its stream id. `event: resume` carries ' +
        '`{ lastEventId, reason }` instead and ends the stream.',
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string' } },
    },
    LogEntry: {
      type: 'object',
      required: ['seq', 'at', 'event'],
      properties: {
        seq: { type: 'integer' },
        at: { type: 'integer', description: 'Epoch milliseconds' },
        event: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
      },
    },
    HistoryPage: {
      type: 'object',
      required: ['entries'],
      properties: {
        entries: { type: 'array', items: { $ref: '#/components/schemas/LogEntry' } },
        nextAfterSeq: { type: 'integer', description: 'There is more: ask again with `afterSeq` set to this' },
      },
    },
  },
};

/**
 * The OpenAPI 3.1 document of a handler's routes: paths, parameters, bodies and answers — the
 * problems each route may answer included — generated from the route table the router uses.
 *
 * @example
 * ```ts
 * const document = openApiDocument(conversationRoutes, { basePath: '/api', openApi: { title: 'Support', version: '1.0.0' }, … });
 * ```
 */
export function openApiDocument(routes: readonly Route[], settings: Pick<RouteSettings, 'basePath' | 'openApi'>): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = `${settings.basePath}${route.path}`;
    paths[path] ??= {};
    (paths[path] as Record<string, JsonSchema>)[route.method.toLowerCase()] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    info: { title: settings.openApi.title, version: settings.openApi.version },
    paths,
    components,
  };
}

function operationOf(route: Route): JsonSchema {
  const parameters: JsonSchema[] = [];
  if (route.path.includes('{id}')) {
    parameters.push({
      name: 'id',
      in: 'path',
      required: true,
      description: 'The conversation id',
      schema: { type: 'string', pattern: conversationIdPattern.source },
    });
  }
  for (const [name, field] of Object.entries(route.query ?? {})) {
    parameters.push({ name, in: 'query', required: field.required, description: field.schema.description, schema: field.schema });
  }
  for (const [name, field] of Object.entries(route.headers ?? {})) {
    parameters.push({ name, in: 'header', required: false, description: field.schema.description, schema: field.schema });
  }
  const problems = new Set<ProblemTypeName>([
    ...problemsOfEvery,
    ...(route.authorize === 'none' ? [] : problemsOfAuthorized),
    ...(route.path.includes('{id}') || route.query || route.headers ? problemsOfPath : []),
    ...(route.body ? problemsOfBody : []),
    ...(route.problems ?? []),
  ]);
  const responses: Record<string, JsonSchema> = {};
  for (const answer of route.answers) {
    responses[String(answer.status)] = {
      description: answer.description,
      ...(answer.type ? { content: { [answer.type]: { schema: answer.schema ?? {} } } } : {}),
    };
  }
  const byStatus = new Map<number, ProblemTypeName[]>();
  for (const name of problems) {
    const { status } = problemTypes[name];
    byStatus.set(status, [...(byStatus.get(status) ?? []), name]);
  }
  for (const [status, names] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: names.map((name) => problemTypes[name].title).join('; '),
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: Object.values(route.body).some((field) => field.required),
            content: { 'application/json': { schema: objectSchema(route.body) } },
          },
        }
      : {}),
    responses,
  };
}
