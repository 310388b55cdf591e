// Resync markers without a server: chunking under the payload limit, assembling chunks, what gets dropped.
import type { ResyncMarkerV1 } from '../messages/resync-marker.js';
import { applyMarker, chunkListed, collectChunk, olderThanMarker, type Listed } from './resync.js';

const listed = (n: number): Listed[] =>
  Array.from({ length: n }, (_, i) => ({ uid: `uid-${i}`, resourceVersion: String(i + 1) }));

const chunk = (resyncId: string, index: number, chunks: number, objects: Listed[]): ResyncMarkerV1 => ({
  v: 1,
  kind: 'secret',
  clusterId: 'cluster-a',
  resyncId,
  chunk: index,
  chunks,
  objects,
  observedAt: '2026-11-25T12:00:00Z',
});

describe('chunkListed', () => {
  it('keeps every chunk of thousands of objects under the payload limit', () => {
    const objects = Array.from({ length: 20_000 }, (_, i) => ({
      uid: `${'u'.repeat(120)}${i}`.slice(-128),
      resourceVersion: `${i}`.padStart(64, '9'),
    }));
    const chunks = chunkListed(objects, 64 * 1024);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flat()).toEqual(objects);
    for (const c of chunks) {
      const bytes = Buffer.byteLength(JSON.stringify(chunk('r'.repeat(128), 99999, 99999, c)));
      expect(bytes).toBeLessThanOrEqual(64 * 1024);
    }
  });

  it('gives an empty kind one empty chunk, so its marker still drops everything', () => {
    expect(chunkListed([], 1_048_576)).toEqual([[]]);
  });
});

describe('collectChunk', () => {
  it('completes a marker once all its chunks arrived, in any order', () => {
    const [a, b] = [listed(2), [{ uid: 'uid-9', resourceVersion: '9' }]];
    const first = collectChunk(undefined, chunk('r1', 1, 2, b));
    expect(first.complete).toBeUndefined();
    const second = collectChunk(first.assembly, chunk('r1', 0, 2, a));
    expect([...second.complete!.listed.keys()].sort()).toEqual(['uid-0', 'uid-1', 'uid-9']);
    expect(second.complete!.clusterId).toBe('cluster-a');
  });

  it('never completes an older marker from a left-over chunk of it', () => {
    // Stream order after a smaller re-list: the old marker's chunk 2 survives on its subject, then r2's 0 and 1.
    const stale = collectChunk(undefined, chunk('r1', 2, 3, listed(1)));
    const r2a = collectChunk(stale.assembly, chunk('r2', 0, 2, listed(1)));
    expect(r2a.complete).toBeUndefined();
    const r2b = collectChunk(r2a.assembly, chunk('r2', 1, 2, []));
    expect(r2b.complete?.resyncId).toBe('r2');
  });
});

describe('applyMarker', () => {
  it('drops the objects the marker does not list, by uid, and remembers their uids', () => {
    const cached = new Map([
      ['ns/kept', { metadata: { uid: 'uid-0' } }],
      ['ns/gone', { metadata: { uid: 'uid-old' } }],
      ['ns/recreated', { metadata: { uid: 'uid-before' } }],
    ]);
    const listed = new Map([
      ['uid-0', '1'],
      ['uid-after', '7'],
    ]);
    const verdict = applyMarker(cached, { listed, namespace: undefined });
    expect([...verdict.dropped].sort()).toEqual(['ns/gone', 'ns/recreated']);
    expect([...verdict.droppedUids].sort()).toEqual(['uid-before', 'uid-old']);
  });

  it('leaves other namespaces alone when the marker covers one namespace', () => {
    const cached = new Map([
      ['a/x', { metadata: { namespace: 'a', uid: 'uid-a' } }],
      ['b/y', { metadata: { namespace: 'b', uid: 'uid-b' } }],
    ]);
    expect(applyMarker(cached, { listed: new Map(), namespace: 'a' }).dropped).toEqual(['a/x']);
  });
});

describe('olderThanMarker', () => {
  const marker = { listed: new Map([['uid-a', '5']]), listResourceVersion: '10', namespace: undefined };

  it('calls an unlisted object stale when its resourceVersion is not newer than the list', () => {
    expect(olderThanMarker(marker, { uid: 'uid-x', resourceVersion: '7' })).toBe(true);
    expect(olderThanMarker(marker, { uid: 'uid-x', resourceVersion: '10' })).toBe(true);
  });

  it('keeps listed objects, objects created after the list, and versions it cannot compare', () => {
    expect(olderThanMarker(marker, { uid: 'uid-a', resourceVersion: '3' })).toBe(false);
    expect(olderThanMarker(marker, { uid: 'uid-y', resourceVersion: '11' })).toBe(false);
    expect(olderThanMarker(marker, { uid: 'uid-y', resourceVersion: 'opaque' })).toBe(false);
    expect(
      olderThanMarker({ ...marker, listResourceVersion: undefined }, { uid: 'u', resourceVersion: '1' }),
    ).toBe(false);
  });

  it('says nothing about namespaces a namespace-scoped marker does not cover', () => {
    const scoped = { ...marker, namespace: 'a' };
    expect(olderThanMarker(scoped, { uid: 'u', resourceVersion: '1', namespace: 'b' })).toBe(false);
    expect(olderThanMarker(scoped, { uid: 'u', resourceVersion: '1', namespace: 'a' })).toBe(true);
  });
});
