import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newParticipantCode } from './codes.js';
import { platformEntity, type Platform } from './entities/platform.js';
import { newParticipantItem } from './participants.js';
import { transactWrite } from './table/transactions.js';
import type { AppContext } from '../context.js';
import { writtenUnlessConditionFailed } from './table/conditional.js';

export type { Platform };

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
          item: platformEntity.put(ctx.tables, platform, { condition: 'attribute_not_exists(pk)' }),
          onConditionFailed: () => new PlatformCodeTakenError(),
        },
        // The platform's own participant is the first record of its participants list.
        newParticipantItem(
          ctx,
          { participant_code: code, platform_code: code, kind: 'platform', created_at: now },
          () => new PlatformCodeTakenError(),
        ),
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
  const out = await ctx.db.send(new GetCommand(platformEntity.get(ctx.tables, { platform_code: platformCode })));
  return out.Item ? platformEntity.parse(out.Item) : undefined;
}

/** Sets a platform's quote spread (ops). False when the platform doesn't exist; never creates one. */
export async function setPlatformSpread(
  ctx: Pick<AppContext, 'db' | 'tables'>,
  platformCode: string,
  spreadBps: string,
): Promise<boolean> {
  return writtenUnlessConditionFailed(
    ctx.db.send(
      new UpdateCommand(
        platformEntity.update(
          ctx.tables,
          { platform_code: platformCode },
          { update: 'SET spread_bps = :bps', condition: 'attribute_exists(pk)', values: { ':bps': spreadBps } },
        ).Update,
      ),
    ),
  );
}
