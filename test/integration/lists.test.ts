import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateTradeReport } from '../../lib/domain/trade-report.js';
import { newId } from '../../lib/store/codes.js';
import { getTrade, tradeItems, updateTrade } from '../../lib/store/trades.js';
import { acceptedTrade, type Trade } from '../../lib/domain/trade.js';
import { transactWrite } from '../../lib/store/table/transactions.js';
import { customersViaStore } from '../support/customers.js';
import { fund, transferBody } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { tradeAsListed, tradeBody } from '../support/trades.js';
import { ctx } from '../support/context.js';

/**
 * Cursor paging of every list: one key-ordered page per request, `next_cursor` bound to
 * the platform, the list and its filters, `page=N` within a window, strict page parameters.
 */

async function transfer(platform: TestPlatform, overrides: Record<string, unknown> = {}): Promise<number> {
  // A distinct client id per transfer: identical bodies signed in one second would be replays.
  const response = await platform.post(
    '/transfers',
    transferBody(platform, { client_transfer_id: randomUUID(), ...overrides }),
  );
  if (response.status !== 201) throw new Error(`POST /transfers: ${response.status} ${response.text}`);
  return response.body.message.id;
}

async function listOk(platform: TestPlatform, path: string): Promise<any> {
  const response = await platform.get(path);
  expect(response.status, `${path}: ${response.text}`).toBe(200);
  return response.body;
}

/** Every page of a list by following `next_cursor`; the ids of every page, in order. */
async function walk(
  platform: TestPlatform,
  path: string,
  idOf: (item: any) => string,
  between?: () => Promise<unknown>,
): Promise<string[][]> {
  const pages: string[][] = [];
  const separator = path.includes('?') ? '&' : '?';
  let cursor: string | null = null;
  do {
    const body: any = await listOk(
      platform,
      cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`,
    );
    expect(body.page).toBe(pages.length + 1);
    pages.push(body.message.map(idOf));
    cursor = body.next_cursor;
    if (between) await between();
  } while (cursor !== null);
  return pages;
}

const LISTS = [
  { path: '/transfers', size: 'page_size' },
  { path: '/trades', size: 'page_size' },
  { path: '/accounts', size: 'page_size' },
  { path: '/participants', size: 'page_size' },
  { path: '/payments/status', size: 'size' },
] as const;

describe('list paging', () => {
  let platform: TestPlatform;
  let other: TestPlatform;
  let transferIds: string[];

  beforeAll(async () => {
    [platform, other] = await Promise.all([newPlatform(), newPlatform()]);
    await Promise.all([
      fund(platform.participantCode, 'USD', '1000'),
      fund(platform.participantCode, 'BTC', '1'),
      fund(other.participantCode, 'USD', '1000'),
    ]);
    const ids: number[] = [];
    // In sequence: creation order is list order (newest first).
    for (let i = 0; i < 23; i++)
      ids.push(await transfer(platform, i % 3 === 0 ? { asset: 'BTC', amount: '0.001' } : {}));
    transferIds = ids.map(String).reverse();
    await transfer(other);
  });

  it('walks a list by next_cursor: every record once, newest first, next_cursor null on the last page', async () => {
    const pages = await walk(platform, '/transfers?page_size=5', (t) => String(t.id));
    expect(pages.map((page) => page.length)).toEqual([5, 5, 5, 5, 3]);
    expect(pages.flat()).toEqual(transferIds);
    const first = await listOk(platform, '/transfers?page_size=5');
    expect(first).toMatchObject({ page: 1, page_size: 5, count: 23, total_pages: 5 });
    expect(typeof first.next_cursor).toBe('string');
  });

  it('a list that fits one page has next_cursor null; an exactly full last page too', async () => {
    expect((await listOk(platform, '/transfers')).next_cursor).toBeNull();
    const pages = await walk(platform, '/transfers?page_size=23', (t) => String(t.id));
    expect(pages).toEqual([transferIds]);
  });

  it('page=N gives the same pages as the cursor walk', async () => {
    const pages = await walk(platform, '/transfers?page_size=4', (t) => String(t.id));
    for (let n = 1; n <= pages.length; n++) {
      const body = await listOk(platform, `/transfers?page_size=4&page=${n}`);
      expect(body.message.map((t: any) => String(t.id))).toEqual(pages[n - 1]);
      expect(body.page).toBe(n);
    }
    const beyond = await listOk(platform, '/transfers?page_size=4&page=9');
    expect(beyond).toMatchObject({ message: [], page: 9, next_cursor: null, count: 23 });
  });

  it('filters apply to every page and to the count; the cursor walk of a filter sees exactly its records', async () => {
    const btc = await walk(platform, '/transfers?asset=BTC&page_size=3', (t) => String(t.id));
    const expected = (await listOk(platform, '/transfers?asset=BTC')).message.map((t: any) => String(t.id));
    expect(btc.flat()).toEqual(expected);
    expect(expected).toHaveLength(8);
    expect((await listOk(platform, '/transfers?asset=BTC&page_size=3')).count).toBe(8);
  });

  it('records inserted during a walk never make a pre-existing record disappear or repeat', async () => {
    const before = new Set(transferIds);
    const pages = await walk(
      platform,
      '/transfers?page_size=4',
      (t) => String(t.id),
      () =>
        Promise.all([transfer(platform), transfer(platform), transfer(platform, { asset: 'BTC', amount: '0.001' })]),
    );
    const seen = pages.flat();
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    const latest = await listOk(platform, '/transfers?page_size=100');
    transferIds = latest.message.map((t: any) => String(t.id));
  });

  it('concurrent walks by several clients each see every pre-existing record exactly once', async () => {
    const before = (await walk(platform, '/transfers?page_size=100', (t) => String(t.id))).flat();
    const walks = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        walk(
          platform,
          `/transfers?page_size=${3 + i}`,
          (t) => String(t.id),
          () => transfer(platform),
        ),
      ),
    );
    for (const pages of walks) {
      const seen = pages.flat();
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.filter((id) => before.includes(id))).toEqual(before);
    }
  });

  it("two platforms never see each other's records", async () => {
    const mine = (await walk(platform, '/transfers?page_size=50', (t) => String(t.id))).flat();
    const theirs = (await walk(other, '/transfers?page_size=50', (t) => String(t.id))).flat();
    expect(theirs).toHaveLength(1);
    expect(mine.filter((id) => theirs.includes(id))).toEqual([]);
    const accounts = await listOk(other, '/accounts');
    expect(accounts.message.every((a: any) => a.account_owner === other.participantCode)).toBe(true);
  });

  describe('cursors are refused unless issued for this platform, list and filters', () => {
    let cursor: string;
    beforeAll(async () => {
      cursor = (await listOk(platform, '/transfers?page_size=2')).next_cursor;
    });

    const refused = async (client: () => TestPlatform, path: () => string) => {
      const response = await client().get(path());
      expect(response.status, response.text).toBe(400);
      expect(response.body.errors.some((e: string) => e.startsWith('cursor:'))).toBe(true);
      expect(response.body.message).toBeUndefined();
    };

    it('is accepted as issued', async () => {
      expect((await platform.get(`/transfers?page_size=2&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    });
    it('garbage', () =>
      refused(
        () => platform,
        () => '/transfers?cursor=hello',
      ));
    it('truncated', () =>
      refused(
        () => platform,
        () => `/transfers?page_size=2&cursor=${encodeURIComponent(cursor.slice(0, -3))}`,
      ));
    it('altered payload', async () => {
      const [body, mac] = cursor.split('.') as [string, string];
      const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
      payload.n = 7;
      const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${mac}`;
      await refused(
        () => platform,
        () => `/transfers?page_size=2&cursor=${encodeURIComponent(forged)}`,
      );
    });
    it('one character flipped', async () => {
      const flipped = cursor.slice(0, 5) + (cursor[5] === 'A' ? 'B' : 'A') + cursor.slice(6);
      await refused(
        () => platform,
        () => `/transfers?page_size=2&cursor=${encodeURIComponent(flipped)}`,
      );
    });
    it('re-encoded (standard base64)', async () => {
      const reencoded = Buffer.from(cursor).toString('base64');
      await refused(
        () => platform,
        () => `/transfers?page_size=2&cursor=${encodeURIComponent(reencoded)}`,
      );
    });
    it('from another filter', () =>
      refused(
        () => platform,
        () => `/transfers?page_size=2&asset=USD&cursor=${encodeURIComponent(cursor)}`,
      ));
    it('from another list', () =>
      refused(
        () => platform,
        () => `/accounts?page_size=2&cursor=${encodeURIComponent(cursor)}`,
      ));
    it('from another platform', () =>
      refused(
        () => other,
        () => `/transfers?page_size=2&cursor=${encodeURIComponent(cursor)}`,
      ));
  });

  describe('page parameters are validated strictly on every list', () => {
    for (const list of LISTS) {
      for (const value of ['0', '101', 'abc', '1e2', '-1', '2.5', '']) {
        // payments' size allows up to 200
        const bad = list.size === 'size' && value === '101' ? '201' : value;
        it(`${list.path}?${list.size}=${bad} is a 400 naming ${list.size}`, async () => {
          const response = await platform.get(`${list.path}?${list.size}=${encodeURIComponent(bad)}`);
          expect(response.status, response.text).toBe(400);
          expect(response.body.errors.some((e: string) => e.startsWith(`${list.size}:`))).toBe(true);
        });
      }
      for (const value of ['0', '-1', 'abc', '1e2']) {
        it(`${list.path}?page=${value} is a 400 naming page`, async () => {
          const response = await platform.get(`${list.path}?page=${value}`);
          expect(response.status, response.text).toBe(400);
          expect(response.body.errors.some((e: string) => e.startsWith('page:'))).toBe(true);
        });
      }
      it(`${list.path}: page x size beyond 10,000 is a 400 that points to cursor`, async () => {
        const response = await platform.get(`${list.path}?page=101&${list.size}=100`);
        expect(response.status, response.text).toBe(400);
        expect(response.body.errors.join(' ')).toContain('cursor');
      });
    }
  });
});

describe('accounts and participants lists', () => {
  let platform: TestPlatform;
  let customers: string[];
  beforeAll(async () => {
    platform = await newPlatform();
    customers = await customersViaStore(platform.platformCode, 12);
    for (const code of customers.slice(0, 5))
      await Promise.all([fund(code, 'USD', '10'), fund(code, 'BTC', '0.1'), fund(code, 'USD', '1', 'savings')]);
  });

  it('participants: the platform and its customers, oldest first, walked by cursor', async () => {
    const pages = await walk(platform, '/participants?page_size=5', (p) => p.participant_code);
    expect(pages.map((p) => p.length)).toEqual([5, 5, 3]);
    expect(new Set(pages.flat())).toEqual(new Set([platform.participantCode, ...customers]));
    expect((await listOk(platform, '/participants?page_size=5')).count).toBe(13);
  });

  it('participants filtered by code: one record, no cursor', async () => {
    const body = await listOk(platform, `/participants?participant_code=${customers[3]}`);
    expect(body).toMatchObject({ count: 1, next_cursor: null });
    expect(body.message.map((p: any) => p.participant_code)).toEqual([customers[3]]);
  });

  it('accounts: walked by cursor in key order; owner and asset filters narrow pages and count', async () => {
    const pages = await walk(
      platform,
      '/accounts?page_size=4',
      (a) => `${a.account_owner}/${a.account_label}/${a.asset}`,
    );
    const all = pages.flat();
    expect(all).toHaveLength(15);
    expect([...all].sort()).toEqual(all);
    const owner = customers[2]!;
    const mine = await listOk(platform, `/accounts?account_owner=${owner}`);
    expect(mine.count).toBe(3);
    expect(mine.message.every((a: any) => a.account_owner === owner)).toBe(true);
    const usd = (
      await walk(platform, '/accounts?asset=USD&page_size=3', (a) => `${a.account_owner}/${a.account_label}/${a.asset}`)
    ).flat();
    expect(usd).toHaveLength(10);
    expect(
      (await listOk(platform, `/accounts?account_owner=${owner}&account_label=savings&asset=USD`)).message,
    ).toHaveLength(1);
  });
});

describe("trades seen by a party's platform", () => {
  it('lists them from its own entries, filtered by state, and follows state changes in list and count', async () => {
    const [reporter, partyPlatform] = await Promise.all([newPlatform(), newPlatform()]);
    const [seller] = await customersViaStore(reporter.platformCode, 1);
    const [buyer] = await customersViaStore(partyPlatform.platformCode, 1);
    const now = ctx.clock.nowMs();
    const stored: Trade[] = [];
    for (let i = 0; i < 5; i++) {
      const report = validateTradeReport(
        tradeBody(reporter, { buyer: buyer!, seller: seller!, overrides: { transaction_timestamp: now - 10_000 + i } }),
        {
          platformCode: reporter.platformCode,
          nowMs: now,
        },
      );
      if (!report.ok) throw new Error(report.errors.join('; '));
      const trade = acceptedTrade(report.value, {
        tradeId: newId(),
        nowMs: now,
        accountGroups: [partyPlatform.platformCode, reporter.platformCode],
      });
      await transactWrite(ctx, tradeItems(ctx, trade));
      stored.push(trade);
    }
    const ids = stored.map((t) => t.trade_id).reverse();
    for (const client of [reporter, partyPlatform]) {
      expect((await walk(client, '/trades?page_size=2', (t) => t.trade_id)).flat()).toEqual(ids);
      expect((await listOk(client, '/trades?trade_state=accepted')).count).toBe(5);
    }
    await updateTrade(
      ctx,
      stored[1]!,
      ['accepted'],
      { trade_state: 'active', settlement_state: 'obligations_outstanding' },
      ctx.clock.nowMs(),
    );
    for (const client of [reporter, partyPlatform]) {
      const active = await listOk(client, '/trades?trade_state=active&settlement_state=obligations_outstanding');
      expect(active.message.map((t: any) => t.trade_id)).toEqual([stored[1]!.trade_id]);
      expect(active.count).toBe(1);
      expect((await listOk(client, '/trades?trade_state=accepted')).count).toBe(4);
      expect((await listOk(client, '/trades?settlement_state=null&page_size=2')).count).toBe(4);
      expect((await listOk(client, `/trades?party_code=${buyer}`)).count).toBe(5);
    }
    // The party's platform lists each trade as its reporter does, after a change of the states and after one of
    // other fields (a party's obligations), its entry holding the trade as stored.
    const listedBy = async (client: TestPlatform) => (await listOk(client, '/trades?page_size=5')).message;
    expect(await listedBy(partyPlatform)).toEqual(await listedBy(reporter));
    const active = (await getTrade(ctx, stored[1]!.trade_id, { consistent: true }))!;
    const dueMs = ctx.clock.nowMs() + 60_000;
    const parties = active.parties.map((party) => ({ ...party, obligations_outstanding_timestamp: dueMs }));
    expect(await updateTrade(ctx, active, ['active'], { parties }, ctx.clock.nowMs())).toBe(true);
    expect(await listedBy(partyPlatform)).toEqual(await listedBy(reporter));
    for (const trade of stored) {
      const { stored: asStored, listed } = await tradeAsListed(ctx, trade.trade_id, partyPlatform.platformCode);
      expect(listed).toEqual(asStored);
    }
    const outsider = await newPlatform();
    expect((await listOk(outsider, '/trades')).count).toBe(0);
  });
});
