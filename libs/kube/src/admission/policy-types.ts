// Shapes of ValidatingAdmissionPolicy evaluation (admissionregistration.k8s.io/v1) that do not depend on
// any API server: the authenticated caller, the request's attributes, and the authorizer the CEL
// `authorizer` variable consults. The emulator fills them from HTTP requests; unit tests build them by hand.

/** The authenticated (or impersonated) caller, as `request.userInfo` and SubjectAccessReviews carry it. */
export type UserInfo = {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
};

/** What an authorizer is asked: a resource request (group/resource/…) or a non-resource path. */
export type AuthorizationAttributes = {
  readonly user: UserInfo;
  readonly verb: string;
  /** Set for resource requests (`''` is the core group). */
  readonly resource?: {
    readonly group: string;
    readonly version?: string;
    readonly resource: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  /** Set for non-resource requests, e.g. `/healthz`. */
  readonly path?: string;
};

/** An authorizer's answer; `reason` explains it (RBAC names the binding that allowed). */
export type AuthorizationDecision = {
  readonly decision: 'allow' | 'deny' | 'no-opinion';
  readonly reason: string;
  readonly error?: string;
};

/** The cluster's authorizer (RBAC in the emulator), as the CEL `authorizer` library calls it. */
export type Authorizer = (attributes: AuthorizationAttributes) => AuthorizationDecision;

/** group/version/kind as in `request.kind`. */
export type GroupVersionKind = { readonly group: string; readonly version: string; readonly kind: string };

/** group/version/resource as in `request.resource`. */
export type GroupVersionResource = {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
};

/** One admission request, as the API server hands it to admission plug-ins. */
export type AdmissionAttributes = {
  readonly operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  /** `''` for the main resource, e.g. `'status'`. */
  readonly subResource: string;
  readonly name: string;
  /** `''` for cluster-scoped objects. */
  readonly namespace: string;
  readonly userInfo: UserInfo;
  readonly dryRun: boolean;
  /** The object after the write (absent on DELETE). */
  readonly object: Record<string, unknown> | null;
  /** The object before the write (absent on CREATE). */
  readonly oldObject: Record<string, unknown> | null;
};

/** One `spec.validations` entry. */
export type PolicyValidation = {
  readonly expression: string;
  readonly message?: string;
  readonly messageExpression?: string;
  readonly reason?: string;
};

/** A label selector (`matchLabels` and `matchExpressions`). */
export type LabelSelector = {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly {
    readonly key: string;
    readonly operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    readonly values?: readonly string[];
  }[];
};

/** One `resourceRules`/`excludeResourceRules` entry. */
export type NamedRuleWithOperations = {
  readonly operations?: readonly string[];
  readonly apiGroups?: readonly string[];
  readonly apiVersions?: readonly string[];
  readonly resources?: readonly string[];
  readonly resourceNames?: readonly string[];
  readonly scope?: 'Cluster' | 'Namespaced' | '*';
};

/** `spec.matchConstraints` of a policy, or `spec.matchResources` of a binding. */
export type MatchResources = {
  readonly namespaceSelector?: LabelSelector;
  readonly objectSelector?: LabelSelector;
  readonly resourceRules?: readonly NamedRuleWithOperations[];
  readonly excludeResourceRules?: readonly NamedRuleWithOperations[];
  readonly matchPolicy?: 'Exact' | 'Equivalent';
};

/** A ValidatingAdmissionPolicy (only what evaluation reads). */
export type ValidatingAdmissionPolicy = {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly failurePolicy?: 'Fail' | 'Ignore';
    readonly paramKind?: { readonly apiVersion: string; readonly kind: string };
    readonly matchConstraints?: MatchResources;
    readonly matchConditions?: readonly { readonly name: string; readonly expression: string }[];
    readonly variables?: readonly { readonly name: string; readonly expression: string }[];
    readonly validations?: readonly PolicyValidation[];
    readonly auditAnnotations?: readonly { readonly key: string; readonly valueExpression: string }[];
  };
};

/** `spec.paramRef` of a binding. */
export type ParamRef = {
  readonly name?: string;
  readonly namespace?: string;
  readonly selector?: LabelSelector;
  readonly parameterNotFoundAction?: 'Allow' | 'Deny';
};

/** A ValidatingAdmissionPolicyBinding (only what evaluation reads). */
export type ValidatingAdmissionPolicyBinding = {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly policyName: string;
    readonly paramRef?: ParamRef;
    readonly matchResources?: MatchResources;
    readonly validationActions?: readonly ('Deny' | 'Warn' | 'Audit')[];
  };
};
