export { loadConfig, redactUrl, readDocument, type LoadConfigOptions } from './load';
export { parseListen } from './formats';
export { ZINK_TESTNET, PROGRAM, localCluster } from './clusters';
export type * from './types';
