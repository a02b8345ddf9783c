/** The operator console's records over either store: passkeys, enrollment links, sessions, nonces, settings. */
import { all, get, run, type SqlDriver } from './sql/driver';
import { OPERATOR_SQL as OP } from './sql/operator-statements';
import {
  nonceRowValues,
  passkeyRowValues,
  rowToEnrollment,
  rowToNonce,
  rowToPasskey,
  rowToSession,
  rowToStanding,
  sessionRowValues,
  settingValue,
} from './sql/operator-rows';
import type { OperatorStore } from './operators';

export function operatorStore(db: SqlDriver): OperatorStore {
  return {
    async createEnrollment(rec) {
      await db.autocommit('cannot record the enrollment link', () =>
        run(OP.insertEnrollment, [rec.token_hash, rec.operator, rec.created_at, rec.expires_at]),
      );
    },
    async getEnrollment(tokenHash) {
      const row = await db.read('cannot read enrollment links', () => get(OP.getEnrollment, [tokenHash]));
      return row ? rowToEnrollment(row) : null;
    },
    async completeEnrollment(tokenHash, now, passkey) {
      return await db.write('cannot record the passkey', function* () {
        if (!(yield* get(OP.useEnrollment, [tokenHash, now]))) return false;
        yield* run(OP.insertPasskey, passkeyRowValues(passkey));
        yield* run(OP.reinstate, [passkey.operator, now]);
        return true;
      });
    },
    async listPasskeys(operator) {
      const rows = await db.read('cannot read passkeys', () =>
        operator === undefined ? all(OP.listPasskeys) : all(OP.listPasskeysOf, [operator]),
      );
      return rows.map(rowToPasskey);
    },
    async getPasskey(credentialId) {
      const row = await db.read('cannot read passkeys', () => get(OP.getPasskey, [credentialId]));
      return row ? rowToPasskey(row) : null;
    },
    async touchPasskey(credentialId, counter, ts) {
      await db.autocommit('cannot record the passkey use', () => run(OP.touchPasskey, [credentialId, counter, ts]));
    },
    async revokeOperator(operator, ts) {
      return await db.write('cannot revoke the operator', function* () {
        const passkeys = (yield* all(OP.deletePasskeysOf, [operator])).length;
        yield* run(OP.deleteOpenEnrollmentsOf, [operator]);
        const sessions = (yield* all(OP.endSessionsOf, [operator])).length;
        yield* run(OP.revoke, [operator, ts]);
        return { passkeys, sessions };
      });
    },
    async operatorStandings() {
      return (await db.read('cannot read revocations', () => all(OP.listStandings))).map(rowToStanding);
    },
    async openSession(rec, now) {
      await db.write('cannot record the login', function* () {
        yield* run(OP.purgeSessions, [now]);
        yield* run(OP.insertSession, sessionRowValues(rec));
      });
    },
    async getSession(idHash, now) {
      const row = await db.read('cannot read sessions', () => get(OP.getSession, [idHash, now]));
      return row ? rowToSession(row) : null;
    },
    async endSession(idHash) {
      await db.autocommit('cannot end the session', () => run(OP.endSession, [idHash]));
    },
    async endSessionsOf(operator) {
      return (await db.autocommit('cannot end sessions', () => all(OP.endSessionsOf, [operator]))).length;
    },
    async putNonce(rec, now) {
      await db.write('cannot record the nonce', function* () {
        yield* run(OP.purgeNonces, [now]);
        yield* run(OP.insertNonce, nonceRowValues(rec));
      });
    },
    async takeNonce(nonce, purpose, now) {
      const row = await db.autocommit('cannot take the nonce', () => get(OP.takeNonce, [nonce, purpose, now]));
      return row ? rowToNonce(row) : null;
    },
    async settingOrInit(name, proposed) {
      return await db.write('cannot read the console settings', function* () {
        yield* run(OP.initSetting, [name, proposed]);
        return settingValue(yield* get(OP.getSetting, [name])) ?? proposed;
      });
    },
  };
}
