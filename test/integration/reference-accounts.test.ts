import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { accountIdOf } from '../../lib/domain/ledger.js';
import { deposit } from '../../lib/ledger/deposit.js';
import { ValidationError } from '../../lib/domain/errors.js';
import { customerBody, customersViaHttp } from '../support/customers.js';
import { fund } from '../support/ledger.js';
import { newPlatform, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

/**
 * Accounts and participants as reference API clients read them (the reference API's account reads,
 * the Account entity, and the reference API's read routes): a stable `account_id`, account groups a
 * platform names itself, the reference's `GET /accounts` filters with a trailing slash signed as sent,
 * `GET /accounts/{account_id}` and `GET /participants/{email}`. Another platform's records read exactly as
 * unknown ones.
 */

const ACCOUNT_FIELDS = [
  'asset',
  'account_owner',
  'account_type',
  'account_group',
  'account_label',
  'balance',
  'account_id',
  'last_update',
];

let platform: TestPlatform;
let stranger: TestPlatform;
let customer: string;
beforeAll(async () => {
  [platform, stranger] = await Promise.all([newPlatform(), newPlatform()]);
  customer = (await customersViaHttp(platform, 1))[0]!;
  await fund(platform.participantCode, 'USD', '1000');
});

describe('account groups a platform names itself', () => {
  it('moves money into and out of an own group in transfers, and every read shows it', async () => {
    const group = 'Rewards_Pool-2026';
    const into = await platform.post('/transfers', {
      from_participant_code: platform.participantCode,
      from_account_group: platform.platformCode,
      to_participant_code: customer,
      to_account_group: group,
      to_account_label: 'savings',
      asset: 'USD',
      amount: '40.00',
    });
    expect(into.status, into.text).toBe(201);
    expect(into.body.message).toMatchObject({ to_account_group: group, to_account_label: 'savings', amount: '40.00' });

    const back = await platform.post('/transfers', {
      from_participant_code: customer,
      from_account_group: group,
      from_account_label: 'savings',
      to_participant_code: platform.participantCode,
      to_account_group: platform.platformCode,
      asset: 'USD',
      amount: '15.00',
    });
    expect(back.status, back.text).toBe(201);

    const listed = await platform.get(`/accounts?account_owner=${customer}&account_group=${group}`);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.message).toEqual([
      {
        asset: 'USD',
        account_owner: customer,
        account_type: 'available',
        account_group: group,
        account_label: 'savings',
        balance: '25.00',
        account_id: accountIdOf({
          participant_code: customer,
          account_group: group,
          account_label: 'savings',
          asset: 'USD',
        }),
        last_update: expect.any(Number),
      },
    ]);
    const byLabel = await platform.get(`/accounts?account_label=savings&asset=USD&account_owner=${customer}`);
    expect(byLabel.body.message.map((account: any) => account.account_group)).toEqual([group]);
  });

  it('credits an own group through the ops deposit too', async () => {
    await deposit(ctx, {
      reference: randomUUID(),
      participantCode: customer,
      asset: 'EUR',
      amount: '3.00',
      accountGroup: 'ops_group',
    });
    const listed = await platform.get(`/accounts?account_owner=${customer}&account_group=ops_group`);
    expect(listed.body.message).toEqual([
      expect.objectContaining({ asset: 'EUR', balance: '3.00', account_group: 'ops_group' }),
    ]);
    await expect(
      deposit(ctx, {
        reference: randomUUID(),
        participantCode: customer,
        asset: 'EUR',
        amount: '1',
        accountGroup: 'bad group',
      }),
    ).rejects.toThrow(ValidationError);
  });

  it('refuses a group over 50 characters or with other characters, naming the field, and books nothing', async () => {
    const body = (to_account_group: string) => ({
      from_participant_code: platform.participantCode,
      to_participant_code: customer,
      to_account_group,
      asset: 'USD',
      amount: '1.00',
    });
    const long = await platform.post('/transfers', body('g'.repeat(51)));
    expect(long.status).toBe(400);
    expect(long.body.errors).toEqual(['to_account_group: must be at most 50 characters']);
    for (const group of ['has space', 'semi;colon', 'hash#tag', 'ünïcode']) {
      const response = await platform.post('/transfers', body(group));
      expect(response.status, group).toBe(400);
      expect(response.body.errors).toEqual([
        'to_account_group: must be 1 to 50 letters, digits, _ or - (an account group)',
      ]);
    }
    const filter = await platform.get('/accounts?account_group=bad%20group');
    expect(filter.status).toBe(400);
    expect(filter.body.errors).toEqual(['account_group: must be 1 to 50 letters, digits, _ or - (an account group)']);
    const balance = await platform.get(`/accounts?account_owner=${platform.participantCode}&asset=USD`);
    expect(balance.body.message[0].balance).toBe('975.00');
  });
});

describe('GET /accounts with the reference filters', () => {
  it('routes /accounts/?... like /accounts?..., signed over the path as sent', async () => {
    const query = `account_owner=${platform.participantCode}&account_group=${platform.platformCode}&asset=USD`;
    const plain = await platform.get(`/accounts?${query}`);
    const slashed = await platform.get(`/accounts/?${query}`);
    expect(slashed.status, slashed.text).toBe(200);
    expect(slashed.body).toEqual(plain.body);
    expect(slashed.body.message).toEqual([
      expect.objectContaining({ account_owner: platform.participantCode, asset: 'USD' }),
    ]);
    for (const account of slashed.body.message) expect(Object.keys(account).sort()).toEqual([...ACCOUNT_FIELDS].sort());
  });
});

describe('GET /accounts/{account_id}', () => {
  it('answers the account by its stable id, the same id GET /accounts lists', async () => {
    const listed = await platform.get(`/accounts?account_owner=${platform.participantCode}&asset=USD`);
    const account = listed.body.message[0];
    expect(account.account_id).toBe(
      accountIdOf({
        participant_code: platform.participantCode,
        account_group: platform.platformCode,
        account_label: 'general',
        asset: 'USD',
      }),
    );
    const response = await platform.get(`/accounts/${account.account_id}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ message: account });
    // The id stays the account's through later bookings.
    await fund(platform.participantCode, 'USD', '1');
    const again = await platform.get(`/accounts/${account.account_id}`);
    expect(again.body.message).toMatchObject({ account_id: account.account_id, balance: '976.00' });
  });

  it("a malformed id is a 400 naming account_id; an unknown id and another platform's account the same 404", async () => {
    const malformed = await platform.get('/accounts/12345');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual(['account_id: must be an account id (a UUID)']);
    const unknownId = '00000000-0000-5000-8000-000000000000';
    const unknown = await platform.get(`/accounts/${unknownId}`);
    expect(unknown.status).toBe(404);
    const foreignId = accountIdOf({
      participant_code: platform.participantCode,
      account_group: platform.platformCode,
      account_label: 'general',
      asset: 'USD',
    });
    const foreign = await stranger.get(`/accounts/${foreignId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.replace(foreignId, 'ID')).toBe(unknown.body.error.replace(unknownId, 'ID'));
  });
});

describe('GET /participants/{email}', () => {
  it("finds the platform's customer by e-mail, in any letter case and percent-encoded", async () => {
    const body = customerBody();
    const created = await platform.post('/participants/customers/new', body);
    expect(created.status).toBe(201);
    const code = created.body.message.participant_code;
    const email = String(body.email);
    for (const path of [
      `/participants/${email}`,
      `/participants/${email.toUpperCase()}`,
      `/participants/${encodeURIComponent(email)}`,
    ]) {
      const response = await platform.get(path);
      expect(response.status, `${path}: ${response.text}`).toBe(200);
      expect(response.body.message).toMatchObject({
        participant_code: code,
        platform_code: platform.platformCode,
        kind: 'customer',
        status: 'approved',
        email,
      });
    }
    const listed = await platform.get(`/participants?participant_code=${code}`);
    expect((await platform.get(`/participants/${email}`)).body.message).toEqual(listed.body.message[0]);
  });

  it("a malformed e-mail is a 400 naming email; an unknown one and another platform's customer the same 404", async () => {
    const malformed = await platform.get('/participants/not-an-email');
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors).toEqual(['email: must be a valid e-mail address']);
    const body = customerBody();
    expect((await platform.post('/participants/customers/new', body)).status).toBe(201);
    const foreign = await stranger.get(`/participants/${String(body.email)}`);
    const unknown = await stranger.get('/participants/nobody.here@example.com');
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(foreign.body).toEqual(unknown.body);
  });
});
