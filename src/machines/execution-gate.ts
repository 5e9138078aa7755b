// The gate belongs to the tool-execution actors; hosts (which sit above the machine) reach it here.
export { type ExecutionGate, type GatedCall, setExecutionGate } from '../actors/execution-gate.js';
