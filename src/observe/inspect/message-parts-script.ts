/**
 * The pages' message rendering, as client script: `partsOf(message)` gives a message's parts as
 * `[kind, text]` pairs (kind `''`, `'reasoning'`, `'tool'` or `'media'`), set as text, never as HTML.
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
    if (part.type === 'image' || part.type === 'file') return ['media', mediaLabelOf(part)];
    return ['', JSON.stringify(part)];
  });
}

// An image or file by its name, type and size, as mediaLabel (src/model/media.ts) writes it: its bytes
// would be megabytes of base64 text.
function mediaLabelOf(part) {
  const data = typeof part.data === 'string' ? part.data : '';
  const base64 = /^[A-Za-z0-9+/]*={0,2}$/.test(data) && data.length % 4 === 0;
  const bytes = base64 ? data.length / 4 * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0) : undefined;
  const size = bytes === undefined ? '' : bytes < 1024 ? ', ' + bytes + ' B' : bytes < 1048576 ? ', ' + Math.round(bytes / 1024) + ' KB' : ', ' + (bytes / 1048576).toFixed(1) + ' MB';
  return '[' + part.type + (part.filename ? ' ' + part.filename : '') + (part.mediaType ? ' ' + part.mediaType : '') + size + ']';
}
`;

/** The style of the rendered messages (`#messages`, its roles and parts), shared by both pages; each sets its own height. */
export const messagePartsStyle = `
#messages { list-style: none; margin: 0; padding: 0; overflow: auto; }
#messages li { padding: 6px 0; border-bottom: 1px solid #f1f5f9; }
#messages .role { display: inline-block; min-width: 70px; font-size: 11px; font-weight: 700; text-transform: uppercase; color: var(--muted); }
#messages .part { white-space: pre-wrap; margin: 2px 0 0 0; font-size: 13px; }
#messages .part.tool { font-family: ui-monospace, 'DejaVu Sans Mono', monospace; font-size: 12px; }
#messages .part.reasoning { color: var(--muted); font-style: italic; }
#messages .part.media { color: var(--muted); }
.empty { color: var(--muted); }
`;
