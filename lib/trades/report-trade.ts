import { ValidationError } from '../domain/errors.js';
import { ANONYMOUS_PARTICIPANT, validateTradeReport } from '../domain/trade-report.js';
import type { AuthContext } from '../domain/caller.js';
import { startSettlement } from '../settlement/start-settlement.js';
import { newId } from '../store/codes.js';
import { getParticipants, type Participant } from '../store/participants.js';
import { hasRelationship } from '../store/relationships.js';
import { clientTradeIdClaim, tradeItems } from '../store/trades.js';
import { acceptedTrade } from '../domain/trade.js';
import { transactWrite } from '../store/table/transactions.js';
import { NO_REQUEST_CLAIM, type RequestClaim } from '../store/windows.js';
import { type TradeView } from '../domain/trade.js';
import { tradeView } from '../domain/trade.js';
import type { AppContext } from '../context.js';
import { recordTradesAccepted } from '../observability/metrics.js';

/**
 * A participant the platform may name in a trade it reports: itself, its customers, or a participant it
 * holds `submits_platform_transfers_for` for. Settlement moves the parties' money, so naming anyone else
 * would let a platform spend another platform's customer's balance; such a code reads as unknown, which
 * also keeps another platform's participants from being discovered. Only approved participants trade.
 */
async function participantForTrades(
  ctx: AppContext,
  platformCode: string,
  participant: Participant | undefined,
): Promise<Participant | undefined> {
  if (!participant || participant.status !== 'approved') return undefined;
  if (participant.platform_code === platformCode) return participant;
  return (await hasRelationship(ctx, platformCode, 'submits_platform_transfers_for', participant.participant_code))
    ? participant
    : undefined;
}

/**
 * `POST /trades`: validates the report (every spec rule, all issues at once), checks the named parties,
 * stores the trade `accepted` together with its 72-hour `client_trade_id` claim in one transaction, then
 * starts its settlement execution.
 */
export async function reportTrade(
  ctx: AppContext,
  body: unknown,
  auth: AuthContext,
  claim: RequestClaim = NO_REQUEST_CLAIM,
): Promise<TradeView> {
  const nowMs = ctx.clock.nowMs();
  const validated = validateTradeReport(body, {
    platformCode: auth.platformCode,
    platformParticipantCode: auth.participantCode,
    nowMs,
  });
  if (!validated.ok) throw new ValidationError(validated.errors);
  const report = validated.value;

  const errors: string[] = [];
  // Every named participant in one BatchGetItem: one round trip instead of one per party.
  const named = report.parties.map((party) => party.participant_code).filter((code) => code !== ANONYMOUS_PARTICIPANT);
  const participants = await getParticipants(
    ctx,
    report.reporting_party === null ? named : [...named, report.reporting_party],
  );
  const [first, second, reporting] = await Promise.all([
    ...report.parties.map((party) =>
      party.participant_code === ANONYMOUS_PARTICIPANT
        ? Promise.resolve(null)
        : participantForTrades(ctx, auth.platformCode, participants.get(party.participant_code)),
    ),
    report.reporting_party === null
      ? Promise.resolve(null)
      : participantForTrades(ctx, auth.platformCode, participants.get(report.reporting_party)),
  ]);
  [first, second].forEach((participant, index) => {
    const code = report.parties[index]!.participant_code;
    if (participant === undefined)
      errors.push(
        `parties[${index}].participant_code: no participant '${code}' that this platform may report trades for`,
      );
  });
  if (reporting === undefined)
    errors.push(
      `reporting_party: no participant '${report.reporting_party}' that this platform has a relationship with`,
    );
  if (errors.length > 0) throw new ValidationError(errors);

  const trade = acceptedTrade(report, {
    tradeId: newId(),
    nowMs,
    accountGroups: [first?.platform_code ?? null, second?.platform_code ?? null],
  });
  const view = tradeView(trade);
  // The request's claim stores this answer with the trade: a retry after a crash here gets the trade, not a
  // 409 on its own client_trade_id (the settlement not started yet is the open-trades sweep's to start).
  await transactWrite(ctx, [...claim(view), ...tradeItems(ctx, trade), clientTradeIdClaim(ctx, trade, nowMs)]);
  recordTradesAccepted(ctx.metrics, 'reported', 1, trade.trade_id);

  try {
    await startSettlement(ctx, trade);
  } catch (error) {
    // The trade is stored and the client must hear so (a retry would only hit its own client_trade_id).
    // It is open, so the sweep of open trades (locally: `npm start` resuming them) starts it later.
    ctx.logger.error('settlement execution not started; left for the open-trades sweep', {
      trade_id: trade.trade_id,
      error: (error as Error).message,
    });
  }
  return view;
}
