// Notifications (issue 26): sink configuration, occurrences derived from objects, payloads and signatures.
export * from './sink-config.js';
export * from './condition-like.js';
export * from './occurrences.js';
export * from './approve-commands.js';
export * from './payload.js';
