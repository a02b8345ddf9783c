/**
 * How a reload names a list's change (signer/policy-diff.ts): by the items added and removed, a few named and the
 * rest counted; a list only reordered, and one set or unset, said as such. reload.test.ts checks a real reload's
 * audit entry.
 */
import type { KeyConfig, NotifyEvent, NotifyHook, TokenConfig } from '../../src/config/types';
import { bearerTokenChanges, hookChanges, policyChanges } from '../../src/signer/policy-diff';

const key = (change: Partial<KeyConfig> = {}): KeyConfig =>
  ({
    name: 'play',
    pubkey: 'P',
    class: 'session',
    approval: 'auto',
    profile: null,
    transfer_to: ['A', 'B'],
    extra_programs: [],
    rate_limit_per_minute: 10,
    daily_lamport_cap: 1000,
    ...change,
  }) as KeyConfig;

describe('a list field in a reload change', () => {
  it('names the items added and removed', () => {
    expect(policyChanges([key()], [key({ transfer_to: ['B', 'C'] })])).toEqual([
      'keys.play.transfer_to added 1: C; removed 1: A',
    ]);
  });

  it('names at most four items a side and counts the rest', () => {
    const many = ['C', 'D', 'E', 'F', 'G', 'H', 'I'];
    expect(policyChanges([key()], [key({ transfer_to: ['A', 'B', ...many] })])).toEqual([
      'keys.play.transfer_to added 7: C, D, E, F and 3 more',
    ]);
    expect(policyChanges([key({ transfer_to: ['A', ...many] })], [key({ transfer_to: ['A'] })])).toEqual([
      'keys.play.transfer_to removed 7: C, D, E, F and 3 more',
    ]);
  });

  it('says a list only reordered, and one set or unset', () => {
    expect(policyChanges([key()], [key({ transfer_to: ['B', 'A'] })])).toEqual(['keys.play.transfer_to reordered']);
    expect(policyChanges([key()], [key({ writable_allow: ['W'] })])).toEqual(['keys.play.writable_allow none → W']);
    expect(policyChanges([key({ writable_allow: [] })], [key({ writable_allow: null })])).toEqual([
      'keys.play.writable_allow empty → none',
    ]);
  });

  it('names the keys a bearer token gained or lost and the events a hook is told of', () => {
    const token = (keys: string[]): TokenConfig => ({ name: 'agent', sha256: 'a'.repeat(64), keys });
    expect(bearerTokenChanges([token(['play'])], [token(['play', 'vault'])])).toEqual([
      'serve.tokens.agent.keys added 1: vault',
    ]);
    const hook = (events: NotifyEvent[]): NotifyHook => ({
      id: 'ops',
      url: 'https://hooks.example/s3cret',
      events,
      secret_file: null,
      format: 'slack',
    });
    expect(hookChanges([hook(['key.halted'])], [hook(['approval.requested'])])).toEqual([
      'notify.hooks.ops.events added 1: approval.requested; removed 1: key.halted',
    ]);
  });
});
