/**
 * The same transaction twice: two requests for the same transfer at once compile to the same transaction (same
 * blockhash, same bytes), and the chain runs it once, so the second must not be reported, or charged, as a second
 * payment.
 */
import { refusal, type Refusal } from '../../refusals';

export function inFlightRefusal(signature: string | null, inFlight: boolean): Refusal | null {
  if (signature === null || !inFlight) return null;
  return refusal(
    'signature_in_flight',
    `this exact transaction (signature ${signature}) is already signed for another request and has no outcome yet: the chain runs a transaction once, so signing it again would move nothing more; for a second transfer sign again after the next block (a new blockhash), or make the two transactions differ`,
    { signature },
  );
}
