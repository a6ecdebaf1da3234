import { Prng } from './prng.js';

/**
 * The operations of a run, drawn from the seed before anything runs (so a seed always gives the same list).
 * Parties are indexes into the world the driver builds (platform p, its customer c); what an operation acts
 * on that only exists once earlier operations ran (a payment, a withdrawal, a request to replay) is a draw
 * (`pick`) the driver maps onto what exists when the operation starts.
 */

/** A platform's own account (customer null) or one of its customers'. */
export interface Party {
  customer: number | null;
  label: string;
}

export type Operation =
  | {
      kind: 'transfer';
      platform: number;
      from: Party;
      to: Party;
      asset: 'USD' | 'BTC';
      amount: string;
      clientTransferId: string | null;
      requestId: string;
    }
  | {
      kind: 'execute';
      platform: number;
      customer: number;
      underlying: 'BTC' | 'ETH' | 'LTC';
      total: string;
      ach: boolean;
      externalAccountId: string;
      requestId: string;
    }
  | { kind: 'reward'; platform: number; customer: number; underlying: 'ETH' | 'SOL'; total: string; requestId: string }
  | { kind: 'award_fund'; platform: number; quantity: string; requestId: string }
  | { kind: 'award_distribute'; platform: number; customers: number[]; quantity: string; requestId: string }
  | {
      kind: 'trade_report';
      platform: number;
      buyer: number;
      seller: number;
      quantity: string;
      funded: boolean;
      clientTradeId: string;
      requestId: string;
    }
  | { kind: 'convert_withdraw'; platform: number; quantity: string; requestId: string }
  | { kind: 'bank_event'; pick: number; move: number }
  | { kind: 'custody_event'; pick: number; confirm: boolean; hash: string }
  | {
      kind: 'deposit';
      platform: number;
      customer: number | null;
      asset: 'USD' | 'BTC';
      amount: string;
      label: string | null;
      reference: string;
      repeat: number | null;
    }
  | { kind: 'replay'; pick: number; changed: boolean }
  /** The captured signed bytes of an earlier request sent again, with its own, another or no X-Request-Id. */
  | { kind: 'resend'; pick: number; requestId: 'same' | 'other' | 'none'; otherId: string }
  /** An earlier accepted request's client id (client_transfer_id, client_trade_id) under a fresh request id. */
  | { kind: 'reuse_client_id'; pick: number; requestId: string }
  /** A customer locked while its money moves: its quote's execution and its transfer refused, then unlocked. */
  | { kind: 'lock'; platform: number; customer: number; total: string; requestId: string; transferId: string };

export type OperationKind = Operation['kind'];

export interface WorldShape {
  platforms: number;
  customersPerPlatform: number;
}

/** The mix: transfers lead (a share of them out of each platform's hot general USD account), as in production. */
const MIX: Record<OperationKind, number> = {
  transfer: 30,
  execute: 12,
  reward: 9,
  award_fund: 3,
  award_distribute: 4,
  trade_report: 6,
  convert_withdraw: 3,
  bank_event: 8,
  custody_event: 3,
  deposit: 6,
  replay: 10,
  resend: 4,
  reuse_client_id: 3,
  lock: 3,
};

const cents = (random: Prng, min: number, max: number) => (random.int(min * 100, max * 100) / 100).toFixed(2);

export function generateOperations(seed: number, count: number, world: WorldShape): Operation[] {
  const random = new Prng(seed);
  const customer = () => random.int(0, world.customersPerPlatform - 1);
  const operations: Operation[] = [];
  for (let index = 0; index < count; index++) {
    const kind = random.weighted(MIX);
    const platform = random.int(0, world.platforms - 1);
    operations.push(draw(kind));

    function draw(kind: OperationKind): Operation {
      switch (kind) {
        case 'transfer': {
          // Half of them pay out of the platform's general USD account: that account is the hot one.
          const shape = random.weighted({ payout: 50, between_customers: 25, to_platform: 10, internal: 10, btc: 5 });
          const from: Party =
            shape === 'payout' || shape === 'internal'
              ? { customer: null, label: 'general' }
              : { customer: customer(), label: 'general' };
          const to: Party =
            shape === 'internal'
              ? { customer: null, label: random.pick(['savings', 'payroll']) }
              : shape === 'to_platform'
                ? { customer: null, label: 'general' }
                : { customer: customer(), label: 'general' };
          // Now and then more than the source holds: a 400 the ledger must refuse alone.
          const amount = random.chance(0.03)
            ? cents(random, 5000, 90000)
            : cents(random, 0.01, shape === 'payout' ? 40 : 15);
          const asset = shape === 'btc' ? 'BTC' : 'USD';
          return {
            kind,
            platform,
            from,
            to,
            asset,
            amount: asset === 'BTC' ? (random.int(1, 50_000) / 1e8).toFixed(8) : amount,
            clientTransferId: random.chance(0.5) ? `ct-${random.uuid()}` : null,
            requestId: random.uuid(),
          };
        }
        case 'execute':
          return {
            kind,
            platform,
            customer: customer(),
            underlying: random.pick(['BTC', 'ETH', 'LTC'] as const),
            total: cents(random, 1, 60),
            ach: random.chance(0.4),
            externalAccountId: random.uuid(),
            requestId: random.uuid(),
          };
        case 'reward':
          return {
            kind,
            platform,
            customer: customer(),
            underlying: random.pick(['ETH', 'SOL'] as const),
            total: cents(random, 0.5, 20),
            requestId: random.uuid(),
          };
        case 'award_fund':
          return { kind, platform, quantity: (random.int(1, 200) / 1e5).toFixed(5), requestId: random.uuid() };
        case 'award_distribute': {
          const recipients = new Set<number>();
          const size = random.int(1, Math.min(20, world.customersPerPlatform));
          while (recipients.size < size) recipients.add(customer());
          return {
            kind,
            platform,
            customers: [...recipients],
            quantity: (random.int(1, 100) / 1e7).toFixed(7),
            requestId: random.uuid(),
          };
        }
        case 'trade_report': {
          const buyer = customer();
          let seller = customer();
          if (seller === buyer) seller = (buyer + 1) % world.customersPerPlatform;
          return {
            kind,
            platform,
            buyer,
            seller,
            quantity: (random.int(1, 500) / 1e5).toFixed(5),
            funded: random.chance(0.7),
            clientTradeId: `ct-${random.uuid()}`,
            requestId: random.uuid(),
          };
        }
        case 'convert_withdraw':
          return { kind, platform, quantity: (random.int(1, 100) / 1e3).toFixed(3), requestId: random.uuid() };
        case 'bank_event':
          return { kind, pick: random.next(), move: random.next() };
        case 'custody_event':
          return {
            kind,
            pick: random.next(),
            confirm: random.chance(0.7),
            hash: `0x${random.uuid().replaceAll('-', '')}`,
          };
        case 'deposit': {
          const toCustomer = random.chance(0.5);
          const asset = random.chance(0.8) ? 'USD' : 'BTC';
          return {
            kind,
            platform,
            customer: toCustomer ? customer() : null,
            asset,
            amount: asset === 'USD' ? cents(random, 10, 500) : (random.int(100_000, 5_000_000) / 1e8).toFixed(8),
            label: !toCustomer && asset === 'USD' && random.chance(0.3) ? 'ach_clearing' : null,
            reference: `wire-${random.uuid()}`,
            // A bank sends the same wire again now and then: it must book once.
            repeat: random.chance(0.1) ? random.next() : null,
          };
        }
        case 'replay':
          return { kind, pick: random.next(), changed: random.chance(0.25) };
        case 'resend':
          return {
            kind,
            pick: random.next(),
            requestId: random.weighted({ same: 1, other: 1, none: 1 }),
            otherId: random.uuid(),
          };
        case 'reuse_client_id':
          return { kind, pick: random.next(), requestId: random.uuid() };
        case 'lock':
          return {
            kind,
            platform,
            customer: customer(),
            total: cents(random, 1, 20),
            requestId: random.uuid(),
            transferId: random.uuid(),
          };
      }
    }
  }
  return operations;
}
