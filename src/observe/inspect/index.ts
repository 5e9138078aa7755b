/**
 * `actorloop/inspect`: see runs as they move — the Stately inspector bridge
 * (`@statelyai/inspect`, an optional peer) and a live statechart viewer that needs no network
 * (charts laid out by `elkjs`, an optional peer).
 *
 * @example
 * ```ts
 * import { createStatelyInspector, createViewerHandler, serveViewer, startLiveViewer } from 'actorloop/inspect';
 * ```
 * @packageDocumentation
 */
export { machineConfigOf, type MachineConfigJson } from '../chart/machine-config.js';
export { createStatelyInspector, type StatelyInspector, type StatelyInspectorOptions } from './stately-inspector.js';
export { redactContent, redacted, type InspectableJson } from './inspectable.js';
export { MissingDependencyError } from '../../errors/missing-dependency-error.js';
export { startLiveViewer, type LiveViewer, type LiveViewerOptions } from './live-viewer.js';
export type { WatchHostOptions, WatchOptions } from './viewer/viewer-sources.js';
export type { WatchableActor, WatchedSummary } from './viewer/watched-run.js';
export { serveViewer, type ServedViewer, type ServeViewerOptions } from './viewer/serve-viewer.js';
export { hostFeed, type HostConversationFeed, type HostConversations } from '../host-feed.js';
export type {
  ConversationActorLike,
  ConversationFeed,
  ConversationSource,
  ConversationStateUpdate,
  ConversationUpdate,
  ObservedStatus,
} from '../conversation-source.js';
export {
  createViewerHandler,
  type ViewerAuthorize,
  type ViewerHandler,
  type ViewerHandlerOptions,
  type ViewerSource,
} from './viewer/viewer-handler.js';
export type { ViewerHost } from './viewer/viewer-host.js';
export { ViewerRequestError } from './viewer/viewer-request-error.js';
