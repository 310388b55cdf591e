// The HTML report without a browser: self-contained, escaped, deterministic, and the drawn graph marks what
// the plan adds and removes (ghosts for dropped roles and removed memberships).
import { buildReviewArtifact, layoutRoleGraph, renderReviewHtml } from '../index.js';
import { realisticReviewInput } from '../test-support/realistic.js';

describe('renderReviewHtml', () => {
  const artifact = buildReviewArtifact(realisticReviewInput(160010));

  it('is one self-contained document: no external URL, script or stylesheet, a CSP that forbids fetching', () => {
    const html = renderReviewHtml(artifact);
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    expect(html).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(html).not.toMatch(/<link\b/);
    expect(html).toContain("default-src 'none'");
    expect(renderReviewHtml(artifact)).toBe(html);
  });

  it('escapes every name it prints', () => {
    const hostile = buildReviewArtifact({
      ...realisticReviewInput(150019),
      targetLabel: '<img onerror=x>"&',
    });
    const html = renderReviewHtml(hostile);
    expect(html).toContain('&lt;img onerror=x&gt;&quot;&amp;');
    expect(html).not.toContain('<img onerror');
  });

  it('marks created roles and added memberships, and draws the dropped role and its removed edges as ghosts', () => {
    const graph = layoutRoleGraph(artifact);
    const node = (id: string) => graph.nodes.find((n) => n.id === id);
    expect(node('role:orders-editor')?.mark).toBe('added');
    expect(node('role:app')?.mark).toBe('changed');
    expect(node('external:legacy_app')?.mark ?? node('role:legacy_app')?.mark).toBe('removed');
    const edge = (source: string, target: string) =>
      graph.edges.find((e) => e.source === source && e.target === target && e.kind === 'membership');
    expect(edge('role:app', 'role:orders-editor')?.mark).toBe('added');
    expect(edge('external:legacy_app', 'role:orders-viewer')?.mark).toBe('removed');
    for (const n of graph.nodes) {
      expect(Number.isFinite(n.x) && Number.isFinite(n.y)).toBe(true);
    }
  });
});
