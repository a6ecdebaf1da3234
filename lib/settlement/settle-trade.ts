import { assert } from '../domain/assert.js';
import { InsufficientFundsError } from '../domain/errors.js';
import { SYSTEM_PARTICIPANTS, systemAccount, type AccountRef, type Leg, type Movement } from '../domain/ledger.js';
import { Money } from '../domain/money.js';
import {
  decideAttempt,
  isPastDeadline,
  obligations,
  settlementDeadlineMs,
  type AttemptDecision,
  type DeliveryBalances,
  type Obligation,
  type PartyDecision,
  type SettlementState,
} from '../domain/settlement.js';
import { balanceOf } from '../store/ledger.js';
import { bookMovement } from '../ledger/engine.js';
import { tradeUpdateItems, TradeStateChangedError, updateTrade } from '../store/trades.js';
import { type Trade, type TradeParty } from '../domain/trade.js';
import type { SettlementTaskResult } from '../domain/workflow-io.js';
import { recordTradeDefaulted, recordTradeSettled } from '../observability/metrics.js';
import type { AppContext } from '../context.js';
import { closed, now, readTrade } from './trade-task.js';

/**
 * The settlement tasks of the workflow that may book (activation, which never does, is in activate-trade.ts).
 * Each reads the trade, decides with the pure rules of `lib/domain/settlement.ts`, and writes only if the trade is still in the state it read, so a task
 * run twice, or a second execution of the same trade, changes nothing the first one already did.
 *
 * Non-settling parties (`settling: false`, and every `Anonymous` party) settle their side elsewhere. We never
 * touch their accounts: the settling party's counter-legs are booked against the external boundary's
 * `external_settlement` account, which stands for whoever settles the other side, so balances still sum to
 * zero per asset. Such a party has no obligation here and counts as having met it.
 */

/** Where legs of a side we don't settle are booked. */
const EXTERNAL_SETTLEMENT_GROUP = 'external_settlement';

function deadlineOf(ctx: AppContext, trade: Trade): number {
  return settlementDeadlineMs(trade, ctx.config.SPOT_SETTLEMENT_DEADLINE_SECONDS * 1000);
}

/**
 * A task whose update lost (updateTrade false): the trade has left the open states, so it is terminated, and
 * a terminated trade is settled with its settlement movement or defaulted without one. Which of the two the
 * workflow reports is what the ledger holds, so a broken state condition shows here, not in the books later.
 */
async function closedAfterLostUpdate(ctx: AppContext, tradeId: string): Promise<SettlementTaskResult> {
  const current = await readTrade(ctx, tradeId);
  assert(current.trade_state === 'terminated', () => `trade ${tradeId}: update lost, yet ${current.trade_state}`);
  assert(
    current.settlement_state === 'settled' || current.settlement_state === 'defaulted',
    () => `trade ${tradeId}: terminated as ${current.settlement_state}`,
  );
  return closed(current);
}

/**
 * One settlement session. All settling parties covered -> both legs move and the trade terminates as
 * settled, in one transaction. Otherwise the per-party states are recorded and the workflow is told
 * whether the deadline has passed; defaulting is the Default task's job, so the console shows it as a step.
 */
export async function attemptSettlement(ctx: AppContext, tradeId: string): Promise<SettlementTaskResult> {
  const trade = await readTrade(ctx, tradeId);
  if (trade.trade_state === 'terminated') return closed(trade);
  const at = now(ctx);
  const pastDeadline = isPastDeadline(at, deadlineOf(ctx, trade));
  // An infinite deadline: this task never defaults, it only reports `past_deadline`.
  const decision = decideAttempt({
    trade,
    balances: await deliveryBalances(ctx, trade),
    nowMs: at,
    deadlineMs: Infinity,
  });
  const result = await settleOrRecord(ctx, trade, decision, at);
  return result.outcome === 'outstanding' ? { ...result, past_deadline: pastDeadline } : result;
}

/**
 * Past the deadline: `terminated` / `defaulted`, balances untouched; each party that had its delivery ready
 * becomes `counterparty_defaulted`, the others `defaulted`. Trusts the workflow's "past deadline" choice
 * rather than re-checking the clock: a second clock disagreeing by a few milliseconds must not strand a
 * trade whose execution is about to end. A trade that became fully covered since the last attempt is
 * settled instead: a trade whose obligations are all met is never defaulted.
 */
export async function defaultTrade(ctx: AppContext, tradeId: string): Promise<SettlementTaskResult> {
  const trade = await readTrade(ctx, tradeId);
  if (trade.trade_state === 'terminated') return closed(trade);
  const at = now(ctx);
  const decision = decideAttempt({ trade, balances: await deliveryBalances(ctx, trade), nowMs: at, deadlineMs: at });
  if (decision.kind === 'settle') {
    const settled = await settleOrRecord(ctx, trade, decision, at);
    // A spend raced the settlement and the trade was left open. This is the workflow's last step, so ending
    // here would strand the trade: fail instead, and the task's retry decides again on fresh balances.
    if (settled.outcome === 'outstanding')
      throw new Error(`trade ${tradeId}: funds moved while settling past the deadline; retrying`);
    return settled;
  }

  const parties = partiesAfter(trade, decision.parties, at);
  const moved = await updateTrade(
    ctx,
    trade,
    ['accepted', 'active'],
    { trade_state: 'terminated', settlement_state: 'defaulted', defaulted_timestamp: at, parties },
    at,
  );
  if (!moved) return closedAfterLostUpdate(ctx, tradeId);
  recordTradeDefaulted(ctx.metrics, tradeId);
  return { outcome: 'defaulted', settlement_state: 'defaulted', defaulted_timestamp: at };
}

// ---------------------------------------------------------------------------------------------------------

/** What each settling side holds of the asset it must deliver, read strongly consistently. */
async function deliveryBalances(ctx: AppContext, trade: Trade): Promise<DeliveryBalances> {
  const balances: DeliveryBalances = {};
  await Promise.all(
    obligations(trade).map(async (obligation) => {
      balances[obligation.side] = await balanceOf(ctx, deliveryAccount(trade, obligation));
    }),
  );
  return balances;
}

function partyAccount(trade: Trade, index: number, asset: string): { account: AccountRef; platform_code: string } {
  const party = trade.parties[index] as TradeParty;
  // Only settling, named parties have obligations, and reporting stored their account group.
  if (!party.account_group) throw new Error(`trade ${trade.trade_id}: settling party ${index} has no account group`);
  return {
    account: {
      participant_code: party.participant_code,
      account_group: party.account_group,
      account_label: party.account_label,
      asset,
    },
    platform_code: party.account_group,
  };
}

function deliveryAccount(trade: Trade, obligation: Obligation): AccountRef {
  return partyAccount(trade, obligation.party, obligation.deliver_asset).account;
}

/**
 * The settlement movement: each settling party delivers what its counterparty receives and receives what it
 * bought. When the counterparty settles too, its own obligation supplies the matching legs; when it doesn't,
 * the external boundary stands in for it.
 */
function settlementMovement(trade: Trade): Movement {
  const owed = obligations(trade);
  const legs: Leg[] = [];
  const external = (asset: string) => ({
    account: systemAccount(SYSTEM_PARTICIPANTS.externalBoundary, EXTERNAL_SETTLEMENT_GROUP, asset),
    platform_code: null,
  });
  for (const obligation of owed) {
    const deliver = new Money(obligation.deliver_amount);
    const receive = new Money(obligation.receive_amount);
    const from = partyAccount(trade, obligation.party, obligation.deliver_asset);
    const to = partyAccount(trade, obligation.party, obligation.receive_asset);
    legs.push({ ...from, amount: deliver.negated() }, { ...to, amount: receive });
    const counterpartySettles = owed.some((other) => other.party !== obligation.party);
    if (!counterpartySettles) {
      legs.push(
        { ...external(obligation.deliver_asset), amount: deliver },
        { ...external(obligation.receive_asset), amount: receive.negated() },
      );
    }
  }
  assertSettlementLegs(trade, legs);
  // One settlement per trade: the id is derived from the trade, so the movement record's own
  // attribute_not_exists condition backs up the trade-state condition.
  return { movement_id: `settlement-${trade.trade_id}`, type: 'settlement', reference: trade.trade_id, legs };
}

/**
 * The settlement's postconditions, before it is written: each asset's legs sum to zero, and what each settling
 * party gives and gets is exactly the trade's amount of each party's asset (the buyer gets the seller's
 * asset at the seller's amount and the reverse), nothing rounded or netted away.
 */
function assertSettlementLegs(trade: Trade, legs: readonly Leg[]): void {
  const sums = new Map<string, Money>();
  for (const leg of legs) sums.set(leg.account.asset, (sums.get(leg.account.asset) ?? new Money(0)).plus(leg.amount));
  for (const [asset, sum] of sums)
    assert(sum.isZero(), () => `trade ${trade.trade_id}: settlement legs of ${asset} sum to ${sum.toFixed()}`);
  for (const [index, party] of trade.parties.entries()) {
    if (!party.settling || party.participant_code === 'Anonymous') continue;
    const counterparty = trade.parties[1 - index]!;
    const own = (asset: string) =>
      legs
        .filter((leg) => leg.account.participant_code === party.participant_code && leg.account.asset === asset)
        .reduce((sum, leg) => sum.plus(leg.amount), new Money(0));
    if (party.participant_code === counterparty.participant_code) continue;
    assert(
      own(party.asset).eq(party.amount) && own(counterparty.asset).eq(new Money(counterparty.amount).negated()),
      () =>
        `trade ${trade.trade_id}: party ${index} (${party.participant_code}) gets ${own(party.asset).toFixed()} ${party.asset} and pays ${own(counterparty.asset).negated().toFixed()} ${counterparty.asset}, the trade says ${party.amount} and ${counterparty.amount}`,
    );
  }
}

function partiesAfter(trade: Trade, decisions: readonly PartyDecision[], at: number): TradeParty[] {
  return trade.parties.map((party, index) => {
    const state = (decisions.find((d) => d.party === index)?.settlement_state ??
      party.settlement_state) as SettlementState;
    return {
      ...party,
      settlement_state: state,
      // Each timestamp holds the most recent time its state was reached; a settled party's obligations
      // were met at the moment it settled.
      obligations_outstanding_timestamp:
        state === 'obligations_outstanding' ? at : party.obligations_outstanding_timestamp,
      current_obligations_met_timestamp:
        state === 'current_obligations_met' || state === 'settled' ? at : party.current_obligations_met_timestamp,
    };
  });
}

/**
 * Applies a settle or outstanding decision. A settle is one transaction: the trade update (conditioned on the
 * trade still being open) first, so a repeat is recognised by its own condition, then the movement with its
 * `balance >= amount` conditions. A spend that landed between our balance read and the write fails those
 * conditions: the obligations were not met this session after all, and the trade waits for the next one.
 */
async function settleOrRecord(
  ctx: AppContext,
  trade: Trade,
  decision: AttemptDecision,
  at: number,
): Promise<SettlementTaskResult> {
  if (decision.kind === 'settle') {
    const update = tradeUpdateItems(
      ctx,
      trade,
      ['accepted', 'active'],
      {
        trade_state: 'terminated',
        settlement_state: 'settled',
        settled_timestamp: at,
        current_obligations_met_timestamp: at,
        parties: partiesAfter(trade, decision.parties, at),
      },
      at,
    );
    try {
      await bookMovement(ctx, settlementMovement(trade), update, at);
      recordTradeSettled(ctx.metrics, trade.trade_id);
      return { outcome: 'settled', settlement_state: 'settled', settled_timestamp: at };
    } catch (error) {
      if (error instanceof TradeStateChangedError) {
        // The update is conditioned on the exact state read (the counts by state move from it): a trade
        // activated meanwhile is still open and settles from its new state; a terminated one is done.
        const current = await readTrade(ctx, trade.trade_id);
        return current.trade_state === 'terminated' ? closed(current) : settleOrRecord(ctx, current, decision, at);
      }
      if (!(error instanceof InsufficientFundsError)) throw error;
      const fresh = decideAttempt({
        trade,
        balances: await deliveryBalances(ctx, trade),
        nowMs: at,
        deadlineMs: Infinity,
      });
      // Funds that are back already (a spend and a refill in between) still settle only next session.
      const parties =
        fresh.kind === 'settle'
          ? fresh.parties.map((p) => ({ ...p, settlement_state: 'current_obligations_met' as const }))
          : fresh.parties;
      return recordOutstanding(
        ctx,
        trade,
        parties,
        fresh.kind === 'settle' ? 'current_obligations_met' : 'obligations_outstanding',
        at,
      );
    }
  }
  return recordOutstanding(ctx, trade, decision.parties, 'obligations_outstanding', at);
}

async function recordOutstanding(
  ctx: AppContext,
  trade: Trade,
  decisions: readonly PartyDecision[],
  state: 'obligations_outstanding' | 'current_obligations_met',
  at: number,
): Promise<SettlementTaskResult> {
  const moved = await updateTrade(
    ctx,
    trade,
    ['accepted', 'active'],
    {
      trade_state: 'active',
      settlement_state: state,
      ...(state === 'obligations_outstanding'
        ? { obligations_outstanding_timestamp: at }
        : { current_obligations_met_timestamp: at }),
      parties: partiesAfter(trade, decisions, at),
    },
    at,
  );
  if (!moved) return closedAfterLostUpdate(ctx, trade.trade_id);
  return {
    outcome: 'outstanding',
    settlement_state: state,
    parties: decisions.map((d) => ({ side: d.side, settlement_state: d.settlement_state, shortfall: d.shortfall })),
  };
}
