import { createRequire } from 'node:module';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** The part of the `ws` client used here. */
type WebSocketClient = {
  readyState: number;
  on(event: 'open' | 'close', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
  send(data: string): void;
  close(): void;
  terminate(): void;
};
type WebSocketConstructor = new (url: string, options: { createConnection: (options: object) => Socket }) => WebSocketClient;

const open = 1;

/**
 * `ws`, the WebSocket client `@statelyai/inspect` itself depends on, resolved from that package so
 * it is found under any package manager layout.
 */
function loadWebSocket(): WebSocketConstructor {
  const require = createRequire(import.meta.url);
  const fromInspect = createRequire(require.resolve('@statelyai/inspect'));
  return fromInspect('ws') as WebSocketConstructor;
}

/** Options of {@link WebSocketAdapter}. */
export type WebSocketAdapterOptions = {
  url: string;
  /** Events kept while not connected; the oldest go first. */
  maxBufferedEvents: number;
  /** First reconnection delay; it doubles up to 30 s. */
  reconnectDelayMs: number;
  onError: (error: Error) => void;
};

/**
 * Sends inspection events to a WebSocket server (the Stately inspector's bridge) without ever
 * holding the process: the connection and the reconnection timer are unref'd, so a program exits
 * when its own work is done, whether or not a server listens. Failures never throw: they go to
 * `onError`, and the adapter tries again later, keeping the latest events meanwhile.
 */
export class WebSocketAdapter {
  private socket: WebSocketClient | undefined;
  private readonly buffer: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private delay: number;
  private stopped = false;
  private readonly WebSocket: WebSocketConstructor;

  constructor(private readonly options: WebSocketAdapterOptions) {
    this.delay = options.reconnectDelayMs;
    this.WebSocket = loadWebSocket();
  }

  start(): void {
    if (this.stopped || this.socket) return;
    const secure = this.options.url.startsWith('wss:');
    let socket: WebSocketClient;
    try {
      socket = new this.WebSocket(this.options.url, {
        createConnection: (connectOptions) => {
          const raw = secure ? tlsConnect(connectOptions) : netConnect(connectOptions as unknown as Parameters<typeof netConnect>[0]);
          raw.unref();
          return raw;
        },
      });
    } catch (error) {
      this.options.onError(error instanceof Error ? error : new Error(String(error)));
      this.stopped = true;
      return;
    }
    this.socket = socket;
    socket.on('open', () => {
      this.delay = this.options.reconnectDelayMs;
      for (const message of this.buffer.splice(0)) socket.send(message);
    });
    socket.on('error', (error) => this.options.onError(error));
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      this.scheduleReconnect();
    });
  }

  send(message: string): void {
    if (this.stopped) return;
    if (this.socket?.readyState === open) {
      this.socket.send(message);
      return;
    }
    this.buffer.push(message);
    if (this.buffer.length > this.options.maxBufferedEvents) this.buffer.shift();
  }

  /** Closes the connection (what was sent is flushed first) and stops reconnecting. */
  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.buffer.length = 0;
    const socket = this.socket;
    this.socket = undefined;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      const fallback = setTimeout(() => {
        socket.terminate();
        resolve();
      }, 1000);
      fallback.unref();
      socket.on('close', () => {
        clearTimeout(fallback);
        resolve();
      });
      socket.close();
    });
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, this.delay);
    this.timer.unref();
    this.delay = Math.min(this.delay * 2, 30_000);
  }
}
