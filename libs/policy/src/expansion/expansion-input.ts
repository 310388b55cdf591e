// What expanding one policy's content reads: the content, where each entry came from (for error paths),
// the path root and the policy's name. Shared by the expansion and its reference checks.
import type { PolicyContent } from '../model/index.js';
import type { Locations } from '../validation/reader.js';

/** Everything one expansion run needs. */
export interface ExpansionInput {
  readonly content: PolicyContent;
  readonly locations: Locations;
  readonly root: string;
  readonly policyName: string;
}
