/**
 * Jest global setup and teardown: SoftHSM2 reads SOFTHSM2_CONF from the process's real environment when the
 * module is initialised, which a test file cannot set (jest gives each file a copy of process.env). So the run
 * gets one temporary token directory, set here before the workers start; each test makes its own token in it
 * (test/support/softhsm.ts) and never touches the machine's /var/lib/softhsm.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const OWNED = 'SOFTHSM_TEST_RUN_DIR';

export function setUp(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'signer-softhsm-'));
  fs.mkdirSync(path.join(dir, 'tokens'), { mode: 0o700 });
  const conf = path.join(dir, 'softhsm2.conf');
  fs.writeFileSync(conf, `directories.tokendir = ${dir}/tokens\nobjectstore.backend = file\nlog.level = ERROR\n`);
  process.env.SOFTHSM2_CONF = conf;
  process.env[OWNED] = dir;
}

export function tearDown(): void {
  const dir = process.env[OWNED];
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
