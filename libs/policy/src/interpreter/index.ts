// The interpreter's public surface: apply a plan's changes to a snapshot, purely.
// The review artifact uses it for the simulated post-plan graph and per-phase deltas.
export { applyChanges } from './apply-changes.js';
