// Inspect requests carry their connection sealed (ADR 0024): the requester seals it to the inspectors'
// installation public key, the inspector opens it with the private key only it holds, in memory, per request.
import { decodePayload, encodePayload } from '../contract.js';
import {
  inspectSealedConnectionContract,
  type InspectConnection,
  type InspectQuery,
  type InspectRequestV1,
} from '../messages/inspect-request.js';
import { open, seal, type ReplyKeyPair } from './seal.js';

/**
 * The request to send for `query`: its connection sealed to `inspectorKey` (base64 SPKI DER of the
 * inspectors' X25519 public key). Throws InvalidReplyKeyError when the key is not one.
 */
export function sealInspectQuery(query: InspectQuery, inspectorKey: string): InspectRequestV1 {
  const { connection, ...rest } = query;
  const plaintext = encodePayload(inspectSealedConnectionContract, { v: 1, connection });
  return { ...rest, sealedConnection: seal(plaintext, inspectorKey, 'inspect-connection') };
}

/** The connection of a received request, or why it cannot be opened (never naming a value). */
export function openInspectConnection(
  request: InspectRequestV1,
  keys: ReplyKeyPair,
):
  | { readonly ok: true; readonly connection: InspectConnection }
  | { readonly ok: false; readonly message: string } {
  let plaintext: Uint8Array;
  try {
    plaintext = open(request.sealedConnection, keys, 'inspect-connection');
  } catch {
    return {
      ok: false,
      message: "the connection is not sealed to this inspector's key (INSPECT_SEAL_PRIVATE_KEY)",
    };
  }
  const decoded = decodePayload(inspectSealedConnectionContract, plaintext);
  if (!decoded.ok) return { ok: false, message: `invalid sealed connection: ${decoded.detail}` };
  return { ok: true, connection: decoded.value.connection };
}
