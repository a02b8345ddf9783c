/** True if `p` is still pending after `ms` (a lock still waited for, a sign still held). */
export async function stillPending(p: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setTimeout(r, ms));
  return !settled;
}
