import type { Artifact, Part, TaskState } from '@a2a-js/sdk';
import type { A2AClientSdk } from './load-sdk.js';
import type { A2ATaskStateName } from './progress.js';

/**
 * The text of A2A parts, for the parent's model: text as it is, structured data as JSON, a file as a
 * line naming it (its bytes are not the model's to read here).
 */
export function partsText(parts: readonly Part[] | undefined): string {
  if (!parts) return '';
  const texts: string[] = [];
  for (const part of parts) {
    const content = part.content;
    if (!content) continue;
    switch (content.$case) {
      case 'text':
        texts.push(content.value);
        break;
      case 'data':
        texts.push(JSON.stringify(content.value ?? null));
        break;
      case 'url':
        texts.push(`[file ${part.filename || content.value}${part.mediaType ? ` (${part.mediaType})` : ''}: ${content.value}]`);
        break;
      case 'raw':
        texts.push(`[file ${part.filename || 'unnamed'}${part.mediaType ? ` (${part.mediaType})` : ''}, ${content.value.length} bytes]`);
        break;
    }
  }
  return texts.join('');
}

/** The artifacts of a task as one text, in the order they were made; blank ones left out. */
export function artifactsText(artifacts: Iterable<Pick<Artifact, 'parts'>>): string {
  return [...artifacts]
    .map((artifact) => partsText(artifact.parts))
    .filter((text) => text.trim() !== '')
    .join('\n\n');
}

/** A2A's names of the task states, keyed by the SDK's enum (read from the loaded module: its values are not ours to copy). */
export function taskStateNames(sdk: A2AClientSdk): (state: TaskState | undefined) => A2ATaskStateName {
  const { TaskState: states } = sdk.root;
  const names = new Map<TaskState, A2ATaskStateName>([
    [states.TASK_STATE_SUBMITTED, 'submitted'],
    [states.TASK_STATE_WORKING, 'working'],
    [states.TASK_STATE_COMPLETED, 'completed'],
    [states.TASK_STATE_FAILED, 'failed'],
    [states.TASK_STATE_CANCELED, 'canceled'],
    [states.TASK_STATE_INPUT_REQUIRED, 'input-required'],
    [states.TASK_STATE_REJECTED, 'rejected'],
    [states.TASK_STATE_AUTH_REQUIRED, 'auth-required'],
  ]);
  return (state) => (state === undefined ? 'unknown' : (names.get(state) ?? 'unknown'));
}
