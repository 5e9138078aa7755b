/**
 * The chat page: the AI SDK's `useChat` talking to actorloop's chat routes, unchanged. The chat id
 * is in the address (`?chat=…`), so a reload comes back to the same conversation: the page loads
 * its messages, and `resume: true` picks up an answer still streaming.
 */
import { type UIMessage, useChat } from '@ai-sdk/react';
import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { type FormEvent, StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';

type Part = UIMessage['parts'][number];
type ToolPart = Extract<Part, { toolCallId: string }>;

const isToolPart = (part: Part): part is ToolPart => part.type.startsWith('tool-') || part.type === 'dynamic-tool';
const toolName = (part: ToolPart) => ('toolName' in part ? String(part.toolName) : part.type.slice('tool-'.length));

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
      {part.state === 'output-available' ? <div className="output">→ {JSON.stringify(part.output)}</div> : null}
      {part.state === 'output-error' ? <div className="output error">✗ {part.errorText}</div> : null}
      {part.state === 'output-denied' ? <div className="output denied">denied</div> : null}
    </div>
  );
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
    // Once every approval of the answer is answered, useChat sends them (POST /api/chat) and streams the rest.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (input.trim() === '' || busy) return;
    void sendMessage({ text: input });
    setInput('');
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
      <form onSubmit={submit}>
        <input
          data-testid="input"
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder="Try: what is 2+3? · pay 80 · tell me a story"
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
