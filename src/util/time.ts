export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
