// Legacy (unaggregated) discovery documents: kubectl and client libraries map kinds and short names
// to URLs from these, falling back to them when the server does not offer aggregated discovery.
import type { JsonObject, ResourceType } from './types.js';

const VERBS_NAMESPACED = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS_VERBS = ['get', 'patch', 'update'];

/** `/version`: a server version kubectl 1.32 accepts without skew warnings. */
export const VERSION_INFO: JsonObject = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-rolepolicy-emulator',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

/** `/api`: the core group's versions. */
export function coreVersions(serverAddress: string): JsonObject {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupVersions(types: readonly ResourceType[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const t of types) {
    if (t.group === '') continue;
    const versions = groups.get(t.group) ?? [];
    if (!versions.includes(t.version)) versions.push(t.version);
    groups.set(t.group, versions);
  }
  return groups;
}

function groupDoc(group: string, versions: readonly string[]): JsonObject {
  const list = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { name: group, versions: list, preferredVersion: list[0] };
}

/** `/apis`: every non-core group. */
export function groupList(types: readonly ResourceType[]): JsonObject {
  const groups = [...groupVersions(types)].sort(([a], [b]) => a.localeCompare(b));
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups.map(([g, v]) => groupDoc(g, v)) };
}

/** `/apis/<group>`, or undefined when the group is not served. */
export function group(types: readonly ResourceType[], name: string): JsonObject | undefined {
  const versions = groupVersions(types).get(name);
  return versions ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(name, versions) } : undefined;
}

/** `/api/v1` or `/apis/<group>/<version>`: the resources served there, with their subresources. */
export function resourceList(
  types: readonly ResourceType[],
  groupName: string,
  version: string,
): JsonObject | undefined {
  const served = types.filter((t) => t.group === groupName && t.version === version);
  if (served.length === 0) return undefined;
  const resources: JsonObject[] = [];
  for (const t of served) {
    resources.push({
      name: t.plural,
      singularName: t.singular,
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: t.verbs ?? VERBS_NAMESPACED,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
      ...(t.categories.length ? { categories: t.categories } : {}),
    });
    if (t.statusSubresource) {
      resources.push({
        name: `${t.plural}/status`,
        singularName: '',
        namespaced: t.namespaced,
        kind: t.kind,
        verbs: STATUS_VERBS,
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupName === '' ? version : `${groupName}/${version}`,
    resources,
  };
}
