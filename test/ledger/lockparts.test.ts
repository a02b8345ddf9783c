/** The parts of the per-key lock that do not need a store: the in-process queue and the holder liveness check. */
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { holderAlive, processStartTime, selfIdentity } from '../../src/ledger/liveness';
import { KeyedMutex } from '../../src/ledger/mutex';

describe('KeyedMutex', () => {
  it('hands a key to waiters one at a time in arrival order, other keys independently', async () => {
    const m = new KeyedMutex();
    const order: number[] = [];
    const first = await m.acquire('a');
    const waiters = [1, 2, 3].map((n) => m.acquire('a').then((release) => (order.push(n), release)));
    const otherKey = await m.acquire('b');
    otherKey();
    first();
    for (const w of waiters) (await w)();
    expect(order).toEqual([1, 2, 3]);
    expect(m.isHeld('a')).toBe(false);
  });

  it('an aborted waiter leaves the queue without disturbing the ones behind it', async () => {
    const m = new KeyedMutex();
    const first = await m.acquire('a');
    const ac = new AbortController();
    const aborted = m.acquire('a', ac.signal);
    const behind = m.acquire('a');
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'cancelled' });
    first();
    (await behind)();
    expect(m.isHeld('a')).toBe(false);
  });

  it('a release called twice frees the key once', async () => {
    const m = new KeyedMutex();
    const r = await m.acquire('a');
    const next = m.acquire('a');
    r();
    r();
    const r2 = await next;
    expect(m.isHeld('a')).toBe(true);
    r2();
    expect(m.isHeld('a')).toBe(false);
  });
});

describe('lock holder liveness', () => {
  it('this process is alive', () => {
    expect(holderAlive(selfIdentity())).toBe(true);
  });

  it('a process that exited is not', async () => {
    const child = spawn(process.execPath, ['-e', '0']);
    const pid = child.pid!;
    const start = processStartTime(pid);
    await new Promise((r) => child.on('exit', r));
    expect(holderAlive({ host: hostname(), pid, start })).toBe(false);
  });

  it('a live pid with another start time is a reused pid, not the holder', () => {
    const me = selfIdentity();
    expect(me.start).not.toBeNull(); // Linux: /proc gives the start time
    expect(holderAlive({ ...me, start: String(Number(me.start) + 1) })).toBe(false);
  });

  it('a holder on another host cannot be checked and is presumed alive', () => {
    expect(holderAlive({ host: `${hostname()}-elsewhere`, pid: 999_999_999, start: null })).toBe(true);
  });
});
