/**
 * The SSE clients of bench/http.ts, in a process of their own so the server's CPU is measured
 * alone. Reads commands from stdin, one JSON line each — `{ url, token, ids }` — and for every id
 * at once: opens `GET /conversations/:id/events`, once connected sends `POST …/messages`, reads
 * the stream until the run is done; then prints `{ texts, errors }` as one JSON line.
 */
import { Agent, request } from 'node:http';
import { createInterface } from 'node:readline';

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

function conversation(url: string, token: string, id: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers = { authorization: `Bearer ${token}` };
    let text = '';
    let buffer = '';
    const events = request(`${url}/conversations/${id}/events`, { agent, headers }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`events: ${response.statusCode}`));
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        buffer += piece;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (!data) continue;
          const event = JSON.parse(data.slice(6)) as { type: string; delta?: string; status?: string };
          if (event.type === 'text.delta') text += event.delta;
          if (event.type === 'state' && event.status === 'done') {
            events.destroy();
            resolve(text);
          }
        }
      });
      // Connected: now the message, so nothing is emitted before the stream is there.
      const body = JSON.stringify({ content: 'go' });
      const send = request(
        `${url}/conversations/${id}/messages`,
        { method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (answer) => {
          answer.resume();
          if (answer.statusCode !== 202) reject(new Error(`messages: ${answer.statusCode}`));
        },
      );
      send.on('error', reject);
      send.end(body);
    });
    events.on('error', (error) => {
      if (!text.endsWith('.')) reject(error);
    });
    events.end();
  });
}

for await (const line of createInterface({ input: process.stdin })) {
  const { url, token, ids } = JSON.parse(line) as { url: string; token: string; ids: string[] };
  const results = await Promise.allSettled(ids.map((id) => conversation(url, token, id)));
  const texts = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const errors = results.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
  process.stdout.write(`${JSON.stringify({ texts, errors: errors.slice(0, 5), errorCount: errors.length })}\n`);
}
