// The engine's data model: vocabularies, content, desired and live state, managed scope, changes.
export * from './vocabulary.js';
export type * from './content.js';
export { CONTENT_FIELDS } from './content.js';
export type * from './state.js';
export type * from './snapshot.js';
export type * from './desired.js';
export type * from './scope.js';
export type * from './change.js';
