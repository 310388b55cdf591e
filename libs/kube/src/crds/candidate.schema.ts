// PostgresPolicyCandidate: a one-shot, immutable proposal of policy content, planned in its parent's context.
// Its content carries no API-server defaults, so the digest covers exactly what the author wrote.
import { Type } from '@sinclair/typebox';
import { contentBlocks } from './content-schemas.js';
import { celRules, Doc, Int64, List, Nullable, Opt, Str, StringEnum } from './schema-builders.js';
import { Condition, NameRef, ReconciliationMode } from './value-types.js';

/** Message of the candidate immutability rule. */
export const CANDIDATE_SPEC_IMMUTABLE = 'candidate spec is immutable';

const content = contentBlocks(false);

/** PostgresPolicyCandidate.spec.content: the content blocks without defaults, plus reconciliation_mode. */
export const CandidateContent = Type.Object({
  ...content.fields,
  reconciliation_mode: Opt(ReconciliationMode),
});

/** PostgresPolicyCandidate.spec (immutable as a whole). */
export const PostgresPolicyCandidateSpec = Type.Object(
  {
    content: Doc(
      'Proposed policy content (no defaults applied). Immutable, like the whole spec.',
      CandidateContent,
    ),
    policyRef: Doc('Parent PostgresPolicy in the same namespace.', NameRef),
    replaces: Opt(
      Doc('Name of an earlier candidate this one supersedes.', Nullable(Str({ min: 1, max: 253 }))),
    ),
    target: Opt(
      Nullable(
        Type.Object({
          connectionRef: Type.Object({
            key: Str({ min: 1, max: 253 }),
            secretName: Str({ min: 1, max: 253 }),
          }),
        }),
      ),
    ),
  },
  celRules([{ rule: 'self == oldSelf', message: CANDIDATE_SPEC_IMMUTABLE }]),
);

/** PostgresPolicyCandidate.status. */
export const PostgresPolicyCandidateStatus = Type.Object({
  phase: Opt(
    StringEnum(['Pending', 'Planned', 'Promoted', 'Superseded', 'Stale'] as const, { default: 'Pending' }),
  ),
  conditions: Opt(List(Condition, { max: 16 })),
  contentDigest: Opt(
    Doc('Canonical digest of spec.content; promotion is verified against it.', Nullable(Str({ max: 128 }))),
  ),
  observedGeneration: Opt(Nullable(Int64())),
  planRef: Opt(Doc('The plan produced for this candidate.', Nullable(Type.Object({ name: Str() })))),
});
