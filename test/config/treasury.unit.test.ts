/**
 * keys.NAME.treasury: the resolved treasury, and the refusals that name the setting at fault.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';

const KEY = '4Nd1mYwJ3d8q4t1nUQ8e3YqKkX2n1Fbq9xHk2wz3h5Qv';
const OWNER = 'GjJyeC1r2RgkuoCWMyPYkCWSGSGLcz266EaAkLA27AhL';
const ACCOUNT = 'So11111111111111111111111111111111111111112';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-treasury-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function load(treasury: unknown) {
  const file = path.join(dir, 'c.json');
  fs.writeFileSync(file, JSON.stringify({ keys: { play: { class: 'session', pubkey: KEY, treasury } } }));
  return loadConfig({ file, env: {} });
}

describe('keys.NAME.treasury', () => {
  it('resolves an owner and its accounts', () => {
    const key = load({ owner: OWNER, accounts: [ACCOUNT] }).keys[0];
    expect(key?.treasury).toEqual({ owner: OWNER, accounts: [ACCOUNT], refill_below_percent: 50 });
  });
  it('takes a refill threshold from 1 to 100 percent of the plan', () => {
    const at = (refill_below_percent: unknown) =>
      load({ owner: OWNER, accounts: [ACCOUNT], refill_below_percent }).keys[0]?.treasury?.refill_below_percent;
    expect(at(100)).toBe(100);
    expect(at(1)).toBe(1);
    expect(() => at(101)).toThrow(/keys\.play\.treasury\.refill_below_percent: at most 100/);
    expect(() => at(0)).toThrow(/refill_below_percent/);
  });
  it('is absent when no owner is set', () => {
    expect(load({}).keys[0]?.treasury).toBeUndefined();
  });
  it('refuses the key as its own treasury owner', () => {
    expect(() => load({ owner: KEY, accounts: [ACCOUNT] })).toThrow(/keys\.play\.treasury\.owner: must not be the key/);
  });
  it('refuses accounts without an owner, an owner without accounts, and an account listed twice', () => {
    expect(() => load({ accounts: [ACCOUNT] })).toThrow(/treasury\.owner: accounts are listed/);
    expect(() => load({ owner: OWNER })).toThrow(/treasury\.accounts: list at least one/);
    expect(() => load({ owner: OWNER, accounts: [ACCOUNT, ACCOUNT] })).toThrow(/listed twice/);
  });
});
