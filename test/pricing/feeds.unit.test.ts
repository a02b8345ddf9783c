/** The known feeds' sponsored accounts are the push oracle's addresses for their ids, as Pyth's SDK derives them. */
import { getProgramDerivedAddress, getU16Encoder } from '@solana/kit';
import { KNOWN_FEEDS, PYTH_PUSH_ORACLE_PROGRAM } from '../../src/pricing/feeds';
import { normalizeFeedId } from '../../src/util/feed-id';
import { PYTH_FIXTURE } from './fixture';

test("each known feed's id and sponsored account match what Pyth's SDK derived", async () => {
  expect(PYTH_PUSH_ORACLE_PROGRAM).toBe(PYTH_FIXTURE.push_oracle_program);
  for (const sdk of PYTH_FIXTURE.sponsored_feed_accounts) {
    const known = KNOWN_FEEDS[sdk.feed as keyof typeof KNOWN_FEEDS];
    expect({ feed: sdk.feed, id: known.feedId, account: known.sponsoredAccount }).toEqual({
      feed: sdk.feed,
      id: sdk.feed_id,
      account: sdk.address,
    });
    const [derived] = await getProgramDerivedAddress({
      programAddress: PYTH_PUSH_ORACLE_PROGRAM,
      seeds: [getU16Encoder().encode(0), Buffer.from(known.feedId, 'hex')],
    });
    expect(derived).toBe(known.sponsoredAccount);
  }
  expect(Object.keys(KNOWN_FEEDS).sort()).toEqual(PYTH_FIXTURE.sponsored_feed_accounts.map((s) => s.feed).sort());
});

test('feed ids are accepted with or without 0x, in any case, and only as 32 bytes of hex', () => {
  const id = KNOWN_FEEDS['SOL/USD'].feedId;
  expect(normalizeFeedId(`0x${id.toUpperCase()}`)).toBe(id);
  expect(normalizeFeedId(` ${id} `)).toBe(id);
  expect(normalizeFeedId(id.slice(2))).toBeNull();
  expect(normalizeFeedId(`${id}00`)).toBeNull();
  expect(normalizeFeedId(`${id.slice(1)}g`)).toBeNull();
});
