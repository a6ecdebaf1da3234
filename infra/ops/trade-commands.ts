import {
  ExecutionDoesNotExist,
  GetExecutionHistoryCommand,
  type HistoryEvent,
  type SFNClient,
} from '@aws-sdk/client-sfn';
import type { AppContext } from '../../lib/context.js';
import { executionNameOf, legAt } from '../../lib/domain/settlement-schedule.js';
import { executionArnOf, StepFunctionsWorkflow } from '../../lib/runtime/step-functions-workflow.js';
import { settlementHistory, type SettlementEvent } from '../../lib/store/settlement-history.js';
import { getTrade } from '../../lib/store/trades.js';
import { type Trade } from '../../lib/domain/trade.js';
import { SETTLEMENT_STATE_NAMES } from '../settlement-workflow.js';
import { required, UsageError, type Commands } from './command.js';

/**
 * Trade operations. `trade history` is the local counterpart of the Step Functions console's execution
 * view: every state the trade's settlement executions went through, when, and with what outcome, beside the
 * trade's current states. Locally the runner's history comes from the table; with STATE_MACHINE_ARN set
 * (deployed), it comes from Step Functions. A settlement longer than one execution runs in legs (the trade
 * id, then `<trade_id>-2`, ...): every leg is listed, in order.
 */

export interface Transition {
  state: string;
  state_type: string | null;
  entered_at: string;
  exited_at: string | null;
  /** Task states: the task's outcome (settled, outstanding, defaulted, terminated). */
  outcome: string | null;
  past_deadline: boolean | null;
  /** Failures and retries while in the state. */
  errors: string[];
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/** Pairs each StateEntered with the exit (or failure) that followed it. */
export function transitionsOf(events: readonly SettlementEvent[]): Transition[] {
  const transitions: Transition[] = [];
  let open: Transition | undefined;
  for (const event of events) {
    if (event.type === 'StateEntered' && event.state) {
      open = {
        state: event.state,
        state_type: event.state_type,
        entered_at: iso(event.at) as string,
        exited_at: null,
        outcome: null,
        past_deadline: null,
        errors: [],
      };
      transitions.push(open);
    } else if (open && event.state === open.state) {
      if (event.error) open.errors.push(`${event.type}: ${event.error}`);
      if (event.type === 'StateExited') {
        open.exited_at = iso(event.at);
        open.outcome = event.outcome;
        open.past_deadline = event.past_deadline;
        open = undefined;
      }
    }
  }
  return transitions;
}

function tradeStates(trade: Trade) {
  return {
    trade_id: trade.trade_id,
    client_trade_id: trade.client_trade_id,
    platform_code: trade.platform_code,
    symbol: trade.symbol,
    product_type: trade.product_type,
    trade_state: trade.trade_state,
    settlement_state: trade.settlement_state,
    accepted_at: iso(trade.accepted_timestamp),
    settlement_at: iso(trade.settlement_timestamp),
    expiry_at: iso(trade.expiry_timestamp),
    obligations_outstanding_at: iso(trade.obligations_outstanding_timestamp),
    current_obligations_met_at: iso(trade.current_obligations_met_timestamp),
    settled_at: iso(trade.settled_timestamp),
    defaulted_at: iso(trade.defaulted_timestamp),
    last_update_at: iso(trade.last_update),
    parties: trade.parties.map((party, index) => ({
      side: party.side,
      participant_code: party.participant_code,
      settling: party.settling,
      // Each side delivers what the other receives.
      delivers: `${trade.parties[1 - index]!.amount} ${trade.parties[1 - index]!.asset}`,
      receives: `${party.amount} ${party.asset}`,
      settlement_state: party.settlement_state,
      obligations_outstanding_at: iso(party.obligations_outstanding_timestamp),
      current_obligations_met_at: iso(party.current_obligations_met_timestamp),
    })),
  };
}

async function localExecutions(ctx: AppContext, tradeId: string) {
  const { executions } = await settlementHistory(ctx, tradeId);
  return executions.map((execution) => ({
    execution_id: execution.execution_id,
    execution_name: execution.execution_name,
    status: execution.status,
    started_at: iso(execution.started_at),
    stopped_at: iso(execution.stopped_at),
    error: execution.error,
    state_transitions: execution.events.filter((event) => event.type === 'StateEntered').length,
    transitions: transitionsOf(execution.events),
  }));
}

/**
 * Step Functions' history of every leg of the trade's settlement, in leg order, in the same shape. Legs are
 * slices of time from acceptance, so the legs that can exist are those up to the one the trade was last
 * written in (or now, while it is open); one never started (the sweep started a later one) is skipped.
 */
async function awsExecutions(ctx: AppContext, client: SFNClient, stateMachineArn: string, trade: Trade) {
  const until = trade.trade_state === 'terminated' ? trade.last_update : ctx.clock.nowMs();
  const lastLeg = legAt(trade, until, ctx.config.SETTLEMENT_LEG_SECONDS) + 1;
  const legs = [];
  for (let leg = 1; leg <= lastLeg; leg++) {
    const history = await awsExecution(client, stateMachineArn, executionNameOf(trade.trade_id, leg));
    if (history) legs.push(history);
  }
  return legs;
}

/** Where each task state puts its result in the execution state (the definition's ResultPath). */
const RESULT_KEY_OF_STATE: Record<string, string> = {
  [SETTLEMENT_STATE_NAMES.activateTrade]: 'activation',
  [SETTLEMENT_STATE_NAMES.attemptSettlement]: 'attempt',
  [SETTLEMENT_STATE_NAMES.defaultTrade]: 'default',
  [SETTLEMENT_STATE_NAMES.continueInNextExecution]: 'continuation',
};

async function awsExecution(client: SFNClient, stateMachineArn: string, name: string) {
  const executionArn = executionArnOf(stateMachineArn, name);
  const events: HistoryEvent[] = [];
  let nextToken: string | undefined;
  do {
    let page;
    try {
      page = await client.send(new GetExecutionHistoryCommand({ executionArn, nextToken, maxResults: 1000 }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return undefined;
      throw error;
    }
    events.push(...(page.events ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  let current: string | null = null;
  const converted: SettlementEvent[] = events.map((event, index) => {
    const entered = event.stateEnteredEventDetails;
    const exited = event.stateExitedEventDetails;
    const type = entered ? 'StateEntered' : exited ? 'StateExited' : (event.type ?? 'unknown');
    if (entered) current = entered.name ?? null;
    const output = exited?.output
      ? (JSON.parse(exited.output) as Record<string, Record<string, unknown> | undefined>)
      : undefined;
    const key = exited?.name ? RESULT_KEY_OF_STATE[exited.name] : undefined;
    const result = output && key ? output[key] : undefined;
    const failure =
      event.lambdaFunctionFailedEventDetails ?? event.taskFailedEventDetails ?? event.executionFailedEventDetails;
    return {
      sequence: index + 1,
      type,
      state: entered?.name ?? exited?.name ?? current,
      state_type: null,
      at: event.timestamp?.getTime() ?? 0,
      outcome: exited && typeof result?.outcome === 'string' ? result.outcome : null,
      past_deadline: exited && typeof result?.past_deadline === 'boolean' ? result.past_deadline : null,
      error: failure ? `${failure.error ?? ''}: ${failure.cause ?? ''}` : null,
    };
  });
  return { execution_id: executionArn, execution_name: name, transitions: transitionsOf(converted) };
}

export const tradeCommands: Commands = {
  'trade history': {
    usage: 'trade history --trade-id ID',
    options: { 'trade-id': { type: 'string', required: true } },
    run: async (flags, ctx) => {
      const tradeId = required(flags, 'trade-id');
      const trade = await getTrade(ctx, tradeId, { consistent: true });
      if (!trade) throw new UsageError(`unknown trade ${tradeId}`);
      const { workflow } = ctx;
      const executions =
        workflow instanceof StepFunctionsWorkflow
          ? await awsExecutions(ctx, workflow.client, workflow.stateMachineArn, trade)
          : await localExecutions(ctx, tradeId);
      return { trade: tradeStates(trade), executions };
    },
  },
};
