/**
 * What a host needs of the conversation machine, and all the host may import of it
 * (scripts/layers.ts): the machine's names, the stored snapshot's versions, migration and checks,
 * the marks that tell a conversation and a budgeted workflow from other logic, and the execution
 * gate. The chart, its rooms and the machine's children stay behind this file.
 */
export { type ExecutionGate, type GatedCall, setExecutionGate } from '../actors/execution-gate.js';
export { isConversationMachine } from './names/conversation-mark.js';
export type {
  ContextCompactedEvent,
  ConversationActor,
  ConversationContext,
  ConversationEmittedEvent,
  ConversationInput,
  ConversationMachine,
  ConversationSnapshot,
  ConversationStateValue,
  ConversationUserEvent,
  RunOutput,
  ToolCallEvent,
  ToolResultEvent,
} from './names/types.js';
export { migrateSnapshot } from './snapshots/migrate-snapshot.js';
export { currentSchemaVersion, firstSchemaVersion } from './snapshots/snapshot-migrations.js';
export { findSnapshotProblem } from './snapshots/snapshot-problem.js';
export { isBudgetedWorkflow } from './workflow/budget-mark.js';
