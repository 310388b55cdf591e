// End to end, the audit trail (issue 30, docs/audit.md): a scripted day through every service (policies
// applied, a plan denied and another approved by a person, ephemeral access granted and revoked, an access
// request denied) on an API that enforces what a cluster would (authentication, RBAC, deploy/base's
// admission policies with rolepolicy-decisions), people acting with their own credentials. The identities
// in the records are the ones the API authenticated; a write in someone else's name is refused and
// recorded nowhere. The audit records the services wrote alone reconstruct who was a member of which role
// after each step, checked against pg_auth_members read at that moment; no record holds a secret the day
// used, and each event is written once.
import { join } from 'node:path';
import { AuthenticationV1Api, KubernetesObjectApi, type KubeConfig } from '@kubernetes/client-node';
import {
  auditRecordsIn,
  dedupeAudit,
  membershipEdge,
  replayMemberships,
  type AuditRecord,
  type MembershipEdge,
} from '@rolepolicy/contracts';
import type { PostgresPolicyPlan } from '@rolepolicy/kube';
import { apiFailure } from '@rolepolicy/testing';
import { REPO_ROOT } from '../tools/deploy/render.js';
import { startStack, waitFor, type Stack, type TargetDatabase } from './stack.js';
import { EphemeralResources, type Identity } from './support/ephemeral.js';
import { PolicyResources } from './support/resources.js';

const PASSWORD = 'audit-Day-Password-7f3k9';
const REBUILD_MS = 2_000;
const NS = 'audit';
const admission = (file: string) => join(REPO_ROOT, 'deploy/admission', file);

/** The day's people: dana approves plans (dba), sam decides access requests (security), alice asks. */
const PEOPLE = {
  dana: { username: 'dana@example.com', groups: ['dba'] },
  sam: { username: 'sam@example.com', groups: ['security'] },
  alice: { username: 'alice@example.com', groups: ['dev'] },
} as const;
type Person = keyof typeof PEOPLE;

/** Who the API says a person is (a SelfSubjectReview, `kubectl auth whoami`): decidedBy must carry it. */
async function whoami(kc: KubeConfig): Promise<Identity> {
  const review = await kc
    .makeApiClient(AuthenticationV1Api)
    .createSelfSubjectReview({ body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  const { username, uid, groups } = review.status!.userInfo!;
  return { username: username!, ...(uid ? { uid } : {}), groups: groups ?? [] };
}

/** A RoleBinding of `clusterRole` to `group` in the test's namespace. */
async function bind(name: string, clusterRole: string, group: string): Promise<void> {
  await KubernetesObjectApi.makeApiClient(stack.kubeConfig).create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name, namespace: NS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: group }],
  } as never);
}

let stack: Stack;
let db: TargetDatabase;
let gatedDb: TargetDatabase;
let eph: EphemeralResources;
let server: string;
/** Each person's credentials, and who the API says they are. */
const as = {} as Record<Person, { kc: KubeConfig; is: Identity }>;
const role = (base: string) => stack.role(base);

beforeAll(async () => {
  stack = await startStack({
    namespace: NS,
    apiAccessControl: true,
    admissionFiles: [admission('decisions.yaml'), admission('roles.yaml')],
    env: { ACCESS_SCHEDULER_REBUILD_INTERVAL_MS: String(REBUILD_MS) },
  });
  await bind('plan-approvers', 'rolepolicy-approver', 'dba');
  await bind('access-approvers', 'rolepolicy-approver', 'security');
  await bind('requesters', 'rolepolicy-requester', 'dev');
  for (const [name, user] of Object.entries(PEOPLE) as [Person, (typeof PEOPLE)[Person]][]) {
    const kc = stack.emulator.kubeConfigFor(user, NS);
    as[name] = { kc, is: await whoami(kc) };
  }
  db = await stack.createDatabase('audit');
  gatedDb = await stack.createDatabase('gated');
  eph = new EphemeralResources(stack.kubeConfig, stack.namespace);
  const { hostname, port } = new URL(db.url);
  server = `${hostname}:${port || '5432'}`;
  await stack.core.createNamespacedSecret({
    namespace: stack.namespace,
    body: {
      metadata: { name: 'app-password' },
      type: 'Opaque',
      stringData: { [stack.role('app')]: PASSWORD },
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
}, 180_000);

/** The audit records written so far, in order (the stack's AUDIT_LOG_FILE). */
const records = async (): Promise<AuditRecord[]> => auditRecordsIn(await stack.auditLines());

/** The edges between this file's roles as the server has them now. */
async function liveEdges(): Promise<Set<MembershipEdge>> {
  const rows = await db.sql<{ role: string; member: string }>(
    `SELECT r.rolname AS role, u.rolname AS member FROM pg_auth_members m
       JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
      WHERE starts_with(r.rolname, $1) AND starts_with(u.rolname, $1)`,
    [stack.rolePrefix],
  );
  return new Set(rows.map((r) => membershipEdge(server, r.role, r.member)));
}

/** The edges between this file's roles the audit records written so far reconstruct. */
async function reconstructed(): Promise<Set<MembershipEdge>> {
  const timeline = replayMemberships(await records());
  const last = timeline.at(-1)?.edges ?? new Set<MembershipEdge>();
  return new Set([...last].filter((e) => e.split('\u0000')[1]!.startsWith(stack.rolePrefix)));
}

/** A snapshot of pg_auth_members at this step, and what the trail says at the same point. */
const snapshots: { step: string; takenAt: string; live: string[]; audit: string[] }[] = [];
async function snapshot(step: string, expected: readonly [string, string][]): Promise<void> {
  const takenAt = new Date().toISOString();
  const live = [...(await liveEdges())].sort();
  const audit = [...(await reconstructed())].sort();
  snapshots.push({ step, takenAt, live, audit });
  expect({ step, edges: live }).toEqual({
    step,
    edges: expected.map(([r, m]) => membershipEdge(server, role(r), role(m))).sort(),
  });
  expect({ step, edges: audit }).toEqual({ step, edges: live });
}

async function reconciledWith(name: string, probe: () => Promise<boolean>): Promise<void> {
  await waitFor(
    `${name} reconciled as expected`,
    async () => {
      const p = await stack.resources.policy(name);
      const ready = p?.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.reason === 'Reconciled' && p?.status?.observed_generation === p?.metadata.generation
        ? probe()
        : false;
    },
    { timeoutMs: 60_000, describe: () => stack.resources.policy(name).then((p) => p?.status) },
  );
}

const hasEdges = (want: readonly [string, string][]) => async () => {
  const live = await liveEdges();
  return want.every(([r, m]) => live.has(membershipEdge(server, role(r), role(m))));
};
const lacksEdges = (want: readonly [string, string][]) => async () => {
  const live = await liveEdges();
  return want.every(([r, m]) => !live.has(membershipEdge(server, role(r), role(m))));
};

function teamPolicy(memberships: readonly [string, string][]): Record<string, unknown> {
  return {
    connection: db.connection,
    mode: 'apply',
    approval: 'auto',
    roles: [
      { name: role('reader'), login: false },
      { name: role('writer'), login: false },
      { name: role('app'), login: true, password: { secretRef: { name: 'app-password' } } },
      { name: role('alice'), login: true },
    ],
    memberships: memberships.map(([r, m]) => ({ role: role(r), members: [{ name: role(m) }] })),
  };
}

function gatedPolicy(memberships: readonly [string, string][]): Record<string, unknown> {
  return {
    connection: gatedDb.connection,
    mode: 'apply',
    approval: 'manual',
    roles: [
      { name: role('auditor'), login: false },
      { name: role('bob'), login: true },
      { name: role('carol'), login: true },
    ],
    memberships: memberships.map(([r, m]) => ({ role: role(r), members: [{ name: role(m) }] })),
  };
}

/** The policy's current plan once it waits for a person, at the policy's current generation. */
async function pendingPlan(policy: string, after?: string): Promise<PostgresPolicyPlan> {
  return waitFor(
    `a Pending plan of ${policy}`,
    async () => {
      const ref = (await stack.resources.policy(policy))?.status?.current_plan_ref?.name;
      const plan = ref && ref !== after ? await stack.resources.plan(ref) : undefined;
      return plan?.status?.phase === 'Pending' ? plan : undefined;
    },
    { timeoutMs: 60_000, describe: () => stack.resources.policy(policy).then((p) => p?.status) },
  );
}

function accessPolicy(name: string, extra: Record<string, unknown>): Promise<void> {
  return eph.create('EphemeralAccessPolicy', name, {
    approval: { mode: 'Automatic' },
    justification: { required: false },
    maximumDuration: '1h',
    defaultDuration: '30m',
    postgresPolicyRef: { name: 'team' },
    ...extra,
  });
}

test('a scripted day: the audit records reconstruct pg_auth_members after every step', async () => {
  // 09:00 the team's policy is applied: app reads.
  await stack.resources.createPolicy('team', teamPolicy([['reader', 'app']]));
  await reconciledWith('team', hasEdges([['reader', 'app']]));
  await snapshot('team applied', [['reader', 'app']]);

  // 10:00 app moves from reading to writing.
  await stack.resources.patchPolicySpec('team', teamPolicy([['writer', 'app']]));
  await reconciledWith(
    'team',
    async () => (await hasEdges([['writer', 'app']])()) && lacksEdges([['reader', 'app']])(),
  );
  await snapshot('app moved to writer', [['writer', 'app']]);

  // 11:00 a gated policy on another database of the server: dana denies its first plan, nothing changes.
  const dana = new PolicyResources(as.dana.kc, NS);
  await stack.resources.createPolicy('gated', gatedPolicy([['auditor', 'bob']]));
  const denied = await pendingPlan('gated');
  await dana.deny(denied.metadata.name!, as.dana.is);
  await waitFor(
    'the denied plan Rejected',
    async () => (await stack.resources.plan(denied.metadata.name!))?.status?.phase === 'Rejected',
  );
  await snapshot('gated plan denied', [['writer', 'app']]);

  // 12:00 the gated policy is edited. dana's approval in sam's name is refused; in her own it is applied.
  await stack.resources.patchPolicySpec('gated', gatedPolicy([['auditor', 'carol']]));
  const approved = await pendingPlan('gated', denied.metadata.name!);
  const forged = await apiFailure(dana.approve(approved.metadata.name!, as.sam.is));
  expect({ code: forged.code, message: forged.body.message }).toMatchObject({
    code: 403,
    message: expect.stringContaining('decidedBy must be the authenticated caller: username dana@example.com'),
  });
  await dana.approve(approved.metadata.name!, as.dana.is);
  await reconciledWith('gated', hasEdges([['auditor', 'carol']]));
  await snapshot('gated plan approved', [
    ['writer', 'app'],
    ['auditor', 'carol'],
  ]);

  // 14:00 alice gets temporary write access (Automatic), then an admin revokes it early by deleting the
  // request. Asking in sam's name is refused: requestedBy is who created the request.
  await accessPolicy('write', { memberships: [{ role: role('writer'), inherit: true }] });
  const alice = new EphemeralResources(as.alice.kc, NS);
  const request = {
    accessPolicyRef: { name: 'write' },
    subject: { role: role('alice') },
    requestedBy: as.alice.is,
    justification: 'INC-42',
  };
  const asSam = await apiFailure(
    alice.create('EphemeralAccessRequest', 'sam-write', { ...request, requestedBy: as.sam.is }),
  );
  expect({ code: asSam.code, message: asSam.body.message }).toMatchObject({
    code: 403,
    message: expect.stringContaining(
      'spec.requestedBy must be the authenticated caller: username alice@example.com',
    ),
  });
  await alice.create('EphemeralAccessRequest', 'alice-write', request);
  await eph.phase('alice-write', 'Active', 60_000);
  await snapshot('alice granted write', [
    ['writer', 'app'],
    ['writer', 'alice'],
    ['auditor', 'carol'],
  ]);
  await eph.delete('EphemeralAccessRequest', 'alice-write');
  await waitFor('alice-write gone', async () => (await eph.request('alice-write')) === undefined, {
    timeoutMs: 60_000,
  });
  await snapshot('alice revoked', [
    ['writer', 'app'],
    ['auditor', 'carol'],
  ]);

  // 16:00 alice asks for reader access that needs approval; the security team denies it.
  await accessPolicy('read-approval', {
    approval: { mode: 'Required' },
    memberships: [{ role: role('reader'), inherit: true }],
  });
  await alice.create('EphemeralAccessRequest', 'alice-read', {
    ...request,
    accessPolicyRef: { name: 'read-approval' },
  });
  await eph.phase('alice-read', 'PendingApproval', 60_000);
  const sam = new EphemeralResources(as.sam.kc, NS);
  await sam.decide('alice-read', 'Denied', { message: 'not during the freeze' }, as.sam.is);
  await eph.phase('alice-read', 'Denied', 60_000);
  await snapshot('alice denied read', [
    ['writer', 'app'],
    ['auditor', 'carol'],
  ]);

  // The trail names every decision with the identities the API authenticated: username, uid and groups
  // (with system:authenticated, which no test wrote by hand).
  const all = await records();
  const recorded = (who: Identity) => ({ username: who.username, uid: who.uid ?? null, groups: who.groups });
  expect(as.dana.is.groups).toEqual(expect.arrayContaining(['dba', 'system:authenticated']));
  const ofObject = (name: string) => all.filter((r) => r.object.name === name);
  expect(ofObject(denied.metadata.name!).map((r) => r.event)).toEqual(['plan.denied']);
  expect(ofObject(denied.metadata.name!)[0]).toMatchObject({
    decidedBy: recorded(as.dana.is),
    policy: { name: 'gated' },
    automatic: false,
  });
  expect(ofObject(approved.metadata.name!).map((r) => r.event)).toEqual(['plan.approved', 'plan.applied']);
  expect(ofObject(approved.metadata.name!)[0]).toMatchObject({ decidedBy: recorded(as.dana.is) });
  expect(ofObject(approved.metadata.name!)[1]).toMatchObject({
    source: 'executor',
    digest: approved.status?.changeDigest,
    database: { name: gatedDb.database },
    changes: { membershipsGranted: [{ role: role('auditor'), member: role('carol') }] },
  });
  const teamPlans = all.filter((r) => r.event === 'plan.applied' && r.policy.name === 'team');
  expect(teamPlans).toHaveLength(2);
  expect(teamPlans[0]).toMatchObject({ changes: { passwordsSet: [role('app')] } });
  expect(
    all.filter((r) => r.event === 'plan.approved' && r.policy.name === 'team' && r.automatic),
  ).toHaveLength(2);

  const write = ofObject('alice-write');
  expect(write.map((r) => r.event)).toEqual(
    expect.arrayContaining([
      'access.approved',
      'membership.granted',
      'access.activated',
      'membership.revoked',
    ]),
  );
  expect(write.find((r) => r.event === 'membership.granted')).toMatchObject({
    operation: 'Activate',
    memberships: [{ role: role('writer'), member: role('alice') }],
    request: { name: 'alice-write' },
  });
  const read = ofObject('alice-read');
  expect(read.map((r) => r.event)).toEqual(['access.requested', 'access.denied']);
  expect(read[1]).toMatchObject({
    decidedBy: recorded(as.sam.is),
    requestedBy: recorded(as.alice.is),
  });
  const asked = [...write, ...read].filter((r) => r.event.startsWith('access.'));
  expect(asked.map((r) => ('requestedBy' in r ? r.requestedBy : undefined))).toEqual(
    asked.map(() => recorded(as.alice.is)),
  );
  // The refused writes left no trace: sam decided nothing but alice-read and asked for nothing, and the
  // request created in his name does not exist.
  const names = (r: AuditRecord) =>
    [
      'decidedBy' in r ? r.decidedBy?.username : undefined,
      'requestedBy' in r ? r.requestedBy.username : undefined,
    ].filter((n) => n !== undefined);
  expect(all.filter((r) => names(r).includes(as.sam.is.username)).map((r) => r.object.name)).toEqual([
    'alice-read',
  ]);
  expect(all.filter((r) => r.object.name === 'sam-write')).toEqual([]);

  // Written once per event: the services wrote no record twice (redelivery and leader changes would keep its id).
  const kept = new Set(dedupeAudit(all));
  const duplicates = all.filter((r) => !kept.has(r)).map((r) => `${r.event} ${r.object.name} ${r.source}`);
  expect(duplicates).toEqual([]);

  // No record holds a secret the day used: the password, the connection URLs, a verifier.
  const text = (await stack.auditLines()).join('\n');
  for (const secret of [PASSWORD, db.url, gatedDb.url, 'SCRAM-SHA-256$']) expect(text).not.toContain(secret);
  expect(snapshots.map((s) => s.step)).toHaveLength(7);

  // Who had which membership when: from the whole day's trail, the edges as of each snapshot's time.
  const timeline = replayMemberships(all);
  for (const { step, takenAt, live } of snapshots) {
    const asOf =
      timeline.filter((t) => Date.parse(t.after.at) <= Date.parse(takenAt)).at(-1)?.edges ??
      new Set<MembershipEdge>();
    const ours = [...asOf].filter((e) => e.split('\u0000')[1]!.startsWith(stack.rolePrefix)).sort();
    expect({ step, edges: ours }).toEqual({ step, edges: live });
  }
}, 420_000);
