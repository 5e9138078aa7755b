/**
 * The pages' message rendering, as client script: `partsOf(message)` gives a message's parts as
 * `[kind, text]` pairs (kind `''`, `'reasoning'`, `'tool'` or `'media'`), set as text, never as HTML;
 * `partNodesOf(message)` gives the elements a page shows for them — that text, with a thumbnail of
 * each image held inline (a user's, or a tool result's `content`). Shared by the live viewer's page
 * and the host viewer's page.
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
  const base64 = isBase64(data);
  const bytes = base64 ? data.length / 4 * 3 - (data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0) : undefined;
  const size = bytes === undefined ? '' : bytes < 1024 ? ', ' + bytes + ' B' : bytes < 1048576 ? ', ' + Math.round(bytes / 1024) + ' KB' : ', ' + (bytes / 1048576).toFixed(1) + ' MB';
  return '[' + part.type + (part.filename ? ' ' + part.filename : '') + (part.mediaType ? ' ' + part.mediaType : '') + size + ']';
}

function isBase64(data) {
  return /^[A-Za-z0-9+/]*={0,2}$/.test(data) && data.length % 4 === 0;
}

// The elements of a message's parts: partsOf's text, each in a .part element; an image part held
// inline as a thumbnail above its label, one by URL as a link (the page never loads what a
// conversation points at), other media as the label; a tool result's images as thumbnails under its text.
function partNodesOf(message) {
  const parts = typeof message.content === 'string' ? [] : message.content;
  return partsOf(message).map(([kind, text], index) => {
    const part = parts[index];
    const node = document.createElement('div');
    node.className = 'part ' + kind;
    if (part && (part.type === 'image' || part.type === 'file')) {
      node.append(mediaNodeOf(part, text, true));
      return node;
    }
    node.textContent = text;
    const media = part && part.type === 'tool-result' && Array.isArray(part.content)
      ? part.content.filter((inner) => inner && (inner.type === 'image' || inner.type === 'file'))
      : [];
    if (media.length > 0) {
      const row = document.createElement('div');
      row.className = 'media-row';
      // The labels are in the result's text already: the images go without a caption.
      row.append(...media.map((inner) => mediaNodeOf(inner, mediaLabelOf(inner), false)));
      node.append(row);
    }
    return node;
  });
}

// Only the raster types every browser decodes make a data: URL, and only from base64: nothing a
// conversation holds becomes markup or a script-bearing document.
const thumbnailTypes = /^image\\/(png|jpeg|gif|webp)$/;

function mediaNodeOf(part, label, captioned) {
  const data = typeof part.data === 'string' ? part.data : '';
  if (part.type === 'image' && typeof part.mediaType === 'string' && thumbnailTypes.test(part.mediaType) && data !== '' && isBase64(data)) {
    const image = document.createElement('img');
    image.className = 'thumb';
    image.alt = label;
    image.title = label;
    image.src = 'data:' + part.mediaType + ';base64,' + data;
    if (!captioned) return image;
    const figure = document.createElement('figure');
    figure.className = 'media';
    const caption = document.createElement('figcaption');
    caption.textContent = label;
    figure.append(image, caption);
    return figure;
  }
  if (/^https:\\/\\//i.test(data)) {
    const link = document.createElement('a');
    link.className = 'media-link';
    link.href = data;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    link.title = data;
    link.textContent = label;
    return link;
  }
  const span = document.createElement('span');
  span.className = 'media-label';
  span.textContent = label;
  return span;
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
#messages figure.media { margin: 2px 0; }
#messages figcaption { font-size: 12px; }
#messages .media-row { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 4px; }
#messages .thumb { display: block; max-width: 160px; max-height: 160px; border: 1px solid var(--line); border-radius: 4px; background: #fff; }
#messages .media-link { color: inherit; }
.empty { color: var(--muted); }
`;
