/** The HTTP layer's pure rules, without a server: Host/Origin, the bearer rule, header redaction, log format. */
import {
  checkHostOrigin,
  compileAllowList,
  originAuthority,
  parseAuthority,
  repeatedGuardHeader,
} from '../../src/http/host-origin';
import { redactHeaders } from '../../src/http/redact-headers';
import { wantsPrettyLogs } from '../../src/http/logging';
import { TokenVerifier, tokenSha256 } from '../../src/http/bearer-tokens';

describe('Host and Origin', () => {
  const allow = compileAllowList(['127.0.0.1', 'localhost', 'signer.internal:8790', '[::1]']);

  test('authorities parse with and without port, IPv6 in brackets, case-insensitively', () => {
    expect(parseAuthority('LocalHost:8790')).toEqual({ host: 'localhost', port: '8790' });
    expect(parseAuthority('[::1]:80')).toEqual({ host: '::1', port: '80' });
    expect(parseAuthority('host:notaport')).toBeNull();
    expect(parseAuthority('')).toBeNull();
    expect(originAuthority('http://localhost:3000')).toEqual({ host: 'localhost', port: '3000' });
    expect(originAuthority('null')).toBeNull();
    expect(originAuthority('http://user@localhost')).toBeNull();
  });

  test('an allowed Host passes with no Origin or an allowed one; anything else is refused with a reason', () => {
    expect(checkHostOrigin(allow, 'localhost:8790', undefined, false)).toEqual({ ok: true });
    expect(checkHostOrigin(allow, '[::1]:8790', 'http://127.0.0.1:5173', false)).toEqual({ ok: true });
    expect(checkHostOrigin(allow, 'signer.internal:8790', undefined, false)).toEqual({ ok: true });
    expect(checkHostOrigin(allow, 'signer.internal:9999', undefined, false)).toEqual({
      ok: false,
      error: 'host "signer.internal:9999" is not allowed',
    });
    expect(checkHostOrigin(allow, undefined, undefined, false)).toEqual({ ok: false, error: 'missing Host header' });
    expect(checkHostOrigin(allow, 'localhost', 'http://evil.example', false)).toEqual({
      ok: false,
      error: 'origin "http://evil.example" is not allowed',
    });
  });

  test('a probe may name any Host, but never with an Origin unless both are allowed', () => {
    expect(checkHostOrigin(allow, '10.42.0.17:8790', undefined, true)).toEqual({ ok: true });
    expect(checkHostOrigin(allow, undefined, undefined, true)).toEqual({ ok: true });
    expect(checkHostOrigin(allow, '10.42.0.17:8790', 'http://localhost', true).ok).toBe(false);
    expect(checkHostOrigin(allow, 'localhost', 'http://localhost', true)).toEqual({ ok: true });
  });

  test('a repeated Host or Origin header is found in the raw headers, in any case', () => {
    expect(repeatedGuardHeader(['Host', 'a', 'host', 'b'])).toBe('Host');
    expect(repeatedGuardHeader(['Host', 'a', 'Origin', 'x', 'ORIGIN', 'y'])).toBe('Origin');
    expect(repeatedGuardHeader(['Host', 'a', 'Origin', 'x', 'X-Host', 'b'])).toBeNull();
  });
});

describe('the bearer rule', () => {
  const verifier = new TokenVerifier([
    { name: 'agent', sha256: tokenSha256('sfs_one'), keys: ['alpha'] },
    { name: 'other', sha256: tokenSha256('sfs_two'), keys: [] },
  ]);

  test('a configured token is found by its sha256 and named; nothing else is', () => {
    expect(verifier.verifyAuthorization('Bearer sfs_one')?.name).toBe('agent');
    expect(verifier.verifyAuthorization('Bearer sfs_two')?.name).toBe('other');
    expect(verifier.verifyAuthorization('Bearer sfs_three')).toBeNull();
    expect(verifier.verifyAuthorization('bearer sfs_one')).toBeNull();
    expect(verifier.verifyAuthorization('Bearer ')).toBeNull();
    expect(verifier.verifyAuthorization('Basic c2ZzX29uZQ==')).toBeNull();
    expect(verifier.verifyAuthorization(undefined)).toBeNull();
  });
});

describe('what the access log may show', () => {
  test('credentials and every Mcp-Param-* header are redacted; other headers are kept', () => {
    expect(
      redactHeaders({
        authorization: 'Bearer sfs_secret',
        'proxy-authorization': 'Basic x',
        cookie: 'a=b',
        'mcp-param-key': 'alpha',
        'mcp-param-memo': 'anything an agent wrote',
        'mcp-method': 'tools/call',
        'user-agent': 'claude-code',
      }),
    ).toEqual({
      authorization: '[redacted]',
      'proxy-authorization': '[redacted]',
      cookie: '[redacted]',
      'mcp-param-key': '[redacted]',
      'mcp-param-memo': '[redacted]',
      'mcp-method': 'tools/call',
      'user-agent': 'claude-code',
    });
  });

  test('pretty lines when SIGNER_LOG_PRETTY=1 or on a terminal; JSON otherwise or when SIGNER_LOG_PRETTY=0', () => {
    expect(wantsPrettyLogs({ SIGNER_LOG_PRETTY: '1' }, false)).toBe(true);
    expect(wantsPrettyLogs({}, true)).toBe(true);
    expect(wantsPrettyLogs({ SIGNER_LOG_PRETTY: '0' }, true)).toBe(false);
    expect(wantsPrettyLogs({}, false)).toBe(false);
  });
});
