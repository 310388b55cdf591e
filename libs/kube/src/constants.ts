// API coordinates of the five rolepolicy.io kinds: group, version, kinds, plurals, short names.
// Everything that builds a URL, a watch path or a CRD reads these instead of spelling them again.

/** API group of every kind. */
export const GROUP = 'rolepolicy.io';
/** Served and stored version. */
export const VERSION = 'v1alpha1';
/** `apiVersion` field value. */
export const API_VERSION = `${GROUP}/${VERSION}`;

/** The five kinds, in the order the CRDs are listed. */
export const KINDS = [
  'PostgresPolicy',
  'PostgresPolicyCandidate',
  'PostgresPolicyPlan',
  'EphemeralAccessPolicy',
  'EphemeralAccessRequest',
] as const;
/** One of the five kinds. */
export type Kind = (typeof KINDS)[number];

/** Names of a kind as the API server serves them. */
export interface KindNames {
  readonly kind: Kind;
  readonly listKind: string;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
}

/** Plural, singular and short names per kind. */
export const KIND_NAMES: { readonly [K in Kind]: KindNames } = {
  PostgresPolicy: {
    kind: 'PostgresPolicy',
    listKind: 'PostgresPolicyList',
    plural: 'postgrespolicies',
    singular: 'postgrespolicy',
    shortNames: ['pgpolicy', 'pgp', 'pgr'],
  },
  PostgresPolicyCandidate: {
    kind: 'PostgresPolicyCandidate',
    listKind: 'PostgresPolicyCandidateList',
    plural: 'postgrespolicycandidates',
    singular: 'postgrespolicycandidate',
    shortNames: ['pgcandidate', 'pgpc', 'pgcand'],
  },
  PostgresPolicyPlan: {
    kind: 'PostgresPolicyPlan',
    listKind: 'PostgresPolicyPlanList',
    plural: 'postgrespolicyplans',
    singular: 'postgrespolicyplan',
    shortNames: ['pgplan', 'pgpp'],
  },
  EphemeralAccessPolicy: {
    kind: 'EphemeralAccessPolicy',
    listKind: 'EphemeralAccessPolicyList',
    plural: 'ephemeralaccesspolicies',
    singular: 'ephemeralaccesspolicy',
    shortNames: ['eap', 'pgeap'],
  },
  EphemeralAccessRequest: {
    kind: 'EphemeralAccessRequest',
    listKind: 'EphemeralAccessRequestList',
    plural: 'ephemeralaccessrequests',
    singular: 'ephemeralaccessrequest',
    shortNames: ['ear', 'pgear'],
  },
};

/** `kubectl get rolepolicy` lists every kind of the group. */
export const CATEGORIES = ['rolepolicy'] as const;

/** Plural resource name of a kind. */
export function pluralOf(kind: Kind): string {
  return KIND_NAMES[kind].plural;
}

/** Kind served under a plural resource name, or undefined for names outside the group. */
export function kindOfPlural(plural: string): Kind | undefined {
  return KINDS.find((k) => KIND_NAMES[k].plural === plural);
}

/** Narrows a string to one of the five kinds. */
export function isKind(value: string): value is Kind {
  return (KINDS as readonly string[]).includes(value);
}

/**
 * Annotation whose new value asks for a reconcile now; the planner records the handled value in
 * `status.lastHandledReconcileAt` (docs/planner.md).
 */
export const RECONCILE_REQUESTED_AT_ANNOTATION = 'rolepolicy.io/reconcile-requested-at';
