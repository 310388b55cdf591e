// Names of a plan's review ConfigMap (docs/review.md): the planner writes it, `rolepolicy review --plan`
// and kubectl users read it. The CRD has no field for it, so an annotation on the plan points at it.

/** Annotation on a PostgresPolicyPlan naming the ConfigMap (same namespace) holding its review artifact. */
export const REVIEW_CONFIGMAP_ANNOTATION = 'rolepolicy.io/review-configmap';
/** Label on a review ConfigMap: the artifact's schema version (tells it apart from a SQL ConfigMap). */
export const REVIEW_ARTIFACT_LABEL = 'rolepolicy.io/review-artifact';
/** Key of the artifact as plain JSON in `data`. */
export const REVIEW_JSON_KEY = 'review.json';
/** Key of the gzip artifact in `binaryData`. */
export const REVIEW_GZIP_KEY = 'review.json.gz';
