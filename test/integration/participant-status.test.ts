import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { runAdmin } from '../../infra/ops/cli.js';
import { UsageError } from '../../infra/ops/command.js';
import { ConflictError, NotFoundError } from '../../lib/domain/errors.js';
import { getDistribution } from '../../lib/store/awards.js';
import { auditLog } from '../../lib/store/audit.js';
import { balanceOf } from '../../lib/store/ledger.js';
import { getParticipant } from '../../lib/store/participants.js';
import { customersViaStore } from '../support/customers.js';
import { balances, fund } from '../support/ledger.js';
import { setPrice } from '../support/pricing.js';
import { newPlatform, serviceFor, type TestPlatform, type TestService } from '../support/service.js';
import { clientWith, ctx } from '../support/context.js';
import { eventCapture, listEvents } from '../support/events.js';

// Prices are shared by every file of the run and every crypto/fiat pair has its owner (DOGE/EUR must stay
// unpriced: liquidity.test.ts asserts it). This file sets SOL/EUR to rewards.test.ts's value, and ETH/EUR and
// the ETH network fee to convert-withdraw.test.ts's: the same values, so the order of the files is moot.
const ETH_ADDRESS = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
beforeAll(async () => {
  await setPrice('SOL', 'EUR', '125');
  await setPrice('ETH', 'EUR', '2500');
  await runAdmin(['fee', 'set', '--asset', 'ETH', '--quantity', '0.002', '--reason', 'test'], { ctx });
});

const capture = eventCapture();

const setStatus = (platform: TestPlatform, participantCode: string, status: string, reason = 'test') =>
  runAdmin(
    [
      'participant',
      'status',
      '--platform',
      platform.platformCode,
      '--participant',
      participantCode,
      '--status',
      status,
      '--reason',
      reason,
    ],
    { ctx },
  ) as Promise<Record<string, unknown>>;

const query = (path: string, params: Record<string, string>) => `${path}?${new URLSearchParams(params).toString()}`;
const solRfq = (participantCode: string) =>
  query('/liquidity/rfq', {
    side: 'buy',
    underlying: 'SOL',
    quoted_currency: 'EUR',
    quantity: '1',
    participant_code: participantCode,
  });
const ethConvertRfq = (participantCode: string) =>
  query('/convert_withdraw/rfq', {
    side: 'buy',
    underlying: 'ETH',
    quoted_currency: 'EUR',
    quantity: '0.01',
    withdrawal_address: ETH_ADDRESS,
    participant_code: participantCode,
  });

async function quoteId(platform: TestPlatform, path: string): Promise<string> {
  const response = await platform.get(path);
  expect(response.status, response.text).toBe(200);
  return response.body.message.quote_id as string;
}

/** A platform with a funded customer (EUR to buy with, SOL to send) and a second customer to send to. */
async function tradingCustomer() {
  const platform = await newPlatform();
  const [customer, other] = (await customersViaStore(platform.platformCode, 2)) as [string, string];
  await fund(customer, 'EUR', '1000');
  await fund(customer, 'SOL', '100');
  await fund(other, 'SOL', '100');
  await fund(platform.participantCode, 'EUR', '1000');
  await fund(platform.participantCode, 'SOL', '1000', 'awards');
  return { platform, customer, other };
}

describe('ops: participant status', () => {
  it('locks, disables and approves again, each change conditioned on the status read; the same status is a no-op that says so; audited with the reason', async () => {
    const platform = await newPlatform();
    const [customer] = (await customersViaStore(platform.platformCode, 1)) as [string];
    const since = ctx.clock.nowMs();

    expect(await setStatus(platform, customer, 'locked', 'KYC review opened')).toEqual({
      platform_code: platform.platformCode,
      participant_code: customer,
      status: 'locked',
      previous_status: 'approved',
      changed: true,
    });
    expect((await getParticipant(ctx, customer))?.status).toBe('locked');
    // A retry of the same command changes nothing and says so.
    expect(await setStatus(platform, customer, 'locked')).toMatchObject({
      status: 'locked',
      previous_status: 'locked',
      changed: false,
    });
    expect(await setStatus(platform, customer, 'disabled')).toMatchObject({
      status: 'disabled',
      previous_status: 'locked',
      changed: true,
    });
    expect(await setStatus(platform, customer, 'approved')).toMatchObject({
      status: 'approved',
      previous_status: 'disabled',
      changed: true,
    });

    const entries = (await auditLog(ctx, since, 1000)).filter(
      (entry) => entry.command === 'participant status' && entry.changes.participant_code === customer,
    );
    expect(entries.find((entry) => entry.reason === 'KYC review opened')?.changes).toEqual({
      platform_code: platform.platformCode,
      participant_code: customer,
      status: 'locked',
      previous_status: 'approved',
    });

    // Reading a locked participant's data stays allowed.
    await setStatus(platform, customer, 'locked');
    const listed = await platform.get(`/participants?participant_code=${customer}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.message).toEqual([expect.objectContaining({ participant_code: customer, status: 'locked' })]);
  });

  it('refuses bad flags before connecting, and a participant of another platform or unknown', async () => {
    const platform = await newPlatform();
    const other = await newPlatform();
    const [customer] = (await customersViaStore(platform.platformCode, 1)) as [string];
    const base = ['participant', 'status', '--platform', platform.platformCode, '--participant', customer];
    await expect(runAdmin([...base, '--status', 'locked'], { ctx })).rejects.toThrow(/--reason is required/);
    await expect(runAdmin([...base, '--status', 'frozen', '--reason', 'x'], { ctx })).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(runAdmin([...base, '--status', 'locked', '--reason', 'x', '--force'], { ctx })).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(
      runAdmin(
        [
          'participant',
          'status',
          '--platform',
          other.platformCode,
          '--participant',
          customer,
          '--status',
          'locked',
          '--reason',
          'x',
        ],
        { ctx },
      ),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(
      runAdmin([...base.slice(0, 5), 'NOSUCH', '--status', 'locked', '--reason', 'x'], { ctx }),
    ).rejects.toBeInstanceOf(NotFoundError);
    expect((await getParticipant(ctx, customer))?.status).toBe('approved');
  });
});

describe('a locked or disabled participant cannot quote, execute, transfer or receive rewards and awards', () => {
  for (const status of ['locked', 'disabled'] as const) {
    it(`${status}: every such route answers 400 naming the participant, nothing moves; approved again, they work`, async () => {
      const { platform, customer, other } = await tradingCustomer();
      // Quotes made while approved: executing them after the change must fail too.
      const liquidityQuote = await quoteId(platform, solRfq(customer));
      const convertQuote = await quoteId(platform, ethConvertRfq(customer));
      const before = await balances(platform);

      await setStatus(platform, customer, status);
      const named = `participant ${customer} is ${status}, not approved`;
      const refusals: [string, Promise<{ status: number; body: any; text: string }>, string][] = [
        ['GET /liquidity/rfq', platform.get(solRfq(customer)), `participant_code: ${named}`],
        [
          'POST /liquidity/rfq',
          platform.post('/liquidity/rfq', {
            side: 'buy',
            underlying: 'SOL',
            quoted_currency: 'EUR',
            quantity: '1',
            participant_code: customer,
          }),
          `participant_code: ${named}`,
        ],
        ['GET /convert_withdraw/rfq', platform.get(ethConvertRfq(customer)), `participant_code: ${named}`],
        [
          'POST /liquidity/execute',
          platform.post('/liquidity/execute', { quote_id: liquidityQuote }),
          `participant_code: participant ${customer} is not approved (locked or disabled)`,
        ],
        [
          'POST /convert_withdraw/execute',
          platform.post('/convert_withdraw/execute', { quote_id: convertQuote }),
          `participant_code: participant ${customer} is not approved (locked or disabled)`,
        ],
        [
          'POST /transfers (from)',
          platform.post('/transfers', {
            from_participant_code: customer,
            to_participant_code: other,
            asset: 'SOL',
            amount: '1',
          }),
          `from_participant_code: ${named}`,
        ],
        [
          'POST /transfers (to)',
          platform.post('/transfers', {
            from_participant_code: other,
            to_participant_code: customer,
            asset: 'SOL',
            amount: '1',
          }),
          `to_participant_code: ${named}`,
        ],
        [
          'POST /rewards',
          platform.post('/rewards', {
            underlying: 'SOL',
            quoted_currency: 'EUR',
            quantity: '1',
            participant_code: customer,
          }),
          `participant_code: ${named}`,
        ],
        [
          'POST /awards/distribute',
          platform.post('/awards/distribute', { asset: 'SOL', quantity: '1', participant_codes: [other, customer] }),
          `participant_codes: customers not approved: ${customer}`,
        ],
      ];
      for (const [route, pending, expected] of refusals) {
        const response = await pending;
        expect(response.status, `${route}: ${response.text}`).toBe(400);
        expect(response.body.errors, route).toEqual([expected]);
      }
      expect(await balances(platform)).toEqual(before);

      await setStatus(platform, customer, 'approved');
      expect((await platform.get(solRfq(customer))).status).toBe(200);
      const executed = await platform.post('/liquidity/execute', {
        quote_id: await quoteId(platform, solRfq(customer)),
      });
      expect(executed.status, executed.text).toBe(200);
      const converted = await platform.post('/convert_withdraw/execute', {
        quote_id: await quoteId(platform, ethConvertRfq(customer)),
      });
      expect(converted.status, converted.text).toBe(200);
      expect(
        (
          await platform.post('/transfers', {
            from_participant_code: customer,
            to_participant_code: other,
            asset: 'SOL',
            amount: '1',
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await platform.post('/transfers', {
            from_participant_code: other,
            to_participant_code: customer,
            asset: 'SOL',
            amount: '1',
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await platform.post('/rewards', {
            underlying: 'SOL',
            quoted_currency: 'EUR',
            quantity: '1',
            participant_code: customer,
          })
        ).status,
      ).toBe(201);
      expect(
        (
          await platform.post('/awards/distribute', {
            asset: 'SOL',
            quantity: '1',
            participant_codes: [other, customer],
          })
        ).status,
      ).toBe(201);
      // 100 + 1 bought + 1 in - 1 out + 1 reward + 1 award.
      expect((await balances(platform))[`${customer}/general/SOL`]).toBe('103.000000000');
    });
  }

  it("a locked platform participant can't quote, trade or transfer for itself, nor fund awards", async () => {
    const { platform, other } = await tradingCustomer();
    await setStatus(platform, platform.participantCode, 'locked');
    const named = `participant ${platform.participantCode} is locked, not approved`;
    const quote = await platform.get(
      query('/liquidity/rfq', { side: 'buy', underlying: 'SOL', quoted_currency: 'EUR', quantity: '1' }),
    );
    expect(quote.body.errors).toEqual([`participant_code: ${named}`]);
    const transfer = await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      to_participant_code: other,
      asset: 'EUR',
      amount: '1',
    });
    expect(transfer.body.errors).toEqual([`from_participant_code: ${named}`]);
    const funding = await platform.post('/awards/fund', { underlying: 'SOL', quoted_currency: 'EUR', quantity: '1' });
    expect(funding.status).toBe(400);
    expect(funding.body.errors).toEqual([
      `participant_code: participant ${platform.participantCode} is not approved (locked or disabled)`,
    ]);
    await setStatus(platform, platform.participantCode, 'approved');
    expect(
      (await platform.post('/awards/fund', { underlying: 'SOL', quoted_currency: 'EUR', quantity: '1' })).status,
    ).toBe(201);
  });
});

/**
 * A server whose DynamoDB client locks `participantCode` just before the `nth` TransactWriteItems call goes
 * out, and holds that call and every later one until the lock committed: the booking read the participant
 * approved, and the lock commits between that read and its transaction (for every transaction sent at once).
 */
function lockingBeforeTransaction(platform: TestPlatform, participantCode: string, nth = 1): TestService {
  let seen = 0;
  let locked: Promise<unknown> | undefined;
  const db = clientWith(
    (next, context) => async (args) => {
      if (context.commandName === 'TransactWriteItemsCommand' && ++seen >= nth)
        await (locked ??= setStatus(platform, participantCode, 'locked', 'race'));
      return next(args);
    },
    'lockBeforeBooking',
    'initialize',
  );
  return serviceFor({ ...ctx, db });
}

describe('a lock committed between a booking’s read and its transaction refuses the booking (the condition is in the transaction)', () => {
  it('transfer, execution, reward: 400 naming the participant, nothing booked', async () => {
    const cases: [
      string,
      (
        platform: TestPlatform,
        customer: string,
        other: string,
      ) => Promise<{ via: TestService; send: (via: TestService) => Promise<any> }>,
      string,
    ][] = [
      [
        'POST /transfers',
        async (platform, customer, other) => ({
          via: lockingBeforeTransaction(platform, customer),
          send: (via) =>
            platform.post(
              '/transfers',
              { from_participant_code: customer, to_participant_code: other, asset: 'SOL', amount: '5' },
              { via },
            ),
        }),
        'from_participant_code',
      ],
      [
        'POST /transfers (destination)',
        async (platform, customer, other) => ({
          via: lockingBeforeTransaction(platform, customer),
          send: (via) =>
            platform.post(
              '/transfers',
              { from_participant_code: other, to_participant_code: customer, asset: 'SOL', amount: '5' },
              { via },
            ),
        }),
        'to_participant_code',
      ],
      [
        'POST /liquidity/execute',
        async (platform, customer) => {
          const id = await quoteId(platform, solRfq(customer));
          return {
            via: lockingBeforeTransaction(platform, customer),
            send: (via) => platform.post('/liquidity/execute', { quote_id: id }, { via }),
          };
        },
        'participant_code',
      ],
      [
        'POST /convert_withdraw/execute',
        async (platform, customer) => {
          const id = await quoteId(platform, ethConvertRfq(customer));
          return {
            via: lockingBeforeTransaction(platform, customer),
            send: (via) => platform.post('/convert_withdraw/execute', { quote_id: id }, { via }),
          };
        },
        'participant_code',
      ],
      [
        'POST /rewards',
        async (platform, customer) => ({
          via: lockingBeforeTransaction(platform, customer),
          send: (via) =>
            platform.post(
              '/rewards',
              { underlying: 'SOL', quoted_currency: 'EUR', quantity: '1', participant_code: customer },
              { via },
            ),
        }),
        'participant_code',
      ],
    ];
    for (const [route, prepare, field] of cases) {
      const { platform, customer, other } = await tradingCustomer();
      const { via, send } = await prepare(platform, customer, other);
      const before = await balances(platform);
      const response = await send(via);
      expect(response.status, `${route}: ${response.text}`).toBe(400);
      expect(response.body.errors, route).toEqual([
        `${field}: participant ${customer} is not approved (locked or disabled)`,
      ]);
      expect((await getParticipant(ctx, customer))?.status, route).toBe('locked');
      expect(await balances(platform), route).toEqual(before);
    }
  });

  it('an award distribution stops at the chunk of a recipient locked meanwhile; approved again, the same request finishes it, each recipient credited once', async () => {
    const platform = await newPlatform();
    // 15 recipients fit a chunk: 40 make three, the locked customer (the 21st) is in the second.
    const customers = await customersViaStore(platform.platformCode, 40);
    await fund(platform.participantCode, 'SOL', '40', 'awards');
    const late = customers[20]!;
    const requestId = randomUUID();
    const body = { asset: 'SOL', quantity: '1', participant_codes: customers };
    // Transactions: the distribution with its escrow, then the three chunks at once (one escrow lane each),
    // after the lock committed. The other lanes' chunks are credited all the same.
    const stopped = await platform.post('/awards/distribute', body, {
      headers: { 'X-Request-Id': requestId },
      via: lockingBeforeTransaction(platform, late, 2),
    });
    expect(stopped.status, stopped.text).toBe(400);
    expect(stopped.body.errors).toEqual([
      `participant_codes: participant ${late} is not approved (locked or disabled)`,
    ]);
    expect((await getDistribution(ctx, platform.platformCode, requestId))?.chunks.map((chunk) => chunk.status)).toEqual(
      ['credited', 'pending', 'credited'],
    );

    await setStatus(platform, late, 'approved');
    const finished = await platform.post('/awards/distribute', body, { headers: { 'X-Request-Id': requestId } });
    expect(finished.status, finished.text).toBe(201);
    const credited = await Promise.all(
      customers.map((code) =>
        balanceOf(ctx, {
          participant_code: code,
          account_group: platform.platformCode,
          account_label: 'general',
          asset: 'SOL',
        }),
      ),
    );
    expect(credited.map((balance) => balance.toFixed())).toEqual(Array(40).fill('1'));
  });
});

describe('bookings racing a lock', () => {
  it('concurrent transfers out of a customer while it is locked: none books after the lock committed, and the ledger adds up', async () => {
    const { platform, customer, other } = await tradingCustomer();
    let lockCommitted = false;
    const results: { startedAfterLock: boolean; status: number; errors?: string[] }[] = [];
    const sender = async () => {
      for (let i = 0; i < 12; i++) {
        const startedAfterLock = lockCommitted;
        const response = await platform.post('/transfers', {
          from_participant_code: customer,
          to_participant_code: other,
          asset: 'SOL',
          amount: '1',
        });
        results.push({ startedAfterLock, status: response.status, errors: response.body?.errors });
      }
    };
    const locker = async () => {
      await new Promise((resolve) => setTimeout(resolve, 60));
      await setStatus(platform, customer, 'locked', 'race');
      lockCommitted = true;
    };
    await Promise.all([sender(), sender(), sender(), locker()]);

    expect(results.every((result) => result.status === 201 || result.status === 400)).toBe(true);
    // Every request sent once the lock had committed was refused, naming the customer.
    const afterLock = results.filter((result) => result.startedAfterLock);
    expect(afterLock.length).toBeGreaterThan(0);
    for (const result of afterLock) {
      expect(result.status).toBe(400);
      expect(result.errors?.[0]).toMatch(
        new RegExp(
          `^from_participant_code: participant ${customer} is (locked, not approved|not approved \\(locked or disabled\\))$`,
        ),
      );
    }
    // What booked is exactly what moved.
    const booked = results.filter((result) => result.status === 201).length;
    const after = await balances(platform);
    expect(after[`${customer}/general/SOL`]).toBe(`${100 - booked}.000000000`);
    expect(after[`${other}/general/SOL`]).toBe(`${100 + booked}.000000000`);
  });
});

describe('participant.status_changed', () => {
  it('arrives once per change (not for a no-op), with previous_status and a sequence per participant, in GET /events and at a receiver', async () => {
    const platform = await newPlatform();
    const subscription = await capture.subscribe(platform);
    const [customer, bystander] = (await customersViaStore(platform.platformCode, 2)) as [string, string];
    await setStatus(platform, customer, 'locked');
    await setStatus(platform, customer, 'locked');
    await setStatus(platform, bystander, 'disabled');
    await setStatus(platform, customer, 'disabled');
    await setStatus(platform, customer, 'approved');

    const ofCustomer = (event: { type: string; resource: { id: string } }) =>
      event.type === 'participant.status_changed' && event.resource.id === customer;
    const events = await capture.received(subscription, ofCustomer, 3);
    expect(events.map((event) => [event.sequence, event.previous_status, event.data.status])).toEqual([
      [1, 'approved', 'locked'],
      [2, 'locked', 'disabled'],
      [3, 'disabled', 'approved'],
    ]);
    for (const event of events) {
      expect(event.resource).toEqual({ type: 'participant', id: customer });
      // The participant without personal data: who, of which platform, what kind, which status.
      expect(Object.keys(event.data).sort()).toEqual(['kind', 'participant_code', 'platform_code', 'status']);
      expect(event.data).toMatchObject({
        participant_code: customer,
        platform_code: platform.platformCode,
        kind: 'customer',
      });
    }
    // The bystander's own sequence starts at 1; the type filter lists both participants' events.
    const byType = await listEvents(platform, '&type=participant.status_changed');
    expect(
      byType
        .filter((event) => event.resource.id === bystander)
        .map((event) => [event.sequence, event.previous_status, event.data.status]),
    ).toEqual([[1, 'approved', 'disabled']]);
    expect(byType.filter(ofCustomer)).toHaveLength(3);
  });

  it('two operators changing one participant at once: one change, one event; the other is told it moved', async () => {
    const platform = await newPlatform();
    const [customer] = (await customersViaStore(platform.platformCode, 1)) as [string];
    const outcomes = await Promise.allSettled([
      setStatus(platform, customer, 'locked'),
      setStatus(platform, customer, 'disabled'),
    ]);
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const lost = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    // Either one lost to the other, or they ran one after the other (the second a change from the first's status).
    for (const outcome of lost) expect(outcome.reason).toBeInstanceOf(ConflictError);
    const events = (await listEvents(platform, '&type=participant.status_changed')).filter(
      (event) => event.resource.id === customer,
    );
    expect(events).toHaveLength(won.length);
    expect(events.map((event) => event.sequence).sort()).toEqual(won.map((_, index) => index + 1));
    expect(events.at(-1)?.data.status).toBe((await getParticipant(ctx, customer))?.status);
  });
});
