/**
 * An encrypted key that cannot be opened stops the engine's start, naming the key and why: a missing age file, a
 * file that is not an age file, one holding another key than the config says, and a missing passphrase. (A wrong
 * passphrase is checked through the built service in encrypted-cli.test.ts.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { createEncryptedStore } from '../../src/keys/encrypted-store';
import { openLedger } from '../../src/ledger/open';
import { openEngine } from '../../src/signer';
import { makeWorld, type World } from '../support/world';

let w: World;
beforeAll(async () => {
  w = await makeWorld({ store: 'encrypted', keys: { alpha: {}, beta: {} } });
});
afterAll(() => w.close());

const ageFile = (name: string) => path.join(w.config.key_dir, `${name}.age`);

/** Opens a second engine on the world's config (and a ledger of its own, which a refused open closes). */
async function startRefusal(): Promise<string> {
  const ledger = await openLedger(w.config.ledger);
  const opened = await openEngine(w.config, { ledger }).then(
    async (engine) => {
      await engine.close();
      return 'started';
    },
    (e: unknown) => (e as Error).message,
  );
  return opened;
}

it.each([
  [
    'a missing age file',
    () => fs.rmSync(ageFile('beta')),
    /^key "beta" \(encrypted store\): no key file for "beta" at .*beta\.age$/,
  ],
  [
    'a file that is not an age file',
    () => fs.writeFileSync(ageFile('beta'), '[1,2,3]', { mode: 0o600 }),
    /^key "beta" \(encrypted store\): the encrypted key file of "beta" \(.*beta\.age\) is not an age file$/,
  ],
  [
    'an age file holding another key',
    () => fs.copyFileSync(ageFile('alpha'), ageFile('beta')),
    /^key "beta" \(encrypted store\): .*beta\.age holds pubkey \S+, but the config says \S+$/,
  ],
])('%s stops the start, naming the key and why', async (_what, breakIt, expected) => {
  const saved = fs.readFileSync(ageFile('beta'));
  breakIt();
  try {
    expect(await startRefusal()).toMatch(expected);
  } finally {
    fs.rmSync(ageFile('beta'), { force: true });
    fs.writeFileSync(ageFile('beta'), saved, { mode: 0o600 });
  }
  expect(await startRefusal()).toBe('started');
});

it('a passphrase source that is not set is named, and nothing else is shown of it', async () => {
  const store = createEncryptedStore({ ...w.config.key_stores!.encrypted, passphrase: { env: 'KEY_PASSPHRASE' } }, {});
  await expect(store.open(w.keys.alpha!)).rejects.toMatchObject({
    code: 'key_store',
    message: 'the passphrase of the encrypted keys is empty or not set (environment variable KEY_PASSPHRASE)',
  });
});
