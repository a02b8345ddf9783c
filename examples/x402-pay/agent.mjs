// The agent's side of the x402 example: `fetch` wrapped by @x402/fetch, with @x402/svm's exact client scheme
// signing through a kit signer. In the example that signer is sa-forge-signer's (`createServiceSigner`): the
// agent never holds the key, and the service checks each payment against the operator's token caps before it
// fills the key's signature slot (sign_only; the facilitator pays the fee, signs last and sends).
import { x402Client, x402HTTPClient } from '@x402/core/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import { NETWORK } from './chain.mjs';

/** An x402 client paying in `mint` on the example network with `signer`, reading the chain at `rpcUrl`. */
export function payingClient({ signer, rpcUrl, mint }) {
  const client = new x402Client().register(NETWORK, new ExactSvmScheme(signer, { rpcUrl }));
  // The example token is not one of the package's known assets: it must be allowed by name.
  client.setSpendControls({ allowedAssets: [{ network: NETWORK, asset: mint }] });
  return client;
}

/** GETs `url`, paying if asked; resolves to what happened, never throws. */
export async function pay(client, url) {
  const fetchWithPayment = wrapFetchWithPayment(fetch, client);
  try {
    const res = await fetchWithPayment(url);
    const header = res.headers.get('PAYMENT-RESPONSE') ?? res.headers.get('X-PAYMENT-RESPONSE');
    const settled = header ? decodePaymentResponseHeader(header) : null;
    return {
      url,
      status: res.status,
      body: await res.json().catch(() => null),
      transaction: settled?.transaction ?? null,
    };
  } catch (e) {
    return { url, status: null, error: errorText(e) };
  }
}

/**
 * Gets the route's payment requirements and has the signer sign a payment for them, but never sends it: the
 * key's signature is returned so its fate (it expires unsent) can be followed in the signer's audit log.
 */
export async function signButDrop(client, url) {
  const res = await fetch(url);
  const http = new x402HTTPClient(client);
  const required = http.getPaymentRequiredResponse(
    (name) => res.headers.get(name),
    await res.json().catch(() => undefined),
  );
  const payment = await client.createPaymentPayload(required);
  return { url, status: res.status, transaction_base64: payment.payload.transaction };
}

function errorText(e) {
  const parts = [];
  for (let cur = e; cur instanceof Error && parts.length < 4; cur = cur.cause) parts.push(cur.message);
  return parts.join(': ');
}
