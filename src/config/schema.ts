/**
 * The config schema, put together from the sections under src/config/sections/, each of which owns its settings'
 * doc, format, default and env var `SIGNER_…` (env beats the file). Entries of the `keys`, `clusters`,
 * `serve.tokens`, `operators`, `notify` and `localnet.*` collections have their own schemas, validated strictly per
 * entry so an error names e.g. `keys.alice.class`. `config/example.yaml` documents the same keys for people, and
 * docs/configuration.md is generated from them (src/config/reference.ts); test/config/reference.unit.test.ts keeps
 * all three in step. The order here is the order of the reference.
 */
import { section, type Infer } from './setting';
import { clusterChoiceSchema, clustersSchema } from './sections/cluster';
import { keyStoresSchema } from './sections/key-stores';
import { keysSchema } from './sections/keys';
import { ledgerSchema } from './sections/ledger';
import { localnetSchema } from './sections/localnet';
import { loggingSchema } from './sections/logging';
import { notifySchema } from './sections/notify';
import { operatorsSchema } from './sections/operators';
import { pricesSchema } from './sections/prices';
import { serveSchema } from './sections/serve';
import { timingsSchema } from './sections/timings';

const { state_dir, ledger } = ledgerSchema;
const { notify, notify_delivery } = notifySchema;

export const topLevelSchema = section({
  ...clusterChoiceSchema,
  ...keyStoresSchema,
  state_dir,
  ...loggingSchema,
  ...operatorsSchema,
  ...keysSchema,
  ...pricesSchema,
  ...clustersSchema,
  ledger,
  timings: timingsSchema,
  ...serveSchema,
  notify,
  notify_delivery,
  ...localnetSchema,
});

/** What convict reads from the file and env, before the sections resolve and cross-check it. */
export type TopLevel = Infer<typeof topLevelSchema>;

export { keySchema } from './sections/keys';
export { tokenPolicySchema } from './sections/key-tokens';
export { operatorSchema } from './sections/operators';
export { tokenSchema } from './sections/bearer-tokens';
export { issuedCredentialSchema } from './sections/credentials';
export { notifyHookSchema } from './sections/notify';
export { clusterSchema, programEntrySchema } from './sections/cluster-profile';
export { fundEntrySchema } from './sections/localnet';
export { priceFeedEntrySchema } from './sections/prices';
