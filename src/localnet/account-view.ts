/** An account as the embedded chain shows it to its RPC methods and its token-balance reader. */
export interface AccountView {
  lamports: number;
  owner: string;
  data: Uint8Array;
  executable: boolean;
}
