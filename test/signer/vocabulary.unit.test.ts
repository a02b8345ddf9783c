/** A renamed check keeps its old spelling accepted where a check name is input, and is never written. */
import { CHECK_NAMES, checkNameFromInput, RENAMED_CHECKS } from '../../src/signer/vocabulary';

test('`chain` reads as `cluster`; current names and unknown text pass through unchanged', () => {
  expect(checkNameFromInput('chain')).toBe('cluster');
  expect(checkNameFromInput('cluster')).toBe('cluster');
  expect(checkNameFromInput('limits')).toBe('limits');
  expect(checkNameFromInput('no-such-check')).toBe('no-such-check');
});

test('an old spelling is no current name, and names one', () => {
  for (const [old, now] of Object.entries(RENAMED_CHECKS)) {
    expect(CHECK_NAMES).not.toContain(old);
    expect(CHECK_NAMES).toContain(now);
  }
});
