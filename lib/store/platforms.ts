import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newParticipantCode } from './codes.js';
import { keys } from './keys.js';
import { readInteger } from './table/integers.js';
import { ALL } from './table/counters.js';
import { PARTICIPANT_ITEM_VERSION, PARTICIPANTS_LIST } from './participants.js';
import { transactWrite } from './table/transactions.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

interface Platform {
  platform_code: string;
  /** The platform's own participant (it holds the platform's accounts). Equal to the platform code. */
  participant_code: string;
  name: string;
  /** Spread applied to reference prices for this platform's quotes, in basis points. */
  spread_bps: string;
  created_at: number;
}

/** Only used to tell "the drawn code is taken" apart inside the create loop; never leaves this module. */
class PlatformCodeTakenError extends Error {
  override readonly name = 'PlatformCodeTakenError';
}

const MAX_CODE_ATTEMPTS = 5;

/**
 * Creates a platform and its own participant in one transaction (conflicts and throttling retried by
 * `transactWrite`). The codes are random; a collision with an existing code fails the transaction's
 * condition and we draw again.
 */
export async function createPlatform(
  ctx: Pick<AppContext, 'clock' | 'db' | 'tables' | 'logger' | 'retry'>,
  name: string,
  spreadBps = '0',
): Promise<Platform> {
  for (let attempt = 1; attempt <= MAX_CODE_ATTEMPTS; attempt++) {
    const code = newParticipantCode();
    const now = ctx.clock.nowMs();
    const platform: Platform = {
      platform_code: code,
      participant_code: code,
      name,
      spread_bps: spreadBps,
      created_at: now,
    };
    try {
      await transactWrite(ctx, [
        {
          item: {
            Put: {
              TableName: ctx.tables.main,
              Item: { ...keys.platform(code), type: 'platform', ...platform },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: () => new PlatformCodeTakenError(),
        },
        {
          item: {
            Put: {
              TableName: ctx.tables.main,
              Item: {
                ...keys.participant(code),
                gsi1pk: keys.participantsOfPlatform(code),
                gsi1sk: keys.participantSortKey(now, code),
                type: 'participant',
                participant_code: code,
                platform_code: code,
                kind: 'platform',
                status: 'approved',
                created_at: now,
                status_version: 0,
                item_version: PARTICIPANT_ITEM_VERSION,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          onConditionFailed: () => new PlatformCodeTakenError(),
          // The platform's own participant is the first record of its participants list.
          counts: [{ platformCode: code, list: PARTICIPANTS_LIST, bucket: ALL, delta: 1 }],
        },
      ]);
      return platform;
    } catch (error) {
      if (error instanceof PlatformCodeTakenError) continue;
      throw error;
    }
  }
  throw new Error('could not allocate a unique platform code');
}

export async function getPlatform(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
): Promise<Platform | undefined> {
  const out = await ctx.db.send(new GetCommand({ TableName: ctx.tables.main, Key: keys.platform(platformCode) }));
  if (!out.Item) return undefined;
  const item = out.Item;
  return {
    platform_code: item.platform_code,
    participant_code: item.participant_code,
    name: item.name,
    spread_bps: String(item.spread_bps),
    created_at: readInteger(item.created_at),
  };
}

/** Sets a platform's quote spread (ops). False when the platform doesn't exist; never creates one. */
export async function setPlatformSpread(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  spreadBps: string,
): Promise<boolean> {
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand({
        TableName: ctx.tables.main,
        Key: keys.platform(platformCode),
        UpdateExpression: 'SET spread_bps = :bps',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':bps': spreadBps },
      }),
    ),
  );
}
