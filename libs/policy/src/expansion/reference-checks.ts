// Checks on role references that PostgreSQL would refuse at apply time: retired roles used as members,
// owners or reassign targets (they are about to be dropped), and circular memberships.

import { compareCodePoints } from '../canonical-order.js';
import { type ErrorSink, keyPath, report } from '../validation/errors.js';
import { MESSAGES } from '../validation/messages.js';
import type { ExpansionInput } from './expansion-input.js';

/** A retired role may not be a member, an owner, or another retirement's reassign target. */
export function checkRetiredReferences(sink: ErrorSink, input: ExpansionInput): void {
  const { content, locations, root } = input;
  const retired = new Set((content.retirements ?? []).map((r) => r.role));
  if (retired.size === 0) return;
  const at = (entry: object, field: string): string => keyPath(locations.get(entry) ?? root, field);
  if (content.default_owner != null && retired.has(content.default_owner)) {
    report(
      sink,
      keyPath(root, 'default_owner'),
      MESSAGES.retiredReferenced(content.default_owner, 'default_owner'),
    );
  }
  for (const binding of content.schemas ?? []) {
    if (binding.owner != null && retired.has(binding.owner)) {
      report(sink, at(binding, 'owner'), MESSAGES.retiredReferenced(binding.owner, 'a schema owner'));
    }
  }
  for (const block of content.default_privileges ?? []) {
    if (block.owner != null && retired.has(block.owner)) {
      report(sink, at(block, 'owner'), MESSAGES.retiredReferenced(block.owner, 'a default privilege owner'));
    }
  }
  for (const membership of content.memberships ?? []) {
    for (const member of membership.members) {
      if (retired.has(member.name))
        report(sink, at(member, 'name'), MESSAGES.retiredReferenced(member.name, 'a member'));
    }
  }
  for (const retirement of content.retirements ?? []) {
    const target = retirement.reassign_owned_to;
    if (target != null && target !== retirement.role && retired.has(target)) {
      report(
        sink,
        at(retirement, 'reassign_owned_to'),
        MESSAGES.retiredReferenced(target, 'a reassign target'),
      );
    }
  }
}

/** Declared memberships must not form a cycle (member -> granted role -> ... -> member). */
export function checkMembershipCycles(sink: ErrorSink, input: ExpansionInput): void {
  const { content, locations, root } = input;
  // member -> granted roles, with the path of each declaring member entry.
  const edges = new Map<string, { role: string; path: string }[]>();
  for (const membership of content.memberships ?? []) {
    for (const member of membership.members) {
      const list = edges.get(member.name) ?? [];
      list.push({ role: membership.role, path: keyPath(locations.get(member) ?? root, 'name') });
      edges.set(member.name, list);
    }
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'visiting');
    stack.push(node);
    for (const edge of edges.get(node) ?? []) {
      const next = state.get(edge.role);
      if (next === 'visiting') {
        const cycle = [...stack.slice(stack.indexOf(edge.role)), edge.role];
        report(sink, edge.path, MESSAGES.membershipCycle(cycle));
      } else if (next === undefined) visit(edge.role);
    }
    stack.pop();
    state.set(node, 'done');
  };
  // Visit in code-point order so the reported cycle does not depend on input order.
  for (const node of [...edges.keys()].sort(compareCodePoints)) if (!state.has(node)) visit(node);
}
