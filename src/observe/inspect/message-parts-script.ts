/**
 * The pages' message rendering, as client script: `partsOf(message)` gives a message's parts as
 * `[kind, text]` pairs (kind `''`, `'reasoning'` or `'tool'`), set as text, never as HTML.
 * Shared by the live viewer's page and the host viewer's page.
 */
export const messagePartsScript = `
function partsOf(message) {
  if (typeof message.content === 'string') return [['', message.content]];
  return message.content.map((part) => {
    if (part.type === 'text') return ['', part.text];
    if (part.type === 'reasoning') return ['reasoning', part.text];
    if (part.type === 'redacted-reasoning') return ['reasoning', '(redacted reasoning)'];
    if (part.type === 'tool-call') return ['tool', part.toolName + '(' + JSON.stringify(part.args) + ')'];
    if (part.type === 'tool-result') return ['tool', '→ ' + part.toolName + (part.isError ? ' (error)' : '') + ': ' + (typeof part.result === 'string' ? part.result : JSON.stringify(part.result))];
    return ['', JSON.stringify(part)];
  });
}
`;
