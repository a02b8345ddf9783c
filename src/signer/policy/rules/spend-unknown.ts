/**
 * A spend the simulation does not bound is refused, never judged as free: the caps need the key's balance change
 * (`why` says what was missing of it).
 */
import { refusal, type Refusal } from '../../refusals';

export const UNREPORTED_BALANCE = "the simulation did not report this key's balance, so the spend cannot be bounded";

export function spendUnknownRefusal(why: string = UNREPORTED_BALANCE): Refusal {
  return refusal('spend_unknown', why);
}
