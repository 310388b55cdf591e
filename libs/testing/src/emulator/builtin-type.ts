// The shape of a built-in kind, with the defaults most share (no short names or categories, no
// generation, not a custom resource).
import type { PrinterColumn, ResourceType } from './types.js';

/** The `Age` column every kind prints. */
export const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** A built-in kind with defaults for the fields most kinds share. */
export function builtin(
  partial: Omit<ResourceType, 'listKind' | 'categories' | 'custom' | 'shortNames' | 'tracksGeneration'> &
    Partial<Pick<ResourceType, 'shortNames' | 'tracksGeneration'>>,
): ResourceType {
  return {
    shortNames: [],
    tracksGeneration: false,
    ...partial,
    listKind: `${partial.kind}List`,
    categories: [],
    custom: false,
  };
}
