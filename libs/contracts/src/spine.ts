// The production set of contracts, so a service's transport knows every payload it may receive.
// Add a contract here when a new subject joins the spine.
import type { MessageContract } from './contract.js';
import { appliedSnapshotContract } from './messages/applied-snapshot.js';
import { deadLetterContract } from './messages/dead-letter.js';
import { decisionAdmissionContract } from './messages/decision-admission.js';
import { executeRequestContract } from './messages/execute-request.js';
import { executeResultContract } from './messages/execute-result.js';
import { inspectRequestContract } from './messages/inspect-request.js';
import { k8sCommandContract } from './messages/k8s-command.js';
import { resourceEventContract } from './messages/resource-event.js';
import { resyncMarkerContract } from './messages/resync-marker.js';
import {
  scopedExecuteRequestContract,
  scopedExecuteResultContract,
  scopedRevokeRequestContract,
} from './messages/scoped-execute.js';

/** Every contract of the spine. */
export const SPINE_CONTRACTS: readonly MessageContract[] = [
  // First: its pattern is narrower than the resource events' `rp.resource.>`, and the first match wins.
  resyncMarkerContract,
  decisionAdmissionContract,
  resourceEventContract,
  k8sCommandContract,
  inspectRequestContract,
  appliedSnapshotContract,
  executeRequestContract,
  executeResultContract,
  scopedExecuteRequestContract,
  scopedRevokeRequestContract,
  scopedExecuteResultContract,
  deadLetterContract,
];
