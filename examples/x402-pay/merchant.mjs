// The merchant's side of the x402 example: a local facilitator and a resource server, both on loopback.
//
// The facilitator (@x402/core/facilitator with @x402/svm's exact scheme) holds its own funded key: it is the
// fee payer of every payment transaction, verifies it by simulation, adds its signature and sends it. The
// resource server (@x402/express paymentMiddleware) prices each route in the example token's base units and asks
// the facilitator to verify and settle. The official packages are used unchanged.
import express from 'express';
import { createSolanaRpc } from '@solana/kit';
import { x402Facilitator } from '@x402/core/facilitator';
import { HTTPFacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { paymentMiddleware } from '@x402/express';
import { toFacilitatorSvmSigner } from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitatorScheme } from '@x402/svm/exact/facilitator';
import { ExactSvmScheme as ExactSvmServerScheme } from '@x402/svm/exact/server';
import { NETWORK } from './chain.mjs';

/** Listens on 127.0.0.1 (a free port) and resolves to the base URL. */
function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) });
    });
    server.on('error', reject);
  });
}

/**
 * The facilitator as an HTTP service (the three endpoints HTTPFacilitatorClient calls). `keyPair` is its own
 * funded key (a kit KeyPairSigner); `rpcUrl` the chain it settles on.
 */
export async function startFacilitator({ keyPair, rpcUrl }) {
  // The per-network map form: @x402/svm 2.27.0 misreads a single kit RPC object.
  const signer = toFacilitatorSvmSigner(keyPair, { [NETWORK]: createSolanaRpc(rpcUrl) });
  const facilitator = new x402Facilitator().register(NETWORK, new ExactSvmFacilitatorScheme(signer));
  const app = express();
  app.use(express.json({ limit: '64kb' }));
  const answer = (work) => async (req, res) => {
    try {
      res.json(await work(req.body ?? {}));
    } catch (e) {
      res.status(500).json({ error: e instanceof Error ? e.message : String(e) });
    }
  };
  app.post(
    '/verify',
    answer((b) => facilitator.verify(b.paymentPayload, b.paymentRequirements)),
  );
  app.post(
    '/settle',
    answer((b) => facilitator.settle(b.paymentPayload, b.paymentRequirements)),
  );
  app.get(
    '/supported',
    answer(() => facilitator.getSupported()),
  );
  return listen(app);
}

/**
 * The resource server: every route of `prices` (path → base units of `mint`) is paid to `payTo` (the merchant's
 * owner address; the token lands in its associated token account).
 */
export async function startResourceServer({ facilitatorUrl, mint, payTo, prices }) {
  const server = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitatorUrl })).register(
    NETWORK,
    new ExactSvmServerScheme(),
  );
  const routes = Object.fromEntries(
    Object.entries(prices).map(([path, amount]) => [
      `GET ${path}`,
      {
        accepts: { scheme: 'exact', network: NETWORK, payTo, price: { amount: String(amount), asset: mint } },
        description: `example resource ${path}`,
        mimeType: 'application/json',
      },
    ]),
  );
  const app = express();
  app.use(paymentMiddleware(routes, server));
  for (const path of Object.keys(prices)) app.get(path, (_req, res) => res.json({ path, paid: true }));
  return listen(app);
}
