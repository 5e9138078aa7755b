/**
 * The chat page: the AI SDK's `useChat` talking to actorloop's chat routes, unchanged. The chat id
 * is in the address (`?chat=…`), so a reload comes back to the same conversation: the page loads
 * its messages, and `resume: true` picks up an answer still streaming. Images and PDFs go with a
 * message as `useChat` attachments (`sendMessage({ text, files })`).
 */
import { type UIMessage, useChat } from '@ai-sdk/react';
import { DefaultChatTransport, type FileUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { type ChangeEvent, type FormEvent, StrictMode, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { attachmentTypes, maxAttachmentBytes } from './attachments.js';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

const isToolPart = (part: Part): part is ToolPart => part.type.startsWith('tool-') || part.type === 'dynamic-tool';
const toolName = (part: ToolPart) => ('toolName' in part ? String(part.toolName) : part.type.slice('tool-'.length));

/**
 * The chat routes read only the end of the chat (the new message, and approvals answered in the one
 * before it): sending the whole chat, as the default transport does, would send every attachment
 * again with each message until the body passes the server's limit.
 */
const transport = new DefaultChatTransport({
  api: '/api/chat',
  prepareSendMessagesRequest: ({ id, messages, trigger, messageId }) => ({
    body: { id, messages: messages.slice(-2), trigger, messageId },
  }),
});

/** Image types a thumbnail is drawn for; anything else shows as a chip with its name. */
const thumbnailType = /^image\/(png|jpeg|gif|webp)$/;

/** An image or a file: a thumbnail for an image given inline or by https: URL, else a chip naming it. */
function Medium({ url, mediaType, name }: { url: string; mediaType: string | undefined; name: string }) {
  if (
    mediaType !== undefined &&
    thumbnailType.test(mediaType) &&
    (url.startsWith(`data:${mediaType};base64,`) || url.startsWith('https://'))
  ) {
    return <img className="thumb" data-testid="thumbnail" src={url} alt={name} title={name} />;
  }
  return (
    <span className="file-chip" data-testid="file-chip" title={mediaType}>
      📄 {name}
    </span>
  );
}

/** The attachment of a user message (a UI `file` part). */
function Attachment({ part }: { part: FileUIPart }) {
  return <Medium url={part.url} mediaType={part.mediaType} name={part.filename ?? part.mediaType} />;
}

/** One item of a tool's content output (`{ type: 'content', value }`): text, or a medium inline or by URL. */
type ContentItem = { type: 'text'; text: string } | { type: 'media'; data?: string; url?: string; mediaType?: string; filename?: string };

/** A tool output given as content (a tool that returned `toolContent([...])`), or `undefined` for any other output. */
function contentItems(output: unknown): ContentItem[] | undefined {
  if (typeof output !== 'object' || output === null || (output as { type?: unknown }).type !== 'content') return undefined;
  const value = (output as { value?: unknown }).value;
  return Array.isArray(value) ? (value as ContentItem[]) : undefined;
}

function ContentOutput({ items }: { items: ContentItem[] }) {
  return (
    <div className="output content" data-testid="content-output">
      →{' '}
      {items.map((item, index) => {
        const key = `${index}`;
        if (item.type === 'text') return <span key={key}>{item.text} </span>;
        const name = item.filename ?? item.mediaType ?? 'file';
        const url = typeof item.data === 'string' ? `data:${item.mediaType};base64,${item.data}` : (item.url ?? '');
        return <Medium key={key} url={url} mediaType={item.mediaType} name={name} />;
      })}
    </div>
  );
}

/** Why files cannot go with a message (a type the wires do not take, or too much), or `undefined`. */
function attachmentProblem(files: FileList): string | undefined {
  const accepted: readonly string[] = attachmentTypes;
  const wrong = [...files].find((file) => !accepted.includes(file.type));
  if (wrong) return `${wrong.name} is ${wrong.type || 'of an unknown type'}: attach PNG, JPEG, GIF or WebP images, or PDFs`;
  const bytes = [...files].reduce((sum, file) => sum + file.size, 0);
  if (bytes > maxAttachmentBytes) return `the files weigh ${sizeOf(bytes)}: attach at most ${sizeOf(maxAttachmentBytes)} with a message`;
  return undefined;
}

/** A size as people read it; rounded up, so a file just over a limit never reads as the limit. */
function sizeOf(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(Math.ceil(bytes / ((1024 * 1024) / 10)) / 10).toFixed(1)} MB`;
}

/** This tab's chat: the one in the address, or a new one put there. */
function chatId(): string {
  const url = new URL(location.href);
  let id = url.searchParams.get('chat');
  if (!id) {
    id = `chat-${crypto.randomUUID().slice(0, 8)}`;
    url.searchParams.set('chat', id);
    history.replaceState(null, '', url);
  }
  return id;
}

function ToolCall({ part, answer }: { part: ToolPart; answer: (approved: boolean) => void }) {
  return (
    <div className="tool" data-testid={`tool-${part.toolCallId}`} data-state={part.state}>
      <div className="tool-head">
        🔧 <strong>{toolName(part)}</strong> <code>{JSON.stringify(part.input ?? {})}</code> <span className="state">{part.state}</span>
      </div>
      {part.state === 'approval-requested' ? (
        <div className="approval">
          <button type="button" data-testid="approve" onClick={() => answer(true)}>
            Approve
          </button>
          <button type="button" data-testid="deny" onClick={() => answer(false)}>
            Deny
          </button>
        </div>
      ) : null}
      {part.state === 'output-available' ? <Output output={part.output} /> : null}
      {part.state === 'output-error' ? <div className="output error">✗ {part.errorText}</div> : null}
      {part.state === 'output-denied' ? <div className="output denied">denied</div> : null}
    </div>
  );
}

function Output({ output }: { output: unknown }) {
  const items = contentItems(output);
  return items ? <ContentOutput items={items} /> : <div className="output">→ {JSON.stringify(output)}</div>;
}

function Message({ message, answer }: { message: UIMessage; answer: (approvalId: string, approved: boolean) => void }) {
  return (
    <li className={`message ${message.role}`} data-testid={`message-${message.role}`} data-id={message.id}>
      {message.parts.map((part, index) => {
        const key = `${message.id}-${index}`;
        if (part.type === 'text') {
          return (
            <p key={key} className="text" data-testid="text">
              {part.text}
            </p>
          );
        }
        if (part.type === 'reasoning') {
          return (
            <p key={key} className="reasoning" data-testid="reasoning">
              {part.text}
            </p>
          );
        }
        if (part.type === 'file') return <Attachment key={key} part={part} />;
        if (isToolPart(part)) {
          const approvalId = part.approval?.id;
          return <ToolCall key={key} part={part} answer={(approved) => approvalId && answer(approvalId, approved)} />;
        }
        return null;
      })}
    </li>
  );
}

function Chat({ id, initialMessages }: { id: string; initialMessages: UIMessage[] }) {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: initialMessages,
    // An answer that was streaming when the page (re)loaded goes on streaming here.
    resume: true,
    transport,
    // Once every approval of the answer is answered, useChat sends them (POST /api/chat) and streams the rest.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  const [files, setFiles] = useState<FileList>();
  const [refused, setRefused] = useState<string>();
  const picker = useRef<HTMLInputElement>(null);
  const busy = status === 'submitted' || status === 'streaming';
  const clearFiles = () => {
    setFiles(undefined);
    if (picker.current) picker.current.value = '';
  };
  const choose = (event: ChangeEvent<HTMLInputElement>) => {
    const chosen = event.target.files ?? undefined;
    const problem = chosen && chosen.length > 0 ? attachmentProblem(chosen) : undefined;
    setRefused(problem);
    if (problem || !chosen || chosen.length === 0) clearFiles();
    else setFiles(chosen);
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if ((input.trim() === '' && !files) || busy) return;
    // useChat reads the files into data: URL file parts; the list it got stays as it is when the picker is cleared.
    void sendMessage(input.trim() === '' && files ? { files } : { text: input, ...(files ? { files } : {}) });
    setInput('');
    clearFiles();
  };
  return (
    <main data-status={status}>
      <h1>actorloop × useChat</h1>
      <ul className="messages">
        {messages.map((message) => (
          <Message
            key={message.id}
            message={message}
            answer={(approvalId, approved) => void addToolApprovalResponse({ id: approvalId, approved })}
          />
        ))}
      </ul>
      {error ? (
        <p className="error" data-testid="error">
          {error.message}
        </p>
      ) : null}
      {refused ? (
        <p className="error" data-testid="refused">
          {refused}
        </p>
      ) : null}
      {files ? (
        <div className="pending" data-testid="pending">
          {/* One pick is from one folder: its names are unique. */}
          {[...files].map((file) => (
            <span key={file.name} className="file-chip">
              📎 {file.name} ({sizeOf(file.size)})
            </span>
          ))}
          <button type="button" data-testid="clear-files" onClick={clearFiles} aria-label="Remove the attachments">
            ✕
          </button>
        </div>
      ) : null}
      <form onSubmit={submit}>
        <label className="attach" title="Attach images (PNG, JPEG, GIF, WebP) or PDFs">
          📎 Attach
          <input ref={picker} type="file" data-testid="attach" accept={attachmentTypes.join(',')} multiple onChange={choose} />
        </label>
        <input
          data-testid="input"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder="Try: what is 2+3? · pay 80 · chart 3 1 4 · tell me a story · 📎 an image"
        />
        <button type="submit" data-testid="send" disabled={busy}>
          Send
        </button>
      </form>
      <p className="status" data-testid="status">
        {status}
      </p>
    </main>
  );
}

function App() {
  const [id] = useState(chatId);
  const [initial, setInitial] = useState<UIMessage[] | Error>();
  useEffect(() => {
    fetch(`/api/chat/${encodeURIComponent(id)}/messages`)
      .then(async (response) => {
        if (!response.ok) throw new Error(`loading the chat: ${response.status} ${await response.text()}`);
        setInitial((await response.json()) as UIMessage[]);
      })
      .catch((failure: unknown) => setInitial(failure instanceof Error ? failure : new Error(String(failure))));
  }, [id]);
  if (initial === undefined) return <p>Loading…</p>;
  if (initial instanceof Error) return <p className="error">{initial.message}</p>;
  return <Chat id={id} initialMessages={initial} />;
}

const style = document.createElement('style');
style.textContent = `
  body { font-family: system-ui, sans-serif; margin: 0; background: #f6f7f9; }
  main { max-width: 720px; margin: 0 auto; padding: 1rem; }
  h1 { font-size: 1.2rem; }
  .messages { list-style: none; padding: 0; }
  .message { margin: .5rem 0; padding: .6rem .8rem; border-radius: 8px; background: #fff; }
  .message.user { background: #e3edff; }
  .reasoning { color: #777; font-style: italic; }
  .tool { border: 1px solid #ddd; border-radius: 6px; padding: .4rem .6rem; margin: .3rem 0; font-size: .9rem; }
  .tool .state { color: #888; font-size: .8rem; }
  .approval button { margin: .3rem .3rem 0 0; }
  .error, .denied { color: #b00020; }
  form { display: flex; gap: .5rem; }
  form input { flex: 1; padding: .5rem; }
  .attach { position: relative; display: flex; align-items: center; padding: 0 .6rem; border: 1px solid #bbb; border-radius: 4px; background: #fff; cursor: pointer; font-size: .9rem; }
  .attach:focus-within { outline: 2px solid #4f7cff; }
  /* Out of sight but still focusable and clickable through its label. */
  .attach input { position: absolute; inset: 0; opacity: 0; width: 100%; cursor: pointer; }
  .pending { display: flex; gap: .4rem; align-items: center; margin-bottom: .4rem; }
  .pending button { border: none; background: none; cursor: pointer; color: #888; }
  .thumb { display: inline-block; max-width: 160px; max-height: 160px; margin: .2rem .4rem .2rem 0; border: 1px solid #ccd; border-radius: 6px; vertical-align: middle; background: #fff; }
  .file-chip { display: inline-block; margin: .2rem .4rem .2rem 0; padding: .2rem .5rem; border-radius: 999px; background: #fff; border: 1px solid #ccd; font-size: .85rem; }
  .status { color: #888; font-size: .8rem; }
`;
document.head.append(style);

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
