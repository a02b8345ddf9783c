/** What a console action comes to: a value, or a refusal with the HTTP status and a message the operator can act on. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; status: number; error: string };

export const done = <T>(value: T): Outcome<T> => ({ ok: true, value });
export const refused = (status: number, error: string): { ok: false; status: number; error: string } => ({
  ok: false,
  status,
  error,
});
