import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/**
 * Global secondary indexes are eventually consistent on AWS: a write shows in an index some time after it
 * commits (usually well under a second), and DynamoDB Local shows it at once. This middleware puts that lag
 * back for new items: an item created (its first write this middleware sees, or the first after a delete;
 * by PutItem, UpdateItem, TransactWriteItems or BatchWriteItem) stays out of index reads (a Query or Scan
 * naming an `IndexName`) until its lag, drawn per write by `lagOf`, has passed. The table itself, and
 * consistent reads of it, see the write at once, as on AWS.
 *
 * Later writes of an item show at once. On AWS an index shows the item's previous version for the lag (or
 * still shows a deleted item); this middleware has no previous version to show, and hiding the item instead
 * would make anomalies AWS does not have (a listed item vanishing). So it holds what AWS is most often found
 * doing to code that reads its own writes: a new item missing from an index read made just after it, and a
 * list by time that shows a later item before an earlier one. `Select: 'COUNT'` index reads are not
 * adjusted (they return no items to hold back). The simulation runs with it (test/simulation/world.ts); a
 * test can too, with a clock of its own so nothing depends on timing.
 */

/** Shaped as the SDK's last `add` overload; added at `initialize`, whose handlers see the same `input` and `output`. */
type Middleware = Parameters<DynamoDBClient['middlewareStack']['add']>[0];
type Item = Record<string, unknown>;

export interface IndexLagOptions {
  /**
   * The lag of one new item, ms. `place` names the item and its creation (table, key, how many times it has
   * been created), so a seeded draw from it gives the same lag to the same write whatever ran beside it.
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

const MIDDLEWARE_NAME = 'localIndexLag';

/** Attribute aliases the middleware adds to a projection so it can tell which item an index read returned. */
const KEY_ALIAS_PREFIX = '#indexLagKey';

export class IndexLag {
  /** When each new item shows in the indexes, by table and key; entries past it are dropped. */
  private readonly visibleAtMs = new Map<string, number>();
  /** Items written and not deleted since: a write of one of these is not a creation. */
  private readonly existing = new Set<string>();
  /** Times each item was created (a draw's place, so a re-creation after a delete draws anew). */
  private readonly creations = new Map<string, number>();
  private readonly nowMs: () => number;
  private readonly keyAttributes: readonly string[];
  /** Items index reads held back so far (a run's summary, or a test's check that the lag did anything). */
  heldBack = 0;

  constructor(private readonly options: IndexLagOptions) {
    this.nowMs = options.nowMs ?? Date.now;
    this.keyAttributes = options.keyAttributes ?? ['pk', 'sk'];
  }

  /** New items whose lag has not passed yet. */
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
      name: MIDDLEWARE_NAME,
      override: true,
    });
    return this;
  }

  /** Takes it off again (a test sharing its client with later files). */
  detach(client: Pick<DynamoDBClient, 'middlewareStack'>): void {
    client.middlewareStack.remove(MIDDLEWARE_NAME);
  }

  private recordWrite(command: string, input: Record<string, any>, output: Record<string, any>): void {
    const written: { table: string; key: Record<string, unknown>; deleted?: true }[] = [];
    if (command === 'PutItemCommand') written.push({ table: input.TableName, key: input.Item });
    else if (command === 'UpdateItemCommand') written.push({ table: input.TableName, key: input.Key });
    else if (command === 'DeleteItemCommand') written.push({ table: input.TableName, key: input.Key, deleted: true });
    else if (command === 'TransactWriteItemsCommand') {
      for (const action of input.TransactItems ?? []) {
        if (action.Put) written.push({ table: action.Put.TableName, key: action.Put.Item });
        else if (action.Update) written.push({ table: action.Update.TableName, key: action.Update.Key });
        else if (action.Delete) written.push({ table: action.Delete.TableName, key: action.Delete.Key, deleted: true });
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
          if (unprocessed.has(this.itemId(table, key))) continue;
          written.push(request.DeleteRequest ? { table, key, deleted: true } : { table, key });
        }
    }
    const now = this.nowMs();
    for (const { table, key, deleted } of written) {
      const id = this.itemId(table, key);
      if (deleted) {
        this.existing.delete(id);
        this.visibleAtMs.delete(id);
        continue;
      }
      if (this.existing.has(id)) continue;
      this.existing.add(id);
      const lagMs = this.options.lagOf(`${id} created ${(this.creations.get(id) ?? 0) + 1}`);
      this.creations.set(id, (this.creations.get(id) ?? 0) + 1);
      if (lagMs > 0) this.visibleAtMs.set(id, now + lagMs);
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
  }
}
