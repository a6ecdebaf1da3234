import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** What a test receiver got: one entry per request. */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers a request: a status (with headers), a hang, or a dropped connection. */
export type ReceiverReply = { status: number; headers?: Record<string, string> } | 'hang' | 'reset';

/**
 * A real HTTP receiver on 127.0.0.1 for webhook tests. `reply` decides each answer (default 204); every
 * request is recorded, and `verified` checks signatures with the standardwebhooks package, an independent
 * implementation of the scheme.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  reply: (request: ReceivedWebhook, index: number) => ReceiverReply = () => ({ status: 204 });
  private server: Server | undefined;
  private hanging = new Set<ServerResponse>();
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const entry: ReceivedWebhook = {
          headers: request.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(entry);
        const reply = this.reply(entry, this.received.length - 1);
        if (reply === 'hang') {
          this.hanging.add(response);
          return;
        }
        if (reply === 'reset') {
          request.socket.destroy();
          return;
        }
        response.writeHead(reply.status, reply.headers);
        response.end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
    return this;
  }

  async stop(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Requests carrying this event id (the `webhook-id`). */
  forEvent(eventId: string): ReceivedWebhook[] {
    return this.received.filter((entry) => entry.headers['webhook-id'] === eventId);
  }

  /** The parsed envelopes whose signature verifies with `secret`. */
  verified(secret: string): any[] {
    const webhook = new Webhook(secret);
    return this.received.flatMap((entry) => {
      try {
        return [webhook.verify(entry.body, entry.headers as Record<string, string>)];
      } catch {
        return [];
      }
    });
  }

  async waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline)
        throw new Error(
          `receiver: condition not met within ${timeoutMs} ms (${this.received.length} requests received)`,
        );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
