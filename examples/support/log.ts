/** How the examples print a run: the answer as it streams, each tool call and result, retries, the output. */
import type { ConversationActor, RunOutput } from 'actorloop';

/** Prints what a run does, as it happens. Call before `actor.start()` or right after. */
export function logRun(actor: ConversationActor): void {
  let streaming = false;
  const endLine = () => {
    if (streaming) process.stdout.write('\n');
    streaming = false;
  };
  actor.on('text.delta', (event) => {
    streaming = true;
    process.stdout.write(event.delta);
  });
  actor.on('tool.call', (event) => {
    endLine();
    console.log(`[tool.call] ${event.name}(${JSON.stringify(event.args)})`);
  });
  actor.on('tool.result', (event) => {
    endLine();
    console.log(`[tool.result] ${event.name} → ${event.result}${event.isError ? ' (error)' : ''}`);
  });
  actor.on('tool.approval.requested', (event) => {
    endLine();
    console.log(`[tool.approval.requested] ${event.name}(${JSON.stringify(event.args)})`);
  });
  actor.on('request.retry', (event) => {
    endLine();
    console.log(`[request.retry] attempt ${event.attempt} in ${event.delayMs} ms after: ${event.error.message}`);
  });
  actor.on('event.rejected', (event) => {
    endLine();
    console.log(`[event.rejected] ${event.message}`);
  });
  actor.subscribe((snapshot) => {
    if (snapshot.status !== 'active') endLine();
  });
}

/** Prints a run's output; sets a failing exit code unless the run ended `done`. */
export function printOutput(output: RunOutput): void {
  const reason = output.reason ? ` reason=${output.reason}` : '';
  console.log(`[output] status=${output.status}${reason} iterations=${output.iterations} tokens=${output.usage.totalTokens}`);
  console.log(`[answer] ${output.text}`);
  if (output.error) console.log(`[error] ${output.error.name}: ${output.error.message}`);
  if (output.status !== 'done') process.exitCode = 1;
}
