// Reads `-f` input (a path or `-` for stdin): bare policy content, or whole Kubernetes manifests of which
// the PostgresPolicy's `spec` is used (its content fields only; connection etc. stay with the operator).

import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';

import { CONTENT_FIELDS, type PolicyContent } from '@rolepolicy/policy';
import { parseAllDocuments } from 'yaml';

import { CliError } from './io.js';

/** The API group of the service's resources. */
const GROUP = 'rolepolicy.io';

/** A policy as the CLI plans it. */
export interface LoadedPolicy {
  /** The raw text (for offline admission of manifests). */
  readonly text: string;
  /** True when the file holds Kubernetes resources (apiVersion/kind) rather than bare content. */
  readonly isManifest: boolean;
  /** Content fields only (unknown to validation otherwise). */
  readonly content: unknown;
  /** metadata.name of the PostgresPolicy, or `cli` for bare content (names generated Secrets). */
  readonly policyName: string;
  readonly allowSchemaOwnerTransfers: boolean;
}

async function readStream(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads the file (or stdin for `-`). */
export async function readPolicyText(file: string, stdin: Readable): Promise<string> {
  try {
    return file === '-' ? await readStream(stdin) : await readFile(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new CliError(`cannot read ${file === '-' ? 'stdin' : file}: ${reason}`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isRolepolicyResource(value: unknown): value is Record<string, unknown> {
  return (
    isObject(value) &&
    typeof value['apiVersion'] === 'string' &&
    value['apiVersion'].split('/')[0] === GROUP &&
    typeof value['kind'] === 'string'
  );
}

/** Picks the content fields of a PostgresPolicy spec (the same projection the content digest uses). */
export function contentOfSpec(spec: Record<string, unknown>): PolicyContent {
  const content: Record<string, unknown> = {};
  for (const field of CONTENT_FIELDS) if (field in spec) content[field] = spec[field];
  return content as PolicyContent;
}

/** Parses policy text: one bare content document, or manifests holding exactly one PostgresPolicy. */
export function parsePolicyText(text: string): LoadedPolicy {
  const documents = parseAllDocuments(text);
  const values: unknown[] = [];
  for (const document of Array.isArray(documents) ? documents : [documents]) {
    if (document.errors.length > 0) {
      throw new CliError(`invalid YAML: ${document.errors.map((error) => error.message).join('; ')}`, 2);
    }
    const value: unknown = document.toJS();
    if (value !== null && value !== undefined) values.push(value);
  }
  const resources = values.filter(isRolepolicyResource);
  if (resources.length === 0) {
    if (values.length !== 1) throw new CliError('expected one YAML document of policy content', 2);
    return {
      text,
      isManifest: false,
      content: values[0],
      policyName: 'cli',
      // Bare content may carry the spec flag too (validation accepts it), so adopt can be allowed.
      allowSchemaOwnerTransfers: isObject(values[0]) && values[0]['allow_schema_owner_transfers'] === true,
    };
  }
  const policies = resources.filter((resource) => resource['kind'] === 'PostgresPolicy');
  const policy = policies[0];
  const spec = policy && isObject(policy['spec']) ? policy['spec'] : {};
  const metadata = policy && isObject(policy['metadata']) ? policy['metadata'] : {};
  return {
    text,
    isManifest: true,
    content: policies.length === 1 ? contentOfSpec(spec) : null,
    policyName: typeof metadata['name'] === 'string' ? metadata['name'] : 'cli',
    allowSchemaOwnerTransfers: spec['allow_schema_owner_transfers'] === true,
  };
}

/** The single policy's content, or a CliError when the manifests hold none or several PostgresPolicies. */
export function requireContent(policy: LoadedPolicy): unknown {
  if (policy.content === null) {
    throw new CliError('the file must hold exactly one PostgresPolicy (or bare policy content) to plan');
  }
  return policy.content;
}

/**
 * Reads and parses the policy for plan, apply and inspect. Their exit 2 means "changes pending", so an
 * unparsable file must exit 1 there (only `validate` reports invalid input with 2).
 */
export async function loadPolicyToPlan(file: string, stdin: Readable): Promise<LoadedPolicy> {
  const text = await readPolicyText(file, stdin);
  try {
    return parsePolicyText(text);
  } catch (error) {
    if (error instanceof CliError) throw new CliError(error.message);
    throw error;
  }
}
