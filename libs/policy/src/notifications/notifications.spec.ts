// Notifications, pure: the sink ConfigMap's validation, which occurrences objects show and their ids, the
// CloudEvents and Slack bodies, and the signature header across a key rotation.
import {
  cloudEvent,
  notificationBody,
  occurrenceId,
  parseSinkConfig,
  planApproveCommands,
  planOccurrences,
  requestOccurrences,
  retryWindow,
  signatureHeader,
  sinkSecretReferences,
  slackMessage,
  verifySignature,
  type PlanLike,
  type RequestLike,
} from '../index.js';

const NOW = '2026-11-27T12:00:00.000Z';

function plan(status: PlanLike['status'], extra: Partial<PlanLike['spec']> = {}): PlanLike {
  return {
    metadata: {
      name: 'orders-plan-1',
      namespace: 'team-a',
      uid: 'uid-plan-1',
      annotations: { 'rolepolicy.io/review-configmap': 'orders-plan-1-review' },
    },
    spec: { policyRef: { name: 'orders' }, ...extra },
    status,
  };
}

function request(status: RequestLike['status'], deletionTimestamp?: string): RequestLike {
  return {
    metadata: {
      name: 'alice-write',
      namespace: 'team-a',
      uid: 'uid-req-1',
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
    },
    spec: {
      accessPolicyRef: { name: 'writers' },
      subject: { role: 'alice' },
      requestedBy: { username: 'alice@example.com' },
      requestedDuration: '30m',
      justification: 'incident 42',
    },
    status,
  };
}

const resolved = {
  bundleHash: 'sha256:abc',
  grantedDuration: '1800s',
  memberships: [{ role: 'writer', inherit: true }],
};

describe('the notifications ConfigMap', () => {
  it('accepts a CloudEvents sink with defaults for keys and types', () => {
    const parsed = parseSinkConfig({ urlSecretName: 'hooks', signingSecretName: 'hooks' });
    expect(parsed.ok && parsed.sink).toMatchObject({
      format: 'cloudevents',
      url: { secretName: 'hooks', key: 'url' },
      signing: { secretName: 'hooks', keys: ['signing-key'] },
    });
    expect(parsed.ok && parsed.sink.types.size).toBe(11);
  });

  it('names the field and the rule of each problem, never the value', () => {
    const parsed = parseSinkConfig(
      { format: 'teams', urlSecretName: 'Bad_Name', types: 'plan.applied,hunter2', password: 'hunter2' },
      ['format', 'urlSecretName', 'types', 'password'],
    );
    expect(parsed.ok).toBe(false);
    const text = parsed.ok ? '' : parsed.problems.map((p) => `${p.field}: ${p.message}`).join('\n');
    expect(text).toContain('data.format: must be one of cloudevents, slack');
    expect(text).toContain('data.urlSecretName: must be a Secret name');
    expect(text).toContain('data.types: lists unknown types');
    expect(text).toContain('data.password: unknown setting');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('teams');
  });

  it('requires a signing Secret for CloudEvents, not for Slack', () => {
    const ce = parseSinkConfig({ urlSecretName: 'hooks' });
    expect(ce.ok ? [] : ce.problems.map((p) => p.field)).toEqual(['data.signingSecretName']);
    const slack = parseSinkConfig({ format: 'slack', urlSecretName: 'hooks' });
    expect(slack.ok && slack.sink.signing).toBeNull();
  });

  it('names the Secrets and keys it reads, for the gateway read rule', () => {
    const refs = sinkSecretReferences({
      urlSecretName: 'hook-url',
      signingSecretName: 'hook-keys',
      signingKeys: 'next, current',
    });
    expect([...refs].map(([n, k]) => [n, [...k]])).toEqual([
      ['hook-url', ['url']],
      ['hook-keys', ['next', 'current']],
    ]);
    expect(sinkSecretReferences({ format: 'teams', urlSecretName: 'x' }).size).toBe(0);
  });
});

describe('plan occurrences', () => {
  it('a pending manual plan carries counts, warnings, the review ConfigMap and the approve commands', () => {
    const [pending] = planOccurrences(
      plan({
        phase: 'Pending',
        computedAt: '2026-11-27T11:00:00Z',
        changeDigest: 'sha256:d',
        changeSummary: { total: 3, grants_added: 2, roles_created: 1, roles_dropped: 0 },
      }),
      {
        spec: { mode: 'apply' },
        status: { current_plan_ref: { name: 'orders-plan-1' }, plan_warnings: ['w1'] },
      },
      NOW,
    );
    expect(pending?.type).toBe('plan.pending-approval');
    expect(pending?.data).toMatchObject({
      policy: 'orders',
      changeSummary: { total: 3, grants_added: 2, roles_created: 1 },
      warnings: ['w1'],
      reviewConfigMap: 'orders-plan-1-review',
    });
    const approve = pending?.data['approve'] as { kubectl: string; plugin: string };
    expect(approve.plugin).toBe('kubectl rolepolicy approve orders-plan-1 -n team-a');
    expect(approve.kubectl).toMatch(
      /^kubectl -n team-a patch postgrespolicyplan orders-plan-1 --subresource=status --type=json -p '/,
    );
    expect(pending?.time).toBe('2026-11-27T11:00:00Z');
  });

  it('an approved and applied plan tells the decision (by whom) and the outcome, ids stable', () => {
    const status: PlanLike['status'] = {
      phase: 'Applied',
      appliedAt: '2026-11-27T11:05:00Z',
      decidedBy: { username: 'bob@example.com', groups: ['dba'] },
      conditions: [
        {
          type: 'Approved',
          status: 'True',
          reason: 'ApprovedByUser',
          last_transition_time: '2026-11-27T11:04:00Z',
        },
      ],
    };
    const first = planOccurrences(plan(status), undefined, NOW);
    const later = planOccurrences(plan(status), undefined, '2026-11-28T00:00:00Z');
    expect(first.map((o) => o.type)).toEqual(['plan.decision-recorded', 'plan.applied']);
    expect(first[0]?.data['decidedBy']).toEqual({ username: 'bob@example.com', groups: ['dba'] });
    expect(later.map((o) => o.id)).toEqual(first.map((o) => o.id));
    expect(new Set(first.map((o) => o.id)).size).toBe(2);
  });

  it('the approve command sets the planner Approved=False entry in place, guarded by a test, with decidedBy', () => {
    const { kubectl } = planApproveCommands('team-a', 'p1', [
      { type: 'Ready', status: 'True' },
      { type: 'Approved', status: 'False', reason: 'AwaitingApproval' },
    ]);
    const patch = JSON.parse(/-p '(.*)'$/.exec(kubectl)![1]!) as object[];
    expect(patch).toEqual([
      { op: 'test', path: '/status/conditions/1/type', value: 'Approved' },
      { op: 'test', path: '/status/conditions/1/status', value: 'False' },
      {
        op: 'replace',
        path: '/status/conditions/1',
        value: { type: 'Approved', status: 'True', reason: 'ApprovedByUser', message: 'reviewed' },
      },
      { op: 'add', path: '/status/decidedBy', value: { username: '<you>' } },
    ]);
    const appended = JSON.parse(/-p '(.*)'$/.exec(planApproveCommands('team-a', 'p1', []).kubectl)![1]!);
    expect(appended[0]).toMatchObject({ op: 'add', path: '/status/conditions/-' });
  });

  it("a candidate's plan names its candidate", () => {
    const [pending] = planOccurrences(
      plan(
        { phase: 'Pending', changeDigest: 'sha256:d', computedAt: 't' },
        { origin: { kind: 'PostgresPolicyCandidate', name: 'orders-next' } },
      ),
      undefined,
      NOW,
    );
    expect(pending?.data).toMatchObject({ candidate: 'orders-next', policy: 'orders' });
  });

  it('no pending occurrence before the planner wrote the plan status', () => {
    expect(planOccurrences(plan(undefined), undefined, NOW)).toEqual([]);
    expect(planOccurrences(plan({ phase: 'Pending' }), undefined, NOW)).toEqual([]);
  });

  it('no decision occurrence for the planner auto-approval, none for scoped plans', () => {
    const auto = plan({
      phase: 'Approved',
      decidedBy: { username: 'system:rolepolicy-planner(auto-approval)' },
      conditions: [{ type: 'Approved', status: 'True', reason: 'AutoApproved' }],
    });
    expect(planOccurrences(auto, undefined, NOW)).toEqual([]);
    const scoped = plan({ phase: 'Failed' }, { scope: { operation: 'Activate' } });
    expect(planOccurrences(scoped, undefined, NOW)).toEqual([]);
  });

  it('a failed plan carries its error; a second failure at another time is another occurrence', () => {
    const a = planOccurrences(plan({ phase: 'Failed', failedAt: 't1', lastError: 'boom' }), undefined, NOW);
    const b = planOccurrences(plan({ phase: 'Failed', failedAt: 't2', lastError: 'boom' }), undefined, NOW);
    expect(a[0]?.data['lastError']).toBe('boom');
    expect(a[0]?.id).not.toBe(b[0]?.id);
  });
});

describe('access request occurrences', () => {
  it('pending approval: requester, justification, bundle, duration, approval deadline, approve commands', () => {
    const [o] = requestOccurrences(
      request({
        phase: 'PendingApproval',
        approvalExpiresAt: '2026-11-27T13:00:00Z',
        resolvedAccess: resolved,
      }),
      NOW,
    );
    expect(o?.type).toBe('access.pending-approval');
    expect(o?.data).toMatchObject({
      requestedBy: { username: 'alice@example.com' },
      justification: 'incident 42',
      bundle: { bundleHash: 'sha256:abc', memberships: [{ role: 'writer', inherit: true }] },
      duration: '1800s',
      approvalExpiresAt: '2026-11-27T13:00:00Z',
    });
    expect((o?.data['approve'] as { kubectl: string }).kubectl).toContain('"bundleHash":"sha256:abc"');
  });

  it('decision, active, ended each once; revoked only from the last state of a deleted holder', () => {
    const decided = {
      decidedBy: { username: 'bob@example.com' },
      conditions: [{ type: 'Approved', status: 'True', lastTransitionTime: 't1' }],
      activatedAt: 't2',
      expiresAt: 't3',
      resolvedAccess: resolved,
    };
    const active = requestOccurrences(request({ ...decided, phase: 'Active' }), NOW);
    const ended = requestOccurrences(request({ ...decided, phase: 'Ended', endedAt: 't3' }), NOW);
    expect(active.map((o) => o.type)).toEqual(['access.decision-recorded', 'access.active']);
    expect(ended.map((o) => o.type)).toEqual(['access.decision-recorded', 'access.active', 'access.ended']);
    expect(ended.slice(0, 2).map((o) => o.id)).toEqual(active.map((o) => o.id));
    const gone = requestOccurrences(request({ ...decided, phase: 'Revoking' }, 't4'), NOW, true);
    expect(gone.map((o) => o.type)).toEqual(['access.revoked']);
    expect(requestOccurrences(request({ ...decided, phase: 'Ended' }, 't4'), NOW, true)).toEqual([]);
  });

  it('failed and approval-expired', () => {
    expect(requestOccurrences(request({ phase: 'Failed', lastError: 'x' }), NOW)[0]?.type).toBe(
      'access.failed',
    );
    expect(requestOccurrences(request({ phase: 'ApprovalExpired' }), NOW)[0]?.type).toBe(
      'access.approval-expired',
    );
  });
});

describe('payloads and signatures', () => {
  const [occurrence] = requestOccurrences(
    request({ phase: 'PendingApproval', approvalExpiresAt: 't', resolvedAccess: resolved }),
    NOW,
  );

  it('a structured CloudEvent 1.0 with the occurrence id and an io.rolepolicy type', () => {
    const event = cloudEvent(occurrence!);
    expect(event).toMatchObject({
      specversion: '1.0',
      id: occurrence!.id,
      type: 'io.rolepolicy.access.pending-approval',
      source: '/rolepolicy.io/namespaces/team-a',
      subject: 'ephemeralaccessrequests/alice-write',
      datacontenttype: 'application/json',
    });
    const body = notificationBody(occurrence!, 'cloudevents');
    expect(body.contentType).toMatch(/^application\/cloudevents\+json/);
    expect(JSON.parse(body.body)).toEqual(event);
  });

  it('a Slack message with text and blocks, the approve command in a code block', () => {
    const message = slackMessage(occurrence!) as { text: string; blocks: { text?: { text: string } }[] };
    expect(message.text).toBe(
      'Access request team-a/alice-write (alice@example.com as alice) waits for approval',
    );
    expect(message.blocks[0]?.text?.text).toContain('*Justification:* incident 42');
    expect(message.blocks[0]?.text?.text).toContain('```kubectl -n team-a patch ephemeralaccessrequest');
  });

  it('one signature per active key: a receiver with the old or the new key verifies, a wrong key does not', () => {
    const body = notificationBody(occurrence!, 'cloudevents').body;
    const [oldKey, newKey] = [Buffer.from('old-key'), Buffer.from('new-key')];
    const header = signatureHeader(body, [newKey, oldKey]);
    expect(header).toMatch(/^v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(body, header, oldKey)).toBe(true);
    expect(verifySignature(body, header, newKey)).toBe(true);
    expect(verifySignature(body, header, Buffer.from('other'))).toBe(false);
    expect(verifySignature(`${body} `, header, oldKey)).toBe(false);
    expect(header).not.toContain(Buffer.from('old-key').toString('hex'));
  });

  it('ids are deterministic per object, transition and time', () => {
    expect(occurrenceId('u', 'plan.applied', 't')).toBe(occurrenceId('u', 'plan.applied', 't'));
    expect(occurrenceId('u', 'plan.applied', 't')).not.toBe(occurrenceId('u', 'plan.failed', 't'));
    expect(occurrenceId('u', 'plan.applied', 't')).toMatch(/^rp-[0-9a-f]{32}$/);
  });

  it('the default retry schedule outlasts a receiver down for a minute', () => {
    const { delaysMs, totalMs } = retryWindow(10, 1_000);
    expect(delaysMs.slice(0, 3)).toEqual([1_000, 2_000, 4_000]);
    expect(totalMs).toBeGreaterThan(60_000);
  });
});
