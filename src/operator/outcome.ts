/**
 * What a console action comes to: a value, or a refusal with the HTTP status, a message the operator can act on and,
 * where a program may want to tell it apart, a machine-readable reason.
 */
export type Outcome<T> = { ok: true; value: T } | Refusal;

export interface Refusal {
  ok: false;
  status: number;
  error: string;
  reason?: string;
}

export const done = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const refused = (status: number, error: string, reason?: string): Refusal =>
  reason === undefined ? { ok: false, status, error } : { ok: false, status, error, reason };
