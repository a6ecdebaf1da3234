import { FullBatchFailureError } from '@aws-lambda-powertools/batch';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { personalDataKeys } from '../../lib/domain/events.js';
import {
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  failedLongEnoughToDisable,
  judgeAttempt,
  nextAttemptDelayMs,
  parseRetrySchedule,
  retryAfterSeconds,
} from '../../lib/domain/webhook-delivery.js';
import { newWebhookSecret, signatureHeader } from '../../lib/domain/webhook-signing.js';
import { isRefusedAddress, webhookUrlProblems } from '../../lib/domain/webhook-url.js';
import type { AppContext } from '../../lib/context.js';
import { bindDeliveryWorker, bindDispatcher } from '../../lib/webhooks/handlers.js';
import { parseDeliveryMessage, type DeliveryQueue } from '../../lib/webhooks/queue.js';
import { dispatchRequestOf } from '../../lib/webhooks/stream-records.js';
import { record as sqsRecord } from '../support/sqs.js';

const STRICT = { allowPrivateAddresses: false, allowHttp: false };
const LOCAL = { allowPrivateAddresses: true, allowHttp: true };

describe('webhook URL rules', () => {
  it.each([
    [undefined, 'url: required'],
    ['', 'url: required'],
    ['/hooks', 'url: must be an absolute http(s) URL'],
    ['ftp://example.com/hook', 'url: must use https'],
    ['http://example.com/hook', 'url: must use https'],
    ['https://user:pw@example.com/hook', 'url: must not contain credentials'],
    [`https://example.com/${'a'.repeat(2048)}`, 'url: longer than 2048 characters'],
  ])('refuses %s', (url, problem) => {
    expect(webhookUrlProblems(url, STRICT)).toContain(problem);
  });

  it.each([
    'https://127.0.0.1/hook',
    'https://localhost/hook',
    'https://api.localhost./hook',
    'https://10.0.0.1/hook',
    'https://172.16.3.4/hook',
    'https://192.168.1.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hook',
    'https://[::1]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://[fe80::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:8.8.8.8]/hook',
    'https://0.0.0.0/hook',
    'https://2130706433/hook', // 127.0.0.1 as one decimal number
    'https://0177.0.0.1/hook', // 127.0.0.1 in octal
  ])('refuses the non-public address of %s without naming it', (url) => {
    const problems = webhookUrlProblems(url, STRICT);
    expect(problems).toEqual(['url: points to a private, loopback or otherwise non-public address']);
  });

  it('accepts public https URLs, and local ones when the policy allows them', () => {
    expect(webhookUrlProblems('https://hooks.example.com/in?x=1', STRICT)).toEqual([]);
    expect(webhookUrlProblems('https://8.8.8.8/in', STRICT)).toEqual([]);
    expect(webhookUrlProblems('http://127.0.0.1:4000/in', LOCAL)).toEqual([]);
    expect(webhookUrlProblems('http://localhost:4000/in', LOCAL)).toEqual([]);
    expect(webhookUrlProblems('ftp://127.0.0.1/in', LOCAL)).toEqual(['url: must use http or https']);
  });

  it('reports every problem at once', () => {
    expect(webhookUrlProblems('http://u:p@10.1.2.3/x', STRICT)).toHaveLength(3);
  });

  it('classifies resolved addresses: only public unicast passes', () => {
    for (const refused of [
      '127.0.0.1',
      '::1',
      '10.0.0.1',
      '169.254.169.254',
      '100.64.0.1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::',
      'garbage',
    ]) {
      expect(isRefusedAddress(refused), refused).toBe(true);
    }
    for (const allowed of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111'])
      expect(isRefusedAddress(allowed), allowed).toBe(false);
  });
});

describe('webhook signatures', () => {
  it('verify with the standardwebhooks library, for each secret during a rotation', () => {
    const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
    expect(oldSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const body = JSON.stringify({ id: 'evt_1', type: 'webhook.test' });
    const timestamp = Math.floor(Date.now() / 1000);
    const header = signatureHeader([newSecret, oldSecret], 'evt_1', timestamp, body);
    expect(header.split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) {
      const verified = new Webhook(secret).verify(body, {
        'webhook-id': 'evt_1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': header,
      });
      expect(verified).toEqual(JSON.parse(body));
    }
    expect(() =>
      new Webhook(newWebhookSecret()).verify(body, {
        'webhook-id': 'evt_1',
        'webhook-timestamp': String(timestamp),
        'webhook-signature': header,
      }),
    ).toThrow();
  });

  it('matches the library for any id and body (property)', () => {
    const secret = newWebhookSecret();
    const library = new Webhook(secret);
    fc.assert(
      fc.property(
        fc.stringMatching(/^evt_[0-9a-z]{1,30}$/),
        fc.string(),
        fc.integer({ min: 1_000_000_000, max: 4_000_000_000 }),
        (id, body, ts) => {
          expect(signatureHeader([secret], id, ts, body)).toBe(library.sign(id, new Date(ts * 1000), body));
        },
      ),
    );
  });

  it('refuses a secret too short to be a key', () => {
    expect(() => signatureHeader(['whsec_AAAA'], 'evt_1', 1, '{}')).toThrow(/24 bytes/);
  });
});

describe('webhook retries', () => {
  it('uses the design schedule unless WEBHOOK_RETRY_SCHEDULE_SECONDS overrides it', () => {
    expect(parseRetrySchedule(undefined)).toEqual([...DEFAULT_RETRY_SCHEDULE_SECONDS]);
    expect(parseRetrySchedule('1, 2,0.5')).toEqual([1, 2, 0.5]);
    expect(() => parseRetrySchedule('1,,2')).toThrow();
    expect(() => parseRetrySchedule('1,-2')).toThrow();
    expect(() => parseRetrySchedule('0')).toThrow();
  });

  it('jitters each step by at most 20 % and stops after the last', () => {
    const schedule = [5, 300];
    expect(nextAttemptDelayMs(schedule, 1, undefined, () => 0)).toBe(4000);
    expect(nextAttemptDelayMs(schedule, 1, undefined, () => 1)).toBe(6000);
    expect(nextAttemptDelayMs(schedule, 2, undefined, () => 0.5)).toBe(300_000);
    expect(nextAttemptDelayMs(schedule, 3, undefined)).toBeUndefined();
  });

  it('waits at least Retry-After, given in seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-25T10:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 10:01:00 GMT', now)).toBe(60);
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
    expect(retryAfterSeconds('99999999', now)).toBe(24 * 3600);
    expect(nextAttemptDelayMs([5], 1, 120, () => 0.5)).toBe(120_000);
  });

  it('judges answers: 2xx succeeds, 410 is gone, redirects and errors fail, 429/503 carry Retry-After', () => {
    const now = Date.now();
    expect(judgeAttempt({ kind: 'response', statusCode: 204 }, now)).toEqual({ outcome: 'succeeded' });
    expect(judgeAttempt({ kind: 'response', statusCode: 410 }, now)).toEqual({ outcome: 'gone' });
    expect(judgeAttempt({ kind: 'response', statusCode: 302 }, now)).toEqual({ outcome: 'failed' });
    expect(judgeAttempt({ kind: 'response', statusCode: 500, retryAfter: '9' }, now)).toEqual({ outcome: 'failed' });
    expect(judgeAttempt({ kind: 'response', statusCode: 429, retryAfter: '9' }, now)).toEqual({
      outcome: 'failed',
      retryAfterSeconds: 9,
    });
    expect(judgeAttempt({ kind: 'response', statusCode: 503, retryAfter: '3' }, now)).toEqual({
      outcome: 'failed',
      retryAfterSeconds: 3,
    });
    expect(judgeAttempt({ kind: 'error', error: 'timeout' }, now)).toEqual({ outcome: 'failed' });
  });

  it('disables an endpoint only after five days of nothing but failures', () => {
    const day = 24 * 3600 * 1000;
    expect(failedLongEnoughToDisable(null, 10 * day)).toBe(false);
    expect(failedLongEnoughToDisable(0, 5 * day - 1)).toBe(false);
    expect(failedLongEnoughToDisable(0, 5 * day)).toBe(true);
  });
});

describe('personal data in events', () => {
  it('finds personal fields at any depth', () => {
    expect(personalDataKeys({ a: { email: 'x' }, b: [{ first_name: 'y' }], balance: '1' }).sort()).toEqual([
      'email',
      'first_name',
    ]);
    expect(personalDataKeys({ participant_code: 'X', status: 'locked' })).toEqual([]);
  });
});

describe('stream records of events', () => {
  const record = (image: Record<string, { S: string }>) => ({
    eventID: '1',
    eventName: 'INSERT' as const,
    dynamodb: { NewImage: image },
  });
  const body = JSON.stringify({ id: 'evt_1', type: 'account_balance.changed', platform_code: 'P1' });

  it('take the event id from the key and the type from the body', () => {
    expect(
      dispatchRequestOf(
        record({
          pk: { S: 'EVENT#evt_1' },
          sk: { S: 'EVENT' },
          type: { S: 'event' },
          platform_code: { S: 'P1' },
          body: { S: body },
        }),
      ),
    ).toEqual({
      eventId: 'evt_1',
      platformCode: 'P1',
      eventType: 'account_balance.changed',
      redelivery: false,
      onlyEndpointId: undefined,
    });
  });

  it('still read items written with the id and type as attributes, and redelivery requests', () => {
    const old = {
      pk: { S: 'EVENT#evt_1' },
      sk: { S: 'EVENT' },
      type: { S: 'event' },
      event_id: { S: 'evt_1' },
      event_type: { S: 'trade.status_changed' },
      platform_code: { S: 'P1' },
    };
    expect(dispatchRequestOf(record(old))).toMatchObject({
      eventId: 'evt_1',
      eventType: 'trade.status_changed',
      redelivery: false,
    });
    const redelivery = {
      pk: { S: 'EVENT#evt_1' },
      sk: { S: 'REDELIVERY#1' },
      type: { S: 'event_redelivery' },
      event_id: { S: 'evt_1' },
      event_type: { S: 'trade.status_changed' },
      platform_code: { S: 'P1' },
      only_endpoint_id: { S: 'we_1' },
    };
    expect(dispatchRequestOf(record(redelivery))).toEqual({
      eventId: 'evt_1',
      platformCode: 'P1',
      eventType: 'trade.status_changed',
      redelivery: true,
      onlyEndpointId: 'we_1',
    });
  });

  it('refuse a record that is not an event item, naming what is wrong', () => {
    const image = { pk: { S: 'EVENT#evt_1' }, sk: { S: 'EVENT' }, type: { S: 'event' }, body: { S: body } };
    expect(() => dispatchRequestOf(record(image))).toThrow(
      'stream record 1: not an event item (dynamodb.NewImage.platform_code: must be { S: text })',
    );
    expect(() => dispatchRequestOf(record({ ...image, platform_code: { S: '' } }))).toThrow(
      /\(dynamodb.NewImage.platform_code.S: must be a non-empty string\)$/,
    );
    const { pk: _, ...keyless } = { ...image, platform_code: { S: 'P1' } };
    expect(() => dispatchRequestOf(record(keyless))).toThrow(
      /\(dynamodb.NewImage.pk.S: no event id: neither an event_id nor an event key\)$/,
    );
    expect(() => dispatchRequestOf(record({ ...image, platform_code: { S: 'P1' }, body: { S: '{' } }))).toThrow(
      /\(dynamodb.NewImage.body.S: not JSON\)$/,
    );
    expect(() =>
      dispatchRequestOf(record({ ...image, platform_code: { S: 'P1' }, body: { S: '{"id":"evt_1"}' } })),
    ).toThrow(/\(dynamodb.NewImage.body.S: names no event type \(a non-empty string\)\)$/);
    expect(() => dispatchRequestOf({ eventID: '2', eventName: 'INSERT' })).toThrow(
      'stream record 2: not an event item (dynamodb: must be an object)',
    );
  });

  it('a record that is not an event item is reported failed, so the stream retries it', async () => {
    const queue: DeliveryQueue = { send: async () => undefined };
    const streamRecord = (sequence: string, eventName: 'INSERT' | 'MODIFY') => ({
      eventID: sequence,
      eventName,
      eventSource: 'aws:dynamodb',
      dynamodb: {
        SequenceNumber: sequence,
        // No platform: not an event item.
        NewImage: { pk: { S: 'EVENT#evt_1' }, sk: { S: 'EVENT' }, type: { S: 'event' }, body: { S: body } },
      },
    });
    // No table: the insert is refused before anything is read, the update is not the dispatcher's.
    const response = await bindDispatcher(
      {} as AppContext,
      queue,
    )({
      Records: [streamRecord('100', 'INSERT'), streamRecord('101', 'MODIFY')],
    });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: '100' }]);
  });
});

describe('delivery queue messages', () => {
  it('name the delivery to try', () => {
    expect(parseDeliveryMessage('{"eventId":"evt_1","endpointId":"we_1","extra":1}')).toEqual({
      eventId: 'evt_1',
      endpointId: 'we_1',
    });
  });

  it.each([
    ['not json', 'not a delivery message (body: not JSON)'],
    ['null', 'not a delivery message (body: must be an object)'],
    ['{"eventId":"evt_1"}', 'not a delivery message (endpointId: must be a non-empty string)'],
    [
      `{"eventId":7,"endpointId":"${'w'.repeat(101)}"}`,
      'not a delivery message (eventId: must be a non-empty string; endpointId: at most 100 characters)',
    ],
  ])('refuse %s, naming what is wrong', (body, message) => {
    expect(() => parseDeliveryMessage(body)).toThrow(message);
  });

  it('a malformed message fails its record, so SQS retries it and then dead-letters it', async () => {
    // No table: the malformed message is refused before anything is read.
    const worker = bindDeliveryWorker({} as AppContext, { queue: { send: async () => undefined } });
    const failure = await worker({ Records: [sqsRecord('m1', 'g', '{"eventId":"evt_1"}')] }).catch(
      (error: unknown) => error,
    );
    // Its only record failed: the batch fails whole (Powertools' FullBatchFailureError), with the record's error.
    expect(failure).toBeInstanceOf(FullBatchFailureError);
    expect((failure as FullBatchFailureError).recordErrors.map((error) => error.message)).toEqual([
      'not a delivery message (endpointId: must be a non-empty string)',
    ]);
  });
});
