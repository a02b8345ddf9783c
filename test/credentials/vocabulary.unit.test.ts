/**
 * The pure parts: the facts a request states, the statements a block may hold, and the checks the signer's
 * commands write (one per limit, each refusing a wrong input with a message rather than writing bad Datalog).
 */
import { narrowingChecks, rootBlock } from '../../src/credentials/checks';
import { requestOf } from '../../src/credentials/request';
import { blockProblem, requestFacts } from '../../src/credentials/vocabulary';

describe('the facts of a request', () => {
  it('states method and time always, tool and key for a tool call, mode for a sign (send by default)', () => {
    const { request, key } = requestOf({
      method: 'tools/call',
      params: { name: 'sign', arguments: { key: 'demo', payload: {} } },
    });
    expect(request).toEqual({ method: 'tools/call', tool: 'sign', mode: 'send' });
    expect(key).toBe('demo');
    const now = new Date('2026-12-06T00:00:00Z');
    expect(requestFacts({ ...request, key: 'demo' }, now).map((f) => f.predicate)).toEqual([
      'method',
      'tool',
      'key',
      'mode',
      'time',
    ]);
  });

  it('leaves out what is not a string, so a check on it refuses', () => {
    const { request, key } = requestOf({
      method: 'tools/call',
      params: { name: 'sign', arguments: { key: 7, mode: ['sign_only'] } },
    });
    expect(request).toEqual({ method: 'tools/call', tool: 'sign' });
    expect(key).toBeUndefined();
    expect(requestOf('not json-rpc').request).toEqual({ method: '' });
  });
});

describe('what a block may hold', () => {
  it.each([
    ['check if key($k), ["demo"].contains($k);', false, null],
    ['check if time($t), $t <= 2026-12-06T01:00:00Z;\nreject if tool("halt");', false, null],
    ['root("planner");\ncheck if method($m), $m != "tools/call";', true, null],
    ['root("planner");', false, 'a statement that is not a check (root(""))'],
    ['key("pay");', false, 'a statement that is not a check (key(""))'],
    ['allowed($k) <- key($k);', false, 'a statement that is not a check (allowed($k) <- key($k))'],
    ['check if amount($a), $a < 5;', false, 'a predicate the signer does not state: amount'],
    ['check if tool($t), $t == "key(x); allowed(y)";', false, null],
  ])('%s (root block: %s) → %s', (source, authority, problem) => {
    expect(blockProblem(source, authority)).toBe(problem);
  });
});

describe('the checks the commands write', () => {
  it('one per limit, in a fixed order', () => {
    const checks = narrowingChecks({
      expiresAt: new Date('2026-12-06T01:00:00.250Z'),
      mode: 'sign_only',
      keys: ['demo', 'demo'],
      tools: ['sign'],
    });
    expect(checks).toEqual([
      'check if method($m), $m != "tools/call" or key($k), ["demo"].contains($k)',
      'check if method($m), $m != "tools/call" or tool($t), ["sign"].contains($t)',
      'check if method($m), $m != "tools/call" or tool($t), $t != "sign" or mode("sign_only")',
      'check if time($t), $t <= 2026-12-06T01:00:00Z',
    ]);
  });

  it.each([
    [{}, 'a narrowing block needs at least one limit'],
    [{ keys: [] }, 'keys: give at least one'],
    [{ keys: ['Demo"]'] }, 'is not a name'],
    [{ tools: ['transfer'] }, 'is not one of check, sign, key_show, halt'],
    [{ mode: 'send' }, 'is not one of sign_only, check'],
    [{ expiresAt: new Date(NaN) }, 'not a valid time'],
  ])('refuses %j', (n, message) => {
    expect(() => narrowingChecks(n as never)).toThrow(message);
  });

  it('writes a root block that names the root and its keys', () => {
    expect(rootBlock('planner', ['demo', 'pay'])).toBe(
      'root("planner");\ncheck if method($m), $m != "tools/call" or key($k), ["demo", "pay"].contains($k);\n',
    );
  });
});
