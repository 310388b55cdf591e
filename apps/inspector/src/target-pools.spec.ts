// The inspector keeps one pool per target and at most N pools: the least recently used one is closed
// first, a repeated target reuses its pool, and shutdown closes them all. Pools connect lazily, so no server is needed.
import { TargetPools } from './target-pools.js';

const target = (dbname: string, password = 'pw') => ({
  params: { host: '127.0.0.1', port: 5432, dbname, username: 'u', password },
});

describe('target pools', () => {
  it('reuses the pool of a target it has seen', async () => {
    const pools = new TargetPools(2);
    expect(pools.acquire(target('a'))).toBe(pools.acquire(target('a')));
    expect(pools.size).toBe(1);
    await pools.close();
  });

  it('a changed password is a different target', async () => {
    const pools = new TargetPools(4);
    expect(pools.acquire(target('a', 'old'))).not.toBe(pools.acquire(target('a', 'new')));
    await pools.close();
  });

  it('evicts the least recently used pool beyond the bound', async () => {
    const pools = new TargetPools(2);
    const a = pools.acquire(target('a'));
    pools.acquire(target('b'));
    pools.acquire(target('a'));
    pools.acquire(target('c'));
    expect(pools.size).toBe(2);
    expect(pools.acquire(target('a'))).toBe(a);
    // b was the least recently used: it comes back as a new pool.
    pools.acquire(target('b'));
    expect(pools.size).toBe(2);
    await pools.close();
    expect(pools.size).toBe(0);
  });

  it('never closes a pool an inspection is using; its last user closes it after an eviction', async () => {
    const pools = new TargetPools(1);
    let closedWhileInUse = true;
    let closedAfter = false;
    await pools.use(target('a'), null, async (a) => {
      const close = a.close.bind(a);
      let closed = false;
      a.close = async () => {
        closed = true;
        closedAfter = true;
        await close();
      };
      pools.acquire(target('b')); // the bound evicts a while it is in use
      expect(pools.size).toBe(1);
      closedWhileInUse = closed;
    });
    expect(closedWhileInUse).toBe(false);
    expect(closedAfter).toBe(true);
    await pools.close();
  });

  it('runs at most INSPECT_SERVER_SESSIONS inspections per server, keeps as many pools there, never holds up another server', async () => {
    const on = (host: string, dbname: string) => ({ params: { host, port: 5432, dbname, username: 'u' } });
    const pools = new TargetPools(32, undefined, null, {}, { sessions: 2 });
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    const inspect = (host: string, dbname: string) =>
      pools.use(on(host, dbname), null, async () => {
        started.push(`${host}/${dbname}`);
        await new Promise<void>((open) => gates.set(`${host}/${dbname}`, open));
      });
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    const runs = [inspect('a', 'one'), inspect('a', 'two'), inspect('a', 'three'), inspect('b', 'one')];
    await settle();
    // Server b is not held up by a's full slots; a's third inspection waits without a pool.
    expect(started).toEqual(['a/one', 'a/two', 'b/one']);
    expect(pools.poolsOn(on('a', 'x'))).toBe(2);
    gates.get('a/one')!();
    await settle();
    await settle();
    // The third database of a got in, after the idle pool of a/one was closed to make room.
    expect(started).toContain('a/three');
    expect(pools.poolsOn(on('a', 'x'))).toBe(2);
    for (const open of gates.values()) open();
    await Promise.all(runs);
    expect(pools.poolsOn(on('a', 'x'))).toBe(2);
    await pools.close();
    expect(pools.poolsOn(on('a', 'x'))).toBe(0);
  });
  it('at the defaults keeps a warm pool for each of 20 busy databases of one server (no reconnect per inspection)', async () => {
    // INSPECT_MAX_TARGET_POOLS' default: with a per-server bound of 8 every inspection of a 20-database server
    // closed another database's warm pool and opened a new session (activations 1.6x slower, docs/inspector.md).
    const pools = new TargetPools(32);
    const seen = new Map<string, unknown>();
    for (let round = 0; round < 2; round++)
      for (let d = 0; d < 20; d++)
        await pools.use(target(`db${d}`), null, async (connection) => {
          if (round === 0) seen.set(`db${d}`, connection);
          else expect(connection).toBe(seen.get(`db${d}`));
        });
    expect(pools.poolsOn(target('db0'))).toBe(20);
    await pools.close();
  });
});
