import { beforeAll, describe, expect, it } from 'vitest';
import { accountIdOf } from '../../lib/domain/ledger.js';
import { grantRelationship } from '../../lib/store/relationships.js';
import { customersViaHttp } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

/**
 * `GET /movements` and `GET /accounts/{account_id}/movements` (the reference API's read routes) as
 * cursor lists on the platform's movement index, through HTTP with signatures over path plus query.
 */

let platform: TestPlatform;
let stranger: TestPlatform;
let alice: string;
let bob: string;
const transfer = (from: string, to: string, asset: string, amount: string) =>
  platform.post('/transfers', { from_participant_code: from, to_participant_code: to, asset, amount });

beforeAll(async () => {
  [platform, stranger] = await Promise.all([newPlatform(), newPlatform()]);
  [alice, bob] = (await customersViaHttp(platform, 2)) as [string, string];
  await fund(alice, 'USD', '100');
  await fund(alice, 'EUR', '50');
  for (const [to, amount] of [
    [bob, '10.00'],
    [bob, '20.00'],
    [bob, '30.00'],
  ] as const) {
    expect((await transfer(alice, to, 'USD', amount)).status).toBe(201);
  }
  await fund(stranger.participantCode, 'USD', '7');
});

const usd = (participant: string) =>
  accountIdOf({
    participant_code: participant,
    account_group: platform.platformCode,
    account_label: 'general',
    asset: 'USD',
  });

describe('GET /movements', () => {
  it("lists the movements on the platform's accounts, newest first, each with its signed changes", async () => {
    const response = await platform.get('/movements');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toMatchObject({ page: 1, page_size: 100, count: 5, total_pages: 1, next_cursor: null });
    const movements = response.body.message;
    expect(movements.map((m: any) => m.movement_type)).toEqual([
      'transfer',
      'transfer',
      'transfer',
      'deposit',
      'deposit',
    ]);
    expect(movements[0]).toEqual({
      movement_id: expect.any(String),
      movement_timestamp: expect.any(Number),
      movement_type: 'transfer',
      reference: expect.stringMatching(/^transfer:\d+$/),
      changes: [
        {
          account_id: usd(alice),
          account_owner: alice,
          account_group: platform.platformCode,
          account_label: 'general',
          asset: 'USD',
          change: '-30.00',
        },
        {
          account_id: usd(bob),
          account_owner: bob,
          account_group: platform.platformCode,
          account_label: 'general',
          asset: 'USD',
          change: '30.00',
        },
      ],
    });
    // A deposit's other side is the outside world: only the platform's account shows.
    expect(movements[4].changes).toHaveLength(1);
    const times = movements.map((m: any) => m.movement_timestamp);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('filters by account, participant, asset, type and time', async () => {
    const byAccount = await platform.get(`/movements?account_id=${usd(bob)}`);
    expect(
      byAccount.body.message.map((m: any) => m.changes.find((c: any) => c.account_id === usd(bob)).change),
    ).toEqual(['30.00', '20.00', '10.00']);
    expect(byAccount.body.count).toBe(3);
    const byAsset = await platform.get('/movements?asset=EUR');
    expect(byAsset.body.message).toEqual([
      expect.objectContaining({
        movement_type: 'deposit',
        changes: [expect.objectContaining({ asset: 'EUR', change: '50.00' })],
      }),
    ]);
    const byParticipant = await platform.get(`/movements?participant_code=${bob}&movement_type=transfer`);
    expect(byParticipant.body.count).toBe(3);
    const byType = await platform.get('/movements?movement_type=deposit');
    expect(byType.body.count).toBe(2);
    const all = (await platform.get('/movements')).body.message;
    const middle = all[1].movement_timestamp;
    const before = await platform.get(`/movements?movement_timestamp[lte]=${middle}`);
    expect(before.body.message.every((m: any) => m.movement_timestamp <= middle)).toBe(true);
    expect(before.body.message.map((m: any) => m.movement_id)).toContain(all[1].movement_id);
    const inverted = await platform.get(`/movements?movement_timestamp[gt]=${middle}&movement_timestamp[lt]=${middle}`);
    expect(inverted.status).toBe(200);
    expect(inverted.body).toMatchObject({ message: [], count: 0 });
    const bad = await platform.get('/movements?movement_timestamp[gte]=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['movement_timestamp[gte]: must be a UNIX timestamp in milliseconds']);
  });

  it('walks page by page with next_cursor, every movement exactly once; a cursor is bound to its platform and filters', async () => {
    const seen: string[] = [];
    let path = '/movements?page_size=2';
    for (let guard = 0; guard < 10; guard++) {
      const response = await platform.get(path);
      expect(response.status, response.text).toBe(200);
      seen.push(...response.body.message.map((m: any) => m.movement_id));
      if (response.body.next_cursor === null) break;
      path = `/movements?page_size=2&cursor=${encodeURIComponent(response.body.next_cursor)}`;
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);

    const first = await platform.get('/movements?page_size=2');
    const cursor = encodeURIComponent(first.body.next_cursor);
    const foreign = await stranger.get(`/movements?page_size=2&cursor=${cursor}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0]).toMatch(/^cursor: /);
    const otherFilters = await platform.get(`/movements?page_size=2&asset=USD&cursor=${cursor}`);
    expect(otherFilters.status).toBe(400);
  });

  it("never shows another platform's movements", async () => {
    const theirs = await stranger.get('/movements');
    expect(theirs.body.count).toBe(1);
    expect(theirs.body.message[0].changes).toEqual([
      expect.objectContaining({ account_owner: stranger.participantCode, change: '7.00' }),
    ]);
    const probing = await stranger.get(`/movements?account_id=${usd(alice)}`);
    expect(probing.body).toMatchObject({ message: [], count: 0 });
  });
});

describe('GET /accounts/{account_id}/movements', () => {
  it("lists one account's movements with its change; the changes sum to its balance", async () => {
    const response = await platform.get(`/accounts/${usd(alice)}/movements`);
    expect(response.status, response.text).toBe(200);
    const changes = response.body.message.map((m: any) => m.change);
    expect(changes).toEqual(['-30.00', '-20.00', '-10.00', '100.00']);
    expect(response.body.message[0]).toEqual({
      movement_id: expect.any(String),
      movement_timestamp: expect.any(Number),
      movement_type: 'transfer',
      reference: expect.stringMatching(/^transfer:/),
      account_id: usd(alice),
      asset: 'USD',
      change: '-30.00',
    });
    const account = await platform.get(`/accounts/${usd(alice)}`);
    const sum = changes.reduce((total: number, change: string) => total + Math.round(Number(change) * 100), 0);
    expect((sum / 100).toFixed(2)).toBe(account.body.message.balance);
    const paged = await platform.get(`/accounts/${usd(alice)}/movements?page_size=3`);
    expect(paged.body).toMatchObject({ count: 4, total_pages: 2, next_cursor: expect.any(String) });
  });

  it("a malformed id is a 400; another platform's account reads as unknown (404)", async () => {
    const malformed = await platform.get('/accounts/xyz/movements');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual(['account_id: must be an account id (a UUID)']);
    const foreign = await stranger.get(`/accounts/${usd(alice)}/movements`);
    const unknown = await stranger.get('/accounts/00000000-0000-5000-8000-000000000000/movements');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
  });
});

describe("a movement between two platforms' accounts", () => {
  it("is listed for both platforms, each seeing only its own accounts' changes", async () => {
    const [actor, owner] = await Promise.all([newPlatform(), newPlatform()]);
    const [theirCustomer] = await customersViaHttp(owner, 1);
    await grantRelationship(ctx, actor.platformCode, 'submits_platform_transfers_for', theirCustomer!);
    await fund(actor.participantCode, 'USD', '10');
    const sent = await actor.post('/transfers', {
      from_participant_code: actor.participantCode,
      to_participant_code: theirCustomer,
      asset: 'USD',
      amount: '4.00',
    });
    expect(sent.status, sent.text).toBe(201);

    const actorView = (await actor.get('/movements?movement_type=transfer')).body.message;
    const ownerView = (await owner.get('/movements?movement_type=transfer')).body.message;
    expect(actorView).toHaveLength(1);
    expect(ownerView).toHaveLength(1);
    expect(ownerView[0].movement_id).toBe(actorView[0].movement_id);
    expect(actorView[0].changes).toEqual([
      expect.objectContaining({ account_owner: actor.participantCode, change: '-4.00' }),
    ]);
    expect(ownerView[0].changes).toEqual([expect.objectContaining({ account_owner: theirCustomer, change: '4.00' })]);
  });
});
