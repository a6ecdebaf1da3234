import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Global secondary indexes are eventually consistent on AWS: a write shows in an index some time after it
 * commits (usually well under a second), and DynamoDB Local shows it at once. This middleware puts the lag
 * back: every write's items (PutItem, UpdateItem, DeleteItem, TransactWriteItems, BatchWriteItem) stay out
 * of index reads (a Query or Scan naming an `IndexName`) until their lag, drawn per write by `lagOf`, has
 * passed. The table itself, and consistent reads of it, see the write at once, as on AWS.
 *
 * The model is a little harsher than AWS: during its lag an item is missing from the index, where AWS may
 * show its previous version. For a reader expecting a new item, both are the same; one expecting an item to
 * stay listed sees it vanish for the lag. `Select: 'COUNT'` index reads are not adjusted (they return no
 * items to hold back). The simulation runs with it (test/simulation/world.ts); a test can too, with a clock
 * of its own so nothing depends on timing.
 */

/** Shaped as the SDK's last `add` overload; added at `initialize`, whose handlers see the same `input` and `output`. */
type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];
type Item = Record<string, unknown>;

export interface IndexLagOptions {
  /**
   * The lag of one write of one item, ms. `place` names the item and the write (table, key, the item's
   * write count), so a seeded draw from it gives the same lag to the same write whatever ran beside it.
   */
  lagOf(place: string): number;
  /** The clock the lag runs on (wall time unless a test moves its own). */
  nowMs?: () => number;
  /** Key attribute names (both tables here use `pk` and, for the main table, `sk`). */
  keyAttributes?: readonly string[];
}

const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'TransactWriteItemsCommand',
  'BatchWriteItemCommand',
]);

/** Attribute aliases the middleware adds to a projection so it can tell which item an index read returned. */
const KEY_ALIAS_PREFIX = '#indexLagKey';

export class IndexLag {
  /** When each written item shows in the indexes, by table and key; entries past it are dropped. */
  private readonly visibleAtMs = new Map<string, number>();
  private readonly writes = new Map<string, number>();
  private readonly nowMs: () => number;
  private readonly keyAttributes: readonly string[];
  /** Items index reads held back so far (a run's summary, or a test's check that the lag did anything). */
  heldBack = 0;

  constructor(private readonly options: IndexLagOptions) {
    this.nowMs = options.nowMs ?? Date.now;
    this.keyAttributes = options.keyAttributes ?? ['pk', 'sk'];
  }

  /** Items written whose lag has not passed yet. */
  pending(): number {
    this.prune();
    return this.visibleAtMs.size;
  }

  /**
   * The SDK middleware, at `initialize`: once per call (not per attempt), before the input is serialized (so
   * a projection can be widened), with the output as the caller receives it. Keys come as plain strings from
   * a document client and as `{ S }` from a plain one; `itemId` reads both.
   */
  middleware(): Middleware {
    return (next, context) => async (args) => {
      const command = context.commandName ?? '';
      const input = args.input as Record<string, any>;
      if (WRITE_COMMANDS.has(command)) {
        const result = await next(args);
        this.recordWrite(command, input, (result.output ?? {}) as Record<string, any>);
        return result;
      }
      if ((command === 'QueryCommand' || command === 'ScanCommand') && input.IndexName && input.Select !== 'COUNT') {
        const projected = this.withKeyProjection(input);
        const result = await next({ ...args, input: projected.input });
        const output = result.output as { Items?: Item[]; Count?: number };
        if (output.Items) {
          output.Items = this.visible(input.TableName, output.Items, projected.added);
          output.Count = output.Items.length;
        }
        return result;
      }
      return next(args);
    };
  }

  /** Adds the middleware to a client (a document client shares its base client's stack). */
  attach(client: Pick<DynamoDBClient, 'middlewareStack'>): this {
    client.middlewareStack.add(this.middleware() as never, {
      step: 'initialize',
      name: 'localIndexLag',
      override: true,
    });
    return this;
  }

  private recordWrite(command: string, input: Record<string, any>, output: Record<string, any>): void {
    const written: { table: string; key: Record<string, unknown> }[] = [];
    if (command === 'PutItemCommand') written.push({ table: input.TableName, key: input.Item });
    else if (command === 'UpdateItemCommand' || command === 'DeleteItemCommand')
      written.push({ table: input.TableName, key: input.Key });
    else if (command === 'TransactWriteItemsCommand') {
      for (const action of input.TransactItems ?? []) {
        if (action.Put) written.push({ table: action.Put.TableName, key: action.Put.Item });
        else if (action.Update) written.push({ table: action.Update.TableName, key: action.Update.Key });
        else if (action.Delete) written.push({ table: action.Delete.TableName, key: action.Delete.Key });
      }
    } else {
      // BatchWriteItem: what DynamoDB left unprocessed was not written.
      const unprocessed = new Set<string>();
      for (const [table, requests] of Object.entries(output.UnprocessedItems ?? {}))
        for (const request of requests as any[])
          unprocessed.add(this.itemId(table, request.PutRequest?.Item ?? request.DeleteRequest?.Key));
      for (const [table, requests] of Object.entries(input.RequestItems ?? {}))
        for (const request of requests as any[]) {
          const key = request.PutRequest?.Item ?? request.DeleteRequest?.Key;
          if (!unprocessed.has(this.itemId(table, key))) written.push({ table, key });
        }
    }
    const now = this.nowMs();
    for (const { table, key } of written) {
      const id = this.itemId(table, key);
      const count = (this.writes.get(id) ?? 0) + 1;
      this.writes.set(id, count);
      const lagMs = this.options.lagOf(`${id} write ${count}`);
      if (lagMs > 0) this.visibleAtMs.set(id, Math.max(this.visibleAtMs.get(id) ?? 0, now + lagMs));
    }
  }

  /**
   * A read projecting some attributes gets the key attributes too (under aliases of our own), so each item
   * it returns can be told apart; `added` are the ones the caller did not ask for, removed again after.
   */
  private withKeyProjection(input: Record<string, any>): { input: Record<string, any>; added: string[] } {
    if (!input.ProjectionExpression) return { input, added: [] };
    const names: Record<string, string> = input.ExpressionAttributeNames ?? {};
    const asked = new Set(
      String(input.ProjectionExpression)
        .split(',')
        .map((path) => path.trim().split(/[.[]/)[0]!)
        .map((token) => names[token] ?? token),
    );
    const added = this.keyAttributes.filter((name) => !asked.has(name));
    if (added.length === 0) return { input, added };
    const aliases = Object.fromEntries(added.map((name, i) => [`${KEY_ALIAS_PREFIX}${i}`, name]));
    return {
      input: {
        ...input,
        ProjectionExpression: [input.ProjectionExpression, ...Object.keys(aliases)].join(', '),
        ExpressionAttributeNames: { ...names, ...aliases },
      },
      added,
    };
  }

  private visible(table: string, items: Item[], added: readonly string[]): Item[] {
    this.prune();
    const now = this.nowMs();
    const shown = items.filter((item) => {
      const until = this.visibleAtMs.get(this.itemId(table, item));
      if (until !== undefined && until > now) {
        this.heldBack += 1;
        return false;
      }
      return true;
    });
    for (const item of shown) for (const name of added) delete item[name];
    return shown;
  }

  /** Table and key as one string; a key value as its text whether it came marshalled (`{ S }`) or not. */
  private itemId(table: string, item: Record<string, unknown> | undefined): string {
    const text = (value: unknown) =>
      value && typeof value === 'object' && 'S' in value ? String((value as { S: unknown }).S) : String(value);
    return JSON.stringify([
      table,
      ...this.keyAttributes.map((name) => (item?.[name] === undefined ? null : text(item[name]))),
    ]);
  }

  private prune(): void {
    const now = this.nowMs();
    for (const [id, until] of this.visibleAtMs) if (until <= now) this.visibleAtMs.delete(id);
    // Write counts only name draws; an item no longer lagging starts again from the count it had.
    if (this.writes.size > 100_000)
      for (const id of this.writes.keys()) if (!this.visibleAtMs.has(id)) this.writes.delete(id);
  }
}
