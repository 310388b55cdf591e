// Printing a review artifact, apart from producing one (review.ts plans against a database): the cluster
// commands print the artifact the planner stored and must not load the catalog (kysely, pg) to do it.
import {
  formatReviewArtifactJson,
  formatReviewText,
  renderReviewHtml,
  type ReviewArtifact,
} from '@rolepolicy/review';

import type { CliIo } from '../io.js';

/** Output formats of review. */
export type ReviewFormat = 'json' | 'html' | 'text';

/** Prints an artifact in the chosen format (default text) to stdout. */
export function printArtifact(artifact: ReviewArtifact, format: ReviewFormat | undefined, io: CliIo): void {
  switch (format ?? 'text') {
    case 'json':
      io.stdout(formatReviewArtifactJson(artifact));
      break;
    case 'html':
      io.stdout(renderReviewHtml(artifact));
      break;
    case 'text':
      io.stdout(formatReviewText(artifact));
      break;
  }
}
