// `actorloop/mcp` as a user installs it (the package, xstate, the MCP SDK and zod): type-checked
// with strict and skipLibCheck: false, then run — a conversation whose tool is an MCP server's.
import { createConversationMachine, handlerProvider, type ToolResultEvent } from 'actorloop';
import { type McpTool, type McpToolSet, McpToolError, mcpTools } from 'actorloop/mcp';
import { createActor, toPromise } from 'xstate';

const server: McpToolSet = await mcpTools({ command: process.execPath, args: ['mcp-server.mjs'] }, { prefix: 'calc_' });
const tools: ReadonlyArray<McpTool> = server.tools;
let turn = 0;
const machine = createConversationMachine({
  provider: handlerProvider(async function* () {
    turn += 1;
    if (turn === 1) {
      const call = { index: 0, id: 'c1', type: 'function' as const, function: { name: 'calc_add', arguments: '{"a":2,"b":3}' } };
      yield { choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: 'tool_calls' }] };
    } else {
      yield { choices: [{ index: 0, delta: { content: 'It is 5.' }, finish_reason: 'stop' }] };
    }
  }),
  tools,
});
const actor = createActor(machine, { input: {} }).start();
const results: string[] = [];
actor.on('tool.result', (event: ToolResultEvent) => results.push(event.result));
actor.send({ type: 'user.message', content: 'What is 2+3?' });
const output = await toPromise(actor);
await server.close();
console.log(
  JSON.stringify({
    tools: tools.map((tool) => tool.name),
    status: output.status,
    text: output.text,
    results,
    isError: McpToolError.isInstance(new Error()),
  }),
);
