// What the candidate pass may do, as data. There is deliberately no step that requests execution or creates
// a Secret: a candidate never executes SQL and never creates a Secret, in any state (the spec's rule), and
// the command sink that carries these steps out refuses anything else (candidate-commands.ts).
import type { BuiltPlan, PlanStatusPatch } from '@rolepolicy/plan-lifecycle';
import type { Candidate, CandidateStatus } from './resources.js';

/** One step of a candidate pass, in the order it must run. */
export type CandidateStep =
  /** The SQL ConfigMap (if any), then the plan with its status. */
  | ({ readonly kind: 'createPlan' } & BuiltPlan)
  | { readonly kind: 'patchPlanStatus'; readonly patch: PlanStatusPatch }
  | { readonly kind: 'writeCandidateStatus'; readonly candidate: Candidate; readonly status: CandidateStatus }
  /** Retention: a terminal candidate goes, its plans and ConfigMaps follow by ownership (and explicitly). */
  | {
      readonly kind: 'deleteCandidate';
      readonly candidate: Candidate;
      readonly plans: readonly { readonly planName: string; readonly configMapName: string | null }[];
    };
