/** Runs the abuse suites in a fixed order; the secret-hygiene scan of everything the others produced goes last. */
const Sequencer = require('@jest/test-sequencer').default;

const ORDER = [
  'host-origin',
  'slow-clients',
  'protocol-fuzz',
  'payload-fuzz',
  'rpc-faults',
  'cap-holes',
  'crash',
  'load',
  'event-loop',
  'secret-hygiene',
];
const rank = (p) => {
  const i = ORDER.findIndex((name) => p.endsWith(`${name}.test.ts`));
  return i < 0 ? ORDER.length - 1 : i; // an unknown suite runs before the scan
};

class AbuseSequencer extends Sequencer {
  sort(tests) {
    return [...tests].sort((a, b) => rank(a.path) - rank(b.path));
  }
}

module.exports = AbuseSequencer;
