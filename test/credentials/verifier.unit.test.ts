/**
 * Credentials with the real Biscuit library: a root the signer issues, blocks narrowed offline, and the verifier's
 * answer for each request, named by block and check when a check refuses.
 */
import { biscuitLib } from '../../src/credentials/biscuit-lib';
import { mintRoot, narrowCredential, newRootKey, publicKey } from '../../src/credentials/issue';
import { createCredentialVerifier, type Verification } from '../../src/credentials/verifier';
import type { CredentialRequest } from '../../src/credentials/vocabulary';

const lib = biscuitLib();
const root = newRootKey(lib);
const NOW = new Date('2026-12-06T00:00:00Z');
const made = mintRoot(lib, root.privateKey, { name: 'planner', keys: ['demo', 'pay'] });
const issued = [{ name: 'planner', revocation_id: made.revocationId, keys: ['demo', 'pay'] }];

function verifier(revoked: string[] = []) {
  return createCredentialVerifier(lib, { rootPublicKey: root.publicKey, issued, revoked });
}

const sign = (key: string, mode = 'send'): CredentialRequest => ({ method: 'tools/call', tool: 'sign', key, mode });
const check = (key: string): CredentialRequest => ({ method: 'tools/call', tool: 'check', key });

/** The refusal for `req` (null: allowed), the credential verified first. */
function judge(v: Verification, req: CredentialRequest, now = NOW) {
  if (!v.ok) throw new Error(`not verified: ${v.refusal.message}`);
  try {
    return v.credential.authorize(req, now);
  } finally {
    v.credential.dispose();
  }
}

describe('a root credential', () => {
  it('allows its own keys and refuses another, naming the root block', () => {
    expect(judge(verifier().verify(made.credential), sign('demo'))).toBeNull();
    expect(judge(verifier().verify(made.credential), sign('pay'))).toBeNull();
    const refusal = judge(verifier().verify(made.credential), sign('other'));
    expect(refusal).toMatchObject({ code: 'credential_refused', reason: 'check', block: 0 });
    expect(refusal?.check).toContain('["demo", "pay"].contains($k)');
  });

  it('names its root and its id when verified', () => {
    const v = verifier().verify(made.credential);
    expect(v.ok && v.credential.root.name).toBe('planner');
    expect(v.ok && v.credential.id).toBe(made.revocationId);
  });

  it('lets discovery and the lists through: they name no key', () => {
    expect(judge(verifier().verify(made.credential), { method: 'tools/list' })).toBeNull();
  });

  it('is refused when its root is not listed as issued', () => {
    const other = mintRoot(lib, root.privateKey, { name: 'stranger', keys: ['demo'] });
    const v = verifier().verify(other.credential);
    expect(v.ok).toBe(false);
    expect(!v.ok && v.refusal.reason).toBe('not_issued');
  });

  it('is refused when another root key signed it, without echoing the credential', () => {
    const foreign = mintRoot(lib, newRootKey(lib).privateKey, { name: 'planner', keys: ['demo'] });
    const v = verifier().verify(foreign.credential);
    expect(!v.ok && v.refusal.reason).toBe('signature');
    expect(JSON.stringify(v)).not.toContain(foreign.credential.slice(0, 40));
  });

  it('refuses a bearer value that is not a credential', () => {
    const v = verifier().verify('not a credential at all');
    expect(!v.ok && v.refusal.reason).toBe('malformed');
  });
});

describe('a narrowed credential', () => {
  const child = narrowCredential(lib, made.credential, root.publicKey, { keys: ['demo'], mode: 'sign_only' });

  it('signs only with its key and its mode, naming the block and check that refused', () => {
    expect(judge(verifier().verify(child.credential), sign('demo', 'sign_only'))).toBeNull();
    expect(judge(verifier().verify(child.credential), check('demo'))).toBeNull();
    const otherKey = judge(verifier().verify(child.credential), sign('pay', 'sign_only'));
    expect(otherKey).toMatchObject({ reason: 'check', block: 1 });
    expect(otherKey?.check).toContain('["demo"].contains($k)');
    const sent = judge(verifier().verify(child.credential), sign('demo', 'send'));
    expect(sent).toMatchObject({ reason: 'check', block: 1 });
    expect(sent?.check).toContain('mode("sign_only")');
  });

  it('cannot be widened by a block: a key its root did not name stays refused by the root', () => {
    const wider = narrowCredential(lib, child.credential, root.publicKey, { keys: ['demo', 'pay', 'other'] });
    expect(judge(verifier().verify(wider.credential), sign('pay', 'sign_only'))).toMatchObject({ block: 1 });
    expect(judge(verifier().verify(wider.credential), sign('other', 'sign_only'))).toMatchObject({ block: 0 });
    expect(judge(verifier().verify(wider.credential), sign('demo', 'send'))).toMatchObject({ block: 1 });
  });

  it('refuses a block that states a fact, or a check on a predicate the signer does not state', () => {
    for (const code of ['key("pay");', 'check if allowed_key("pay");', 'allowed($k) <- key($k);']) {
      const token = lib.Biscuit.fromBase64(child.credential, publicKey(lib, root.publicKey));
      const block = new lib.BlockBuilder();
      block.addCode(code);
      const v = verifier().verify(token.appendBlock(block).toBase64());
      expect(!v.ok && v.refusal).toMatchObject({ reason: 'block', block: 2 });
    }
  });

  it("expires on the signer's clock", () => {
    const brief = narrowCredential(lib, made.credential, root.publicKey, {
      expiresAt: new Date(NOW.getTime() + 3_600_000),
    });
    expect(judge(verifier().verify(brief.credential), sign('demo'), NOW)).toBeNull();
    const late = judge(verifier().verify(brief.credential), sign('demo'), new Date(NOW.getTime() + 3_601_000));
    expect(late).toMatchObject({ reason: 'check', block: 1 });
    expect(late?.check).toContain('time($t), $t <= 2026-12-06T01:00:00Z');
  });

  it('judges spend limits once the simulation states the spend, and not before', () => {
    const payee = 'So11111111111111111111111111111111111111112';
    const capped = narrowCredential(lib, made.credential, root.publicKey, {
      perTxLamports: 1_000_000,
      destinations: [payee],
    });
    expect(judge(verifier().verify(capped.credential), check('demo'))).toBeNull();
    const spend = (lamports_out: number, destinations: string[]) => ({
      ...check('demo'),
      spend: { lamports_out, destinations },
    });
    expect(judge(verifier().verify(capped.credential), spend(1_000_000, [payee]))).toBeNull();
    const over = judge(verifier().verify(capped.credential), spend(1_000_001, [payee]));
    expect(over).toMatchObject({ reason: 'check', block: 1, check: 'reject if lamports_out($n), $n > 1000000' });
    const elsewhere = judge(
      verifier().verify(capped.credential),
      spend(10, [payee, '11111111111111111111111111111112']),
    );
    expect(elsewhere).toMatchObject({ reason: 'check', block: 1 });
    expect(elsewhere?.check).toContain('reject if destination($d)');
  });

  it('is refused with everything derived from it once revoked, while its root still works', () => {
    const grandchild = narrowCredential(lib, child.credential, root.publicKey, { tools: ['sign'] });
    const v = verifier([child.revocationId]);
    expect(v.verify(child.credential)).toMatchObject({ ok: false, refusal: { reason: 'revoked', block: 1 } });
    expect(v.verify(grandchild.credential)).toMatchObject({ ok: false, refusal: { reason: 'revoked', block: 1 } });
    expect(judge(v.verify(made.credential), sign('demo'))).toBeNull();
  });

  it('is refused as a forgery when a block is removed from the middle of its chain', () => {
    const grandchild = narrowCredential(lib, child.credential, root.publicKey, { tools: ['check'] });
    const cut = withoutBlock(grandchild.credential, 0);
    expect(cut).not.toBe(grandchild.credential);
    const v = verifier().verify(cut);
    expect(v).toMatchObject({ ok: false, refusal: { reason: 'signature' } });
    // The same surgery with nothing removed gives back a credential that verifies: the cut, not the rewrite, refuses.
    expect(verifier().verify(withoutBlock(grandchild.credential, -1)).ok).toBe(true);
  });
});

/**
 * The credential with its `index`-th narrowing block taken out (-1: none), the rest of its wire form unchanged: the
 * top-level protobuf fields of a Biscuit (1 root key id, 2 authority, 3 each block, 4 proof) copied as they are.
 */
function withoutBlock(credential: string, index: number): string {
  const bytes = Buffer.from(credential, 'base64url');
  const kept: Buffer[] = [];
  let at = 0;
  let block = 0;
  const varint = () => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[at++];
      if (b === undefined) throw new Error('the credential ends inside a varint');
      value += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return value;
    }
  };
  while (at < bytes.length) {
    const start = at;
    const tag = varint();
    if ((tag & 7) === 2) {
      const length = varint();
      at += length;
    } else if ((tag & 7) === 0) varint();
    else throw new Error(`unexpected wire type ${tag & 7}`);
    const field = Math.floor(tag / 8);
    if (field === 3 && block++ === index) continue;
    kept.push(bytes.subarray(start, at));
  }
  return Buffer.concat(kept).toString('base64url');
}
