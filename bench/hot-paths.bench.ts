// `npm run bench -- hot-paths`: the per-message costs the fleet profiles showed in every service, today and
// as before the sixth session, interleaved in rounds; median microseconds -> bench/results/hot-paths.json.
// A sealed Secret read's crypto (requester's key pair, responder's seal, requester's open) and the reply-key
// import alone; the contract check of a k8s command (a union) and of a resource event; the read of one
// policy's holders among 1,000 requests (held-access-paths.ts).
import { createPublicKey } from 'node:crypto';

import {
  k8sCommandContract,
  open,
  recordEventCommand,
  replyKeyPair,
  resourceEventContract,
  seal,
  validatePayload,
  x25519PublicKey,
  type MessageContract,
} from '@rolepolicy/contracts';
import type { TSchema } from '@sinclair/typebox';

import { heldAccessVariants } from './held-access-paths.js';
import { legacyOpen, legacyReplyKeyPair, legacySchemaCheck, legacySeal } from './legacy-hot-paths.js';
import { writeResult } from './pg-bench-support.js';
import { compareCpuPerCall } from './timing.js';

const ROUNDS = 20;
const PER_ROUND = 300;
/** A holders read walks up to 1,000 requests (about a millisecond before the index): fewer calls a round. */
const HELD_ACCESS_PER_ROUND = 30;
// A Secret bundle's size in the fleet (a connection URL and a password, as JSON).
const PLAINTEXT = Buffer.from(
  JSON.stringify({ url: 'postgres://app@db:5432/app', password: 'x'.repeat(32) }),
);

const compare = (variants: Readonly<Record<string, () => unknown>>): Record<string, number> =>
  compareCpuPerCall(variants, ROUNDS, PER_ROUND);

const EVENT_TARGET = {
  apiVersion: 'rolepolicy.io/v1alpha1',
  kind: 'PostgresPolicy',
  namespace: 'fleet',
  name: 'db-1',
};

/** validatePayload today against the all-errors check it replaced, for one valid payload. */
function contractCheck(contract: MessageContract, payload: unknown): Record<string, number> {
  const legacy = legacySchemaCheck(contract.versions[1] as TSchema);
  if (!validatePayload(contract, payload).ok || !legacy(payload))
    throw new Error(`${contract.name}: invalid`);
  return compare({ today: () => validatePayload(contract, payload), legacy: () => legacy(payload) });
}

/** Prints and writes the figures. */
export function runHotPathsBench(): void {
  const recipient = replyKeyPair().publicKey;
  const read = compare({
    today: () => {
      const keys = replyKeyPair();
      const opened = open(seal(PLAINTEXT, keys.publicKey), keys);
      if (opened.length !== PLAINTEXT.length) throw new Error('the box did not open');
    },
    legacy: () => {
      const keys = legacyReplyKeyPair();
      const opened = legacyOpen(legacySeal(PLAINTEXT, keys.publicKey), keys.privateKey);
      if (opened.length !== PLAINTEXT.length) throw new Error('the box did not open');
    },
  });
  const importKey = compare({
    today: () => x25519PublicKey(recipient),
    legacy: () => createPublicKey({ key: Buffer.from(recipient, 'base64'), format: 'der', type: 'spki' }),
  });
  const recordEvent = contractCheck(
    k8sCommandContract,
    recordEventCommand(EVENT_TARGET, {
      type: 'Normal',
      reason: 'PlanApplied',
      message: 'applied 16 statements',
      action: 'Apply',
      component: 'rolepolicy-planner',
    }),
  );
  const resourceEvent = contractCheck(resourceEventContract, {
    v: 1,
    type: 'upsert',
    observedAt: '2026-11-27T12:00:00Z',
    object: {
      ...EVENT_TARGET,
      metadata: { name: 'db-1', namespace: 'fleet', uid: 'u', resourceVersion: '7' },
      spec: {},
    },
  });
  const heldAccess = compareCpuPerCall(heldAccessVariants(), ROUNDS, HELD_ACCESS_PER_ROUND);
  const report = {
    benchmark: 'hot-paths',
    description:
      "Median CPU microseconds per call (this process's user + system time). sealedReadUs: one sealed Secret read's crypto (replyKeyPair + seal + open, " +
      'as requester and responder do it); replyKeyImportUs: x25519PublicKey alone; legacy = SPKI DER through ' +
      'OpenSSL as before the sixth session, today = the fixed X25519 prefix with the key through JWK. ' +
      'recordEventCheckUs / resourceEventCheckUs: validatePayload of a valid record-event command (a union) and ' +
      'resource event; legacy = one all-errors ajv validator, today = a first-error one decides. ' +
      "heldAccessUs: one policy's holders among 1,000 requests of a namespace over 50 policies; today = the " +
      "cache's index by targetPolicyUid, reordered = every request with the target checked first, legacy = " +
      'every request with its plan named and looked up first',
    node: process.version,
    rounds: ROUNDS,
    callsPerRound: PER_ROUND,
    sealedReadUs: read,
    replyKeyImportUs: importKey,
    recordEventCheckUs: recordEvent,
    resourceEventCheckUs: resourceEvent,
    heldAccessUs: heldAccess,
  };
  console.table({
    sealedRead: read,
    replyKeyImport: importKey,
    recordEventCheck: recordEvent,
    resourceEventCheck: resourceEvent,
    heldAccess,
  });
  writeResult('hot-paths', report);
}
