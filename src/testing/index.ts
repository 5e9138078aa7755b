/**
 * `actorloop/testing`: the project's own proofs in your hands — a scripted provider and trajectory
 * checks for unit tests, cassettes of real provider traffic recorded once and replayed byte-exact
 * in CI, the fault soak, and evals.
 *
 * @example
 * ```ts
 * import { expectTrajectory, scriptedProvider } from 'actorloop/testing';
 * ```
 * @packageDocumentation
 */
export {
  scriptedProvider,
  type ScriptedAnswer,
  type ScriptedError,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
} from './scripted-provider.js';
export { expectTrajectory, toolCallsOf } from './expect-trajectory.js';
export type {
  TrajectoryCall,
  TrajectoryMatcher,
  TrajectoryOptions,
  TrajectoryPredicate,
  TrajectorySource,
  TrajectoryStep,
} from './trajectory-types.js';
export { TrajectoryMismatchError } from './trajectory-mismatch-error.js';
export {
  matchers,
  type MatcherResult,
  type MediaMatcherFunctions,
  type MediaMatchers,
  type RunMatcherFunctions,
  type RunMatchers,
  type SentMediaExpectation,
} from './matchers.js';
export { mediaOf, type MediaOfOptions, type SentMedia, type SentMediaKind, type SentMediaSource } from './media-of.js';
export { evaluate, type EvalItemResult, type EvalReport, type EvaluateOptions } from './eval/evaluate.js';
export { checkDataset, type EvalItem, loadDataset, parseDataset } from './eval/eval-dataset.js';
export { type Score, type ScoreContext, type Scorer, textOf } from './eval/scorer.js';
export { scorers, type TextMatchOptions } from './eval/scorers.js';
export { llmJudge, type LlmJudgeOptions } from './eval/llm-judge.js';
export { DatasetError } from './dataset-error.js';
export { JudgeVerdictError } from './judge-verdict-error.js';
export { recordTraffic, type RecordTrafficOptions } from './record-traffic.js';
export { replayTraffic, type ReplayTrafficOptions } from './replay-traffic.js';
export type { TrafficFetch } from './traffic-fetch.js';
export type { TrafficScrubOptions } from './scrub-traffic.js';
export {
  type Cassette,
  type CassetteInteraction,
  type CassetteProvider,
  type CassetteRequest,
  type CassetteResponse,
  type CassetteSource,
  readCassette,
} from './cassette.js';
export { CassetteMismatchError, type CassetteDifference } from './cassette-mismatch-error.js';
export { CassetteMissingError } from './cassette-missing-error.js';
export { CassetteFormatError } from './cassette-format-error.js';
export {
  faultSoak,
  type FaultSoakHostOptions,
  type FaultSoakOptions,
  type FaultSoakReport,
  type SoakOutcome,
  type SoakRun,
} from './fault-soak.js';
export type { FaultKinds, FaultMoment, FaultPlan, ProviderFault, ToolFault } from './fault-plan.js';
export type { SoakCheck, SoakReproduction, SoakViolation } from './soak-violation.js';
