/** Token operations that hand control of the key's tokens to someone else, refused unless a key allows them. */
export const TOKEN_OPS = ['approve', 'set_authority', 'close_account', 'freeze', 'mint'] as const;
export type TokenOp = (typeof TOKEN_OPS)[number];
