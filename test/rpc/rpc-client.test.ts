/**
 * JsonRpcClient's contract with a node: the exact parameters it sends, how each failure is classified
 * (transport / timeout / node / shape) and worded, and that URL secrets never reach a message.
 *
 * Node behaviour comes from the real localnet. Faults a node cannot be made to produce (silence, a wrong
 * shape, HTTP 503) come from small fakes named for what they fake.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { JsonRpcClient, RpcError } from '../../src/rpc/rpc-client';
import { JsonRpcTransport } from '../../src/rpc/json-rpc-transport';
import { DEFAULT_RETRY } from '../../src/rpc/resilient-rpc';
import { startLocalnet, type Localnet } from '../../src/localnet/server';
import { SignerError } from '../../src/util/errors';
import { newSigner, randomAddress, signedTransfer } from '../localnet/legacy-tx';

let localnet: Localnet;
beforeAll(async () => {
  localnet = await startLocalnet({ blockIntervalMs: 0 });
});
afterAll(() => localnet.close());

/** Fake: a node that answers every call with whatever `answer` returns, recording requests. */
async function scriptedNode(
  answer: (req: { method: string; params: unknown[]; id: unknown }) => { status?: number; body: string },
) {
  const requests: { method: string; params: unknown[]; url: string; authorization: string | undefined }[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(text) as { method: string; params: unknown[]; id: unknown };
      requests.push({
        method: call.method,
        params: call.params,
        url: req.url ?? '',
        authorization: req.headers.authorization,
      });
      const { status = 200, body } = answer(call);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

const ok = (id: unknown, result: unknown) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, result }) });

async function caught(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RpcError);
    return e as RpcError;
  }
  throw new Error('expected the call to fail');
}

test('sends the parameters a real cluster expects for every method', async () => {
  const addr = randomAddress();
  const sig = '5'.repeat(88);
  const results: Record<string, unknown> = {
    getGenesisHash: addr,
    getLatestBlockhash: { context: { slot: 1 }, value: { blockhash: addr, lastValidBlockHeight: 10 } },
    getBalance: { context: { slot: 1 }, value: 5 },
    getFeeForMessage: { context: { slot: 1 }, value: 5000 },
    simulateTransaction: { context: { slot: 1 }, value: { err: null, logs: [], unitsConsumed: 1, accounts: [null] } },
    sendTransaction: '1'.repeat(64),
    getSignatureStatuses: { context: { slot: 1 }, value: [null] },
    getBlockHeight: 9,
    getTransaction: null,
    getMultipleAccounts: { context: { slot: 1 }, value: [null] },
    getAccountInfo: { context: { slot: 1 }, value: null },
    getSignaturesForAddress: [],
  };
  const node = await scriptedNode((req) => ok(req.id, results[req.method]));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
  try {
    await client.getGenesisHash();
    await client.getLatestBlockhash();
    await client.getBalance(addr);
    await client.getFeeForMessage('AAAA');
    await client.simulateTransaction('BBBB', { sigVerify: false, replaceRecentBlockhash: true, accounts: [addr] });
    await client.sendTransaction('CCCC');
    await client.getSignatureStatuses([sig], { searchTransactionHistory: true });
    await client.getBlockHeight('finalized');
    await client.getTransaction(sig);
    await client.getMultipleAccounts([addr]);
    await client.getAccountInfo(addr);
    await client.getSignaturesForAddress(addr, { limit: 100 });
    await client.getSignaturesForAddress(addr, { limit: 5, before: sig });
    expect(node.requests.map(({ method, params }) => [method, params])).toEqual([
      ['getGenesisHash', []],
      ['getLatestBlockhash', [{ commitment: 'confirmed' }]],
      ['getBalance', [addr, { commitment: 'confirmed' }]],
      ['getFeeForMessage', ['AAAA', { commitment: 'confirmed' }]],
      [
        'simulateTransaction',
        [
          'BBBB',
          {
            encoding: 'base64',
            sigVerify: false,
            replaceRecentBlockhash: true,
            commitment: 'confirmed',
            accounts: { encoding: 'base64', addresses: [addr] },
          },
        ],
      ],
      ['sendTransaction', ['CCCC', { encoding: 'base64', skipPreflight: true, maxRetries: 0 }]],
      ['getSignatureStatuses', [[sig], { searchTransactionHistory: true }]],
      ['getBlockHeight', [{ commitment: 'finalized' }]],
      ['getTransaction', [sig, { encoding: 'json', commitment: 'confirmed', maxSupportedTransactionVersion: 0 }]],
      ['getMultipleAccounts', [[addr], { encoding: 'base64', commitment: 'confirmed' }]],
      ['getAccountInfo', [addr, { encoding: 'base64', commitment: 'confirmed' }]],
      ['getSignaturesForAddress', [addr, { commitment: 'confirmed', limit: 100 }]],
      ['getSignaturesForAddress', [addr, { commitment: 'confirmed', limit: 5, before: sig }]],
    ]);
  } finally {
    client.close();
    await node.close();
  }
});

test('the balances before a simulation are read pinned to its slot, and both answers carry their slot', async () => {
  const addr = randomAddress();
  const owner = randomAddress();
  const results: Record<string, unknown> = {
    simulateTransaction: {
      context: { slot: 77 },
      value: { err: null, logs: [], unitsConsumed: 1, accounts: [{ lamports: 4, owner, data: ['', 'base64'] }] },
    },
    getMultipleAccounts: { context: { slot: 78 }, value: [{ lamports: 9, owner, data: ['', 'base64'] }] },
  };
  const node = await scriptedNode((req) => ok(req.id, results[req.method]));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
  try {
    const sim = await client.simulateTransaction('BBBB', {
      sigVerify: true,
      replaceRecentBlockhash: false,
      accounts: [addr],
    });
    expect(sim.slot).toBe(77);
    const before = await client.getAccountsAtSlot([addr], sim.slot);
    expect(before).toEqual({ slot: 78, accounts: [{ lamports: 9, owner, data: new Uint8Array() }] });
    expect(node.requests[1]).toMatchObject({
      method: 'getMultipleAccounts',
      params: [[addr], { encoding: 'base64', commitment: 'confirmed', minContextSlot: 77 }],
    });
  } finally {
    client.close();
    await node.close();
  }
});

test('a client configured for finalized reads at finalized everywhere it names a commitment', async () => {
  const addr = randomAddress();
  const ctx = (value: unknown) => ({ context: { slot: 1 }, value });
  const results: Record<string, unknown> = {
    getLatestBlockhash: ctx({ blockhash: addr, lastValidBlockHeight: 10 }),
    getBalance: ctx(5),
    getFeeForMessage: ctx(5000),
    simulateTransaction: ctx({ err: null, logs: [], unitsConsumed: 1, accounts: [] }),
    getTransaction: null,
    getMultipleAccounts: ctx([null]),
    getAccountInfo: ctx(null),
  };
  const node = await scriptedNode((req) => ok(req.id, results[req.method]));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000, commitment: 'finalized' });
  try {
    expect(client.commitment).toBe('finalized');
    await client.getLatestBlockhash();
    await client.getBalance(addr);
    await client.getFeeForMessage('AAAA');
    await client.simulateTransaction('BBBB', { sigVerify: false, replaceRecentBlockhash: true, accounts: [] });
    await client.getTransaction('1'.repeat(64));
    await client.getMultipleAccounts([addr]);
    await client.getAccountInfo(addr);
    const commitments = node.requests.map(
      (r) => (r.params[r.params.length - 1] as { commitment?: unknown }).commitment,
    );
    expect(commitments).toEqual(Array<string>(7).fill('finalized'));
  } finally {
    client.close();
    await node.close();
  }
});

test('a node that accepts the connection and never answers is a timeout naming the method and the limit', async () => {
  // Fake: a silent node. A raw TCP listener that accepts and never writes.
  const sockets: net.Socket[] = [];
  const silent = net.createServer((s) => sockets.push(s));
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const client = new JsonRpcClient(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`, { timeoutMs: 150 });
  try {
    const err = await caught(client.getLatestBlockhash());
    expect(err).toMatchObject({ code: 'rpc', kind: 'timeout', method: 'getLatestBlockhash', rpcCode: undefined });
    expect(err.message).toBe('getLatestBlockhash: timed out after 150 ms');
  } finally {
    client.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => silent.close(r));
  }
});

test('a refused connection is a transport error that names the endpoint but not its path, query or credentials', async () => {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  const client = new JsonRpcClient(`http://user:hunter2@127.0.0.1:${port}/v1/token-abc?api-key=SECRETKEY`, {
    timeoutMs: 2000,
  });
  const err = await caught(client.getBalance(randomAddress()));
  expect(err).toMatchObject({ kind: 'transport', method: 'getBalance' });
  expect(err.message).toBe(`getBalance: cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
  for (const secret of ['hunter2', 'user', 'token-abc', 'SECRETKEY']) expect(err.message).not.toContain(secret);
  client.close();
});

test('credentials in the URL are sent as Basic auth, and the path and query reach the node', async () => {
  const node = await scriptedNode((req) => ok(req.id, 42));
  const client = new JsonRpcClient(`http://alice:s%40cret@127.0.0.1:${node.port}/rpc/abc?api-key=K`, {
    timeoutMs: 2000,
  });
  try {
    expect(await client.getBlockHeight('confirmed')).toBe(42);
    expect(node.requests[0]).toMatchObject({
      url: '/rpc/abc?api-key=K',
      authorization: `Basic ${Buffer.from('alice:s@cret').toString('base64')}`,
    });
    expect(client.endpoint).toBe(`http://127.0.0.1:${node.port}`);
  } finally {
    client.close();
    await node.close();
  }
});

test('a JSON-RPC error from the node is kind node with its code and message', async () => {
  localnet.faults.failNext(1, 'sendTransaction');
  const client = new JsonRpcClient(localnet.url, { timeoutMs: 2000 });
  try {
    const err = await caught(client.sendTransaction('AQ=='));
    expect(err).toMatchObject({
      kind: 'node',
      rpcCode: -32603,
      message: 'sendTransaction: node error -32603: Internal error',
    });
    // An undecodable transaction is the node's invalid-params error, not a transport failure.
    const bad = await caught(client.sendTransaction('AQ=='));
    expect(bad).toMatchObject({ kind: 'node', rpcCode: -32602 });
    expect(bad.message).toMatch(/^sendTransaction: node error -32602: invalid transaction: truncated/);
  } finally {
    client.close();
  }
});

test('an unknown method is a node error -32601', async () => {
  const transport = new JsonRpcTransport(localnet.url, 2000);
  try {
    const err = await caught(transport.call('getBlockProduction', []));
    expect(err).toMatchObject({
      kind: 'node',
      rpcCode: -32601,
      message: 'getBlockProduction: node error -32601: Method not found: getBlockProduction',
    });
  } finally {
    transport.close();
  }
});

describe('answers of the wrong shape are kind shape', () => {
  const addr = randomAddress();
  const cases: [string, (c: JsonRpcClient) => Promise<unknown>, unknown, string][] = [
    [
      'a balance as a string',
      (c) => c.getBalance(addr),
      { context: { slot: 1 }, value: '5' },
      'result.value is not a whole number',
    ],
    [
      'lamports beyond 2^53',
      (c) => c.getBalance(addr),
      { context: { slot: 1 }, value: 2 ** 60 },
      'result.value is beyond the exact integer range',
    ],
    [
      'negative lamports',
      (c) => c.getAccountInfo(addr),
      { context: { slot: 1 }, value: { lamports: -1, owner: addr } },
      'result.value.lamports is not a whole number',
    ],
    [
      'a blockhash that is not 32 bytes',
      (c) => c.getLatestBlockhash(),
      { context: { slot: 1 }, value: { blockhash: 'abc', lastValidBlockHeight: 1 } },
      'result.value.blockhash is not a base58 32-byte value',
    ],
    ['a result without context', (c) => c.getFeeForMessage('AA=='), 5000, 'result is not an object'],
    [
      'too few statuses',
      (c) => c.getSignatureStatuses(['1'.repeat(64), '1'.repeat(64)], { searchTransactionHistory: false }),
      { context: { slot: 1 }, value: [null] },
      'result.value has 1 entries for 2 signatures',
    ],
    [
      'an unknown confirmation level',
      (c) => c.getSignatureStatuses(['1'.repeat(64)], { searchTransactionHistory: false }),
      { context: { slot: 1 }, value: [{ slot: 1, err: null, confirmationStatus: 'rooted' }] },
      'result.value[0].confirmationStatus is not a commitment level',
    ],
    [
      'simulated accounts that do not match the request',
      (c) => c.simulateTransaction('AA==', { sigVerify: false, replaceRecentBlockhash: true, accounts: [addr] }),
      { context: { slot: 1 }, value: { err: null, logs: [], accounts: [] } },
      'result.value.accounts has 0 entries for 1 addresses',
    ],
    [
      'a simulation without err',
      (c) => c.simulateTransaction('AA==', { sigVerify: false, replaceRecentBlockhash: true, accounts: [] }),
      { context: { slot: 1 }, value: { logs: [] } },
      'result.value.err is missing',
    ],
    [
      'a signature that is not 64 bytes',
      (c) => c.sendTransaction('AA=='),
      addr,
      'result is not a base58 64-byte signature',
    ],
    [
      'a fee that is huge',
      (c) => c.getTransaction('1'.repeat(64)),
      { slot: 1, meta: { err: null, fee: 2 ** 54, preBalances: [1], postBalances: [1], logMessages: [] } },
      'result.meta.fee is beyond the exact integer range',
    ],
  ];
  cases.push(
    [
      'more signatures for an address than the limit asked for',
      (c) => c.getSignaturesForAddress(randomAddress(), { limit: 1 }),
      [1, 2].map(() => ({ signature: '1'.repeat(64), slot: 1, err: null, confirmationStatus: 'confirmed' })),
      'result has 2 entries for a limit of 1',
    ],
    [
      'a listed signature that is not one',
      (c) => c.getSignaturesForAddress(randomAddress(), { limit: 10 }),
      [{ signature: 'abc', slot: 1, err: null, confirmationStatus: 'confirmed' }],
      'result[0].signature is not a base58 64-byte signature',
    ],
  );
  test.each(cases)('%s', async (_name, invoke, result, detail) => {
    const node = await scriptedNode((req) => ok(req.id, result));
    const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
    try {
      const err = await caught(invoke(client));
      expect(err.kind).toBe('shape');
      expect(err.message).toBe(`${err.method}: unexpected response: ${detail}`);
    } finally {
      client.close();
      await node.close();
    }
  });

  test('a body that is not JSON, and an answer to another request id', async () => {
    let mode = 'text';
    const node = await scriptedNode((req) =>
      mode === 'text' ? { body: '<html>oops</html>' } : ok(Number(req.id) + 1, 1),
    );
    const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
    try {
      expect(await caught(client.getBlockHeight('confirmed'))).toMatchObject({
        kind: 'shape',
        message: 'getBlockHeight: the response is not JSON',
      });
      mode = 'wrong-id';
      expect(await caught(client.getBlockHeight('confirmed'))).toMatchObject({
        kind: 'shape',
        message: 'getBlockHeight: the response answers another request id',
      });
    } finally {
      client.close();
      await node.close();
    }
  });
});

test('an HTTP error page from a proxy is a transport error; a JSON-RPC error body with it is a node error', async () => {
  let body = 'Service Unavailable';
  const node = await scriptedNode(() => ({ status: 503, body }));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
  try {
    expect(await caught(client.getBlockHeight('confirmed'))).toMatchObject({
      kind: 'transport',
      message: `getBlockHeight: http://127.0.0.1:${node.port} answered HTTP 503`,
    });
    body = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: 429, message: 'Too many requests' } });
    expect(await caught(client.getBlockHeight('confirmed'))).toMatchObject({
      kind: 'node',
      rpcCode: 429,
      message: 'getBlockHeight: node error 429: Too many requests',
    });
  } finally {
    client.close();
    await node.close();
  }
});

test('calls share one keep-alive connection', async () => {
  const node = await scriptedNode((req) => ok(req.id, 1));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
  try {
    for (let i = 0; i < 20; i++) await client.getBlockHeight('confirmed');
    expect(node.connections()).toBe(1);
  } finally {
    client.close();
    await node.close();
  }
});

test('a URL that is not http(s) is a config error that does not echo the URL', () => {
  const thrown = (url: string): unknown => {
    try {
      new JsonRpcClient(url, { timeoutMs: 1000 });
    } catch (e) {
      return e;
    }
    return null;
  };
  const ftp = thrown('ftp://u:pw@example/x');
  expect(ftp).toBeInstanceOf(SignerError);
  expect(ftp).toMatchObject({ code: 'config_invalid', message: 'the RPC URL must be http or https, not ftp' });
  expect(thrown('not a url pw')).toMatchObject({ code: 'config_invalid', message: 'the RPC URL is not a valid URL' });
});

test('getTransaction without meta keeps the slot and reports unknown figures as null', async () => {
  const node = await scriptedNode((req) => ok(req.id, { slot: 77, meta: null }));
  const client = new JsonRpcClient(`http://127.0.0.1:${node.port}`, { timeoutMs: 2000 });
  try {
    expect(await client.getTransaction('1'.repeat(64))).toEqual({
      slot: 77,
      err: null,
      fee: null,
      preBalance0: null,
      postBalance0: null,
      logs: [],
      signatures: [],
      accountKeys: [],
      preBalances: [],
      postBalances: [],
      preTokenBalances: [],
      postTokenBalances: [],
      loadedAddresses: [],
    });
  } finally {
    client.close();
    await node.close();
  }
});

test('a real localnet answer passes every guard (balance of a funded key)', async () => {
  const key = newSigner();
  localnet.airdrop(key.pubkey, 123_456_789);
  const client = new JsonRpcClient(localnet.url, { timeoutMs: 2000 });
  try {
    expect(await client.getBalance(key.pubkey)).toBe(123_456_789);
  } finally {
    client.close();
  }
});

test('a landed transaction is listed for its signer and read back with its signatures, keys and balances', async () => {
  const from = newSigner();
  const to = randomAddress();
  localnet.airdrop(from.pubkey, 1_000_000_000);
  const client = new JsonRpcClient(localnet.url, { timeoutMs: 2000 });
  try {
    const { blockhash } = await client.getLatestBlockhash();
    const tx = signedTransfer(from, to, 5_000_000, blockhash);
    const id = await client.sendTransaction(tx.base64);
    localnet.advanceBlocks(2);
    const listed = await client.getSignaturesForAddress(from.pubkey, { limit: 10 });
    expect(listed[0]).toMatchObject({ signature: id, err: null });
    expect(listed[0]!.confirmationStatus).not.toBeNull();
    const meta = await client.getTransaction(id);
    expect(meta).toMatchObject({ signatures: [id], err: null });
    expect(meta!.accountKeys.slice(0, 2)).toEqual([from.pubkey, to]);
    const at = meta!.accountKeys.indexOf(to);
    expect(meta!.postBalances[at]! - meta!.preBalances[at]!).toBe(5_000_000);
    expect(meta!.postBalance0! - meta!.preBalance0!).toBe(-5_000_000 - meta!.fee!);
  } finally {
    client.close();
  }
});

describe('batching of calls made together', () => {
  /** Fake: a node whose answer to a batch is scripted per request; single calls get a height. */
  async function batchNode(onBatch: (n: number, calls: { id: unknown }[]) => { status: number; body: string }) {
    const seen: ('batch' | 'single')[] = [];
    /** The size in bytes of each request's body and how many calls it carried. */
    const bodies: { bytes: number; calls: number }[] = [];
    const server = http.createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        const parsed = JSON.parse(text) as { id: unknown } | { id: unknown }[];
        bodies.push({ bytes: Buffer.byteLength(text), calls: Array.isArray(parsed) ? parsed.length : 1 });
        if (Array.isArray(parsed)) {
          seen.push('batch');
          const { status, body } = onBatch(seen.filter((s) => s === 'batch').length, parsed);
          res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'text/html' }).end(body);
        } else {
          seen.push('single');
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result: 7 }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      seen,
      bodies,
      close: () =>
        new Promise<void>((r) => {
          server.close(() => r());
          server.closeAllConnections();
        }),
    };
  }
  const heights = (calls: { id: unknown }[]) =>
    JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: 9 })));

  it('sends calls made together as one request and matches the answers by id', async () => {
    const node = await batchNode((_n, calls) => ({
      status: 200,
      body: JSON.stringify((JSON.parse(heights(calls)) as unknown[]).reverse()),
    }));
    const client = new JsonRpcClient(node.url, { timeoutMs: 2000 });
    try {
      expect(await Promise.all([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')])).toEqual([
        9, 9,
      ]);
      expect(node.seen).toEqual(['batch']);
    } finally {
      client.close();
      await node.close();
    }
  });

  it('sends calls made before the event loop polls again in one request, however many awaits apart', async () => {
    const node = await batchNode((_n, calls) => ({ status: 200, body: heights(calls) }));
    const client = new JsonRpcClient(node.url, { timeoutMs: 2000 });
    try {
      // Two signs' calls: the second is made after a chain of awaits (as a sign's next step is), still before the
      // process goes back to waiting for I/O; a flush at the end of the first call's microtask would send two.
      const later = async () => {
        for (let i = 0; i < 50; i++) await Promise.resolve();
        return client.getBlockHeight('confirmed');
      };
      expect(await Promise.all([client.getBlockHeight('finalized'), later()])).toEqual([9, 9]);
      expect(node.seen).toEqual(['batch']);
    } finally {
      client.close();
      await node.close();
    }
  });

  it('splits the calls made together into batches whose bodies stay under 40 KiB, each answered', async () => {
    const node = await batchNode((_n, calls) => ({ status: 200, body: heights(calls) }));
    const transport = new JsonRpcTransport(node.url, 2000);
    try {
      // 60 calls of about 2 KB each (the size of a base64 transaction a sign simulates): 120 KB in all.
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) => transport.call('simulateTransaction', [`${i}`.padEnd(2000, 'A')])),
      );
      expect(answers).toEqual(Array.from({ length: 60 }, () => 9));
      expect(node.bodies.length).toBeGreaterThanOrEqual(3);
      for (const b of node.bodies) expect(b.bytes).toBeLessThanOrEqual(40 * 1024);
      expect(node.bodies.reduce((n, b) => n + b.calls, 0)).toBe(60);
    } finally {
      transport.close();
      await node.close();
    }
  });

  it('splits the calls made together into batches of at most 20 calls, each answered', async () => {
    const node = await batchNode((_n, calls) => ({ status: 200, body: heights(calls) }));
    const transport = new JsonRpcTransport(node.url, 2000);
    try {
      const answers = await Promise.all(
        Array.from({ length: 45 }, (_, i) => transport.call('getBalance', [`account-${i}`])),
      );
      expect(answers).toEqual(Array.from({ length: 45 }, () => 9));
      expect(node.bodies.map((b) => b.calls)).toEqual([20, 20, 5]);
    } finally {
      transport.close();
      await node.close();
    }
  });

  it('asks a question several signs ask in the same turn once, and gives each the answer', async () => {
    const node = await batchNode((_n, calls) => ({ status: 200, body: heights(calls) }));
    const transport = new JsonRpcTransport(node.url, 2000);
    try {
      const answers = await Promise.all([
        transport.call('getBlockHeight', [{ commitment: 'finalized' }]),
        transport.call('getBlockHeight', [{ commitment: 'confirmed' }]),
        transport.call('getBlockHeight', [{ commitment: 'finalized' }]),
        transport.call('getBlockHeight', [{ commitment: 'finalized' }]),
      ]);
      expect(answers).toEqual([9, 9, 9, 9]);
      expect(node.bodies).toEqual([{ bytes: expect.any(Number) as number, calls: 2 }]);
    } finally {
      transport.close();
      await node.close();
    }
  });

  it('treats an HTML 500 to a batch as a transport failure of that request, and keeps batching', async () => {
    const node = await batchNode((n, calls) =>
      n === 1 ? { status: 500, body: '<html>oops</html>' } : { status: 200, body: heights(calls) },
    );
    // Without retries, so the failed batch's verdict reaches its calls.
    const client = new JsonRpcClient(node.url, { timeoutMs: 2000, retry: { ...DEFAULT_RETRY, retries: 0 } });
    try {
      const failed = await Promise.allSettled([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')]);
      expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      const reason: unknown = (failed[0] as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(RpcError);
      expect((reason as RpcError).kind).toBe('transport');
      expect((reason as RpcError).message).toMatch(/answered HTTP 500/);
      expect(await Promise.all([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')])).toEqual([
        9, 9,
      ]);
      expect(node.seen).toEqual(['batch', 'batch']);
    } finally {
      client.close();
      await node.close();
    }
  });

  it('retries each call of a batch that failed with a 500, and they get their answers', async () => {
    const node = await batchNode(() => ({ status: 500, body: '<html>oops</html>' }));
    const client = new JsonRpcClient(node.url, { timeoutMs: 2000 });
    try {
      // The batch fails; each call then retries on its own (the fake answers single calls with 7).
      expect(await Promise.all([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')])).toEqual([
        7, 7,
      ]);
      expect(node.seen).toEqual(['batch', 'single', 'single']);
    } finally {
      client.close();
      await node.close();
    }
  });

  it('falls back to single calls for good when the node answers a batch with a JSON-RPC error', async () => {
    const node = await batchNode(() => ({
      status: 200,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'batch requests are disabled' },
      }),
    }));
    const client = new JsonRpcClient(node.url, { timeoutMs: 2000 });
    try {
      expect(await Promise.all([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')])).toEqual([
        7, 7,
      ]);
      expect(await Promise.all([client.getBlockHeight('finalized'), client.getBlockHeight('confirmed')])).toEqual([
        7, 7,
      ]);
      expect(node.seen).toEqual(['batch', 'single', 'single', 'single', 'single']);
    } finally {
      client.close();
      await node.close();
    }
  });
});
