// PostgresPolicyCandidate as the planner reads and writes it (field names are the spec's), and the settings
// of the candidate lifecycle (expiry, budget, retention; configurable through the planner's environment).
import type * as Kube from '@rolepolicy/kube';
import { API_VERSION, type Condition, type StoredObjectMeta } from '@rolepolicy/plan-lifecycle';

/** `spec.origin.kind` of every plan made for a candidate. */
export const CANDIDATE_KIND = 'PostgresPolicyCandidate';

/** Label on candidate plans naming the candidate (lossy, never identity: the ownerReference uid is). */
export const CANDIDATE_LABEL = 'rolepolicy.io/candidate';

/** `PostgresPolicyCandidate.status.phase`. */
export type CandidatePhase = 'Pending' | 'Planned' | 'Promoted' | 'Superseded' | 'Stale';

/** `PostgresPolicyCandidate.spec`. */
export interface CandidateSpec {
  readonly content: Readonly<Record<string, unknown>>;
  readonly policyRef: { readonly name: string };
  readonly replaces?: string | null;
  readonly target?: { readonly connectionRef: { readonly key: string; readonly secretName: string } } | null;
}

/** `PostgresPolicyCandidate.status`. */
export interface CandidateStatus {
  readonly phase?: CandidatePhase;
  readonly conditions?: readonly Condition[];
  readonly contentDigest?: string | null;
  readonly observedGeneration?: number | null;
  readonly planRef?: { readonly name: string } | null;
}

/** A stored PostgresPolicyCandidate. */
export interface Candidate {
  readonly metadata: StoredObjectMeta;
  readonly spec: CandidateSpec;
  readonly status?: CandidateStatus;
}

/** A candidate as read from the cluster, or null without what a stored object always has. */
export function fromKubeCandidate(object: Kube.PostgresPolicyCandidate): Candidate | null {
  const { name, namespace, uid, generation } = object.metadata;
  if (!name || !namespace || !uid || generation === undefined || !object.spec) return null;
  return {
    metadata: { ...object.metadata, name, namespace, uid, generation },
    spec: object.spec,
    ...(object.status ? { status: object.status } : {}),
  };
}

/** The candidate's phase (Pending when unset). */
export function candidatePhase(candidate: Candidate): CandidatePhase {
  return candidate.status?.phase ?? 'Pending';
}

/** Promoted and Superseded are terminal: a terminal candidate is never planned again. */
export function isTerminalCandidate(candidate: Candidate): boolean {
  const phase = candidatePhase(candidate);
  return phase === 'Promoted' || phase === 'Superseded';
}

/** The object reference of a candidate (status writes go through the gateway with its uid). */
export function candidateRef(candidate: Candidate) {
  return {
    apiVersion: API_VERSION,
    kind: CANDIDATE_KIND,
    namespace: candidate.metadata.namespace,
    name: candidate.metadata.name,
    uid: candidate.metadata.uid,
  };
}

/** Tunables of the candidate lifecycle (docs/candidates.md, sections 2 and 3). */
export interface CandidateSettings {
  /** An open candidate older than this is superseded with reason Expired (label rolepolicy.io/keep exempts). */
  readonly ttlSeconds: number;
  /** Open candidates per policy that are planned; the newer ones wait with CandidateBudgetExceeded. */
  readonly budget: number;
  /** Terminal candidates kept per policy (oldest deleted first, with their plans by ownership). */
  readonly retainTerminal: number;
}

/** 14 days, 32 open candidates, 10 terminal ones kept. */
export const DEFAULT_CANDIDATE_SETTINGS: CandidateSettings = {
  ttlSeconds: 14 * 24 * 3600,
  budget: 32,
  retainTerminal: 10,
};
