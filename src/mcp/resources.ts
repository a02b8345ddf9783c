/** The four static resources (text/markdown) and the discover `instructions` that point an agent at the skill. */
import { CHECKS, OUTCOMES, PAYLOAD, SKILL } from './docs';

export interface StaticResource {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: 'text/markdown';
  text: string;
}

export const RESOURCES: readonly StaticResource[] = [
  {
    uri: 'signer://docs/skill',
    name: 'skill',
    title: 'How to use the signer',
    description:
      'Read first: check before sign, pass the payload unchanged, what to do after each outcome, when to halt.',
    mimeType: 'text/markdown',
    text: SKILL,
  },
  {
    uri: 'signer://docs/payload',
    name: 'payload',
    title: 'Payload formats',
    description:
      'Payload v1 (instructions) and v2 (your own legacy or v0 transaction), field by field, how to build each with @solana/kit, and how the signing key is chosen.',
    mimeType: 'text/markdown',
    text: PAYLOAD,
  },
  {
    uri: 'signer://docs/checks',
    name: 'checks',
    title: 'Checks and refusals',
    description:
      'Every check in order, the failed_check name it reports, and how to fix a refusal; every reason a refusal reports, with its figures and what to do.',
    mimeType: 'text/markdown',
    text: CHECKS,
  },
  {
    uri: 'signer://docs/outcomes',
    name: 'outcomes',
    title: 'Outcomes',
    description: 'What each outcome means, its exit code, and how to reconcile after unknown before retrying.',
    mimeType: 'text/markdown',
    text: OUTCOMES,
  },
];

export const INSTRUCTIONS =
  'sa-forge-signer signs transactions with keys it holds, only when its policy allows. Read the resource signer://docs/skill before the first call. ' +
  "In short: build a payload (v1: instructions; v2: a transaction you compiled, e.g. with @solana/kit; signer://docs/payload), call check, then sign the same payload with an intent (mode sign_only returns the signed bytes instead of sending); act on the report's outcome. " +
  'After unknown, an error or a dropped connection the transaction may still have landed: look up the signature and re-read the state before building it again. ' +
  'halt stops all signing with your keys at once; only a human can resume.';
