import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from 'zod/mini';
import type { AppContext } from '../context.js';
import { envelope, JSON_HEADERS } from './middleware/envelope.js';
import { idempotency, type IdempotencyOptions } from './middleware/idempotency.js';
import { jsonBody } from './middleware/json-body.js';
import { requestLimits } from './middleware/request-limits.js';
import { requestLog } from './middleware/request-log.js';
import { validateInput } from './middleware/validate-input.js';
import { verifySignature } from './middleware/verify-signature.js';
import { requestCompletionItem, type RequestClaim } from '../store/windows.js';
import type { ClaimsInBooking } from './booking-claims.js';
import { BACKSTOP_MS, DeadlineExceededError, remainingTimeOf } from '../runtime/deadline.js';
import type { ServiceContext } from './types.js';
import type { AuthContext } from '../domain/caller.js';
import { onlyRoute, type Route } from '../routes.js';

/**
 * A schema only the API description and the contract tests read, imported when they ask for it:
 * `async () => (await import('../../lib/http/schemas/transfers.js')).transferResponse`. The bundles split such
 * an `import()` off, so a function never builds the response schemas it does not check: building zod schemas
 * was the largest part of a cold start's own work (docs/performance.md, "Import time").
 */
export type DescriptionSchema = () => Promise<z.ZodMiniType>;

type Parsed<S extends z.ZodMiniType | undefined> = S extends z.ZodMiniType ? z.output<S> : undefined;

interface HandlerOptions<
  Q extends z.ZodMiniType | undefined,
  B extends z.ZodMiniType | undefined,
  P extends z.ZodMiniType | undefined,
> {
  query?: Q;
  body?: B;
  path?: P;
  /** 201 for the creating routes; 200 otherwise. */
  successStatus?: 200 | 201;
  /** The whole success body `run` returns (`{ message, ... }`): the API description and the contract tests check answers against it. */
  response?: DescriptionSchema;
  /** One line on what the route does, the operation's title in the API description. */
  summary?: string;
  /** More on the route for the API description (markdown). */
  description?: string;
  /** A route answering something other than JSON: `run` returns the body text, sent as is with this type. */
  produces?: 'text/html' | 'text/javascript';
  /** Extra headers on the success response (a page's Content-Security-Policy, caching). */
  headers?: Record<string, string>;
  /**
   * The body's shape for the API description, when `body` passes it on unchecked to domain rules that report
   * every problem at once (cross-field rules a schema would split into two rounds).
   */
  documentedBody?: DescriptionSchema;
  /**
   * The answer shows a secret once (a webhook signing secret): the copy kept for X-Request-Id retries is
   * stored encrypted (`lib/store/windows.ts`).
   */
  secretInResponse?: boolean;
  /**
   * A route that books (its use case may leave a booking queued behind a hot account): the engine's
   * `driveQueuedBooking`, with which an X-Request-Id retry commits the queue (`middleware/idempotency.ts`).
   */
  queuedBookings?: IdempotencyOptions['driveQueuedBooking'];
  /**
   * The route's use case books every request it accepts, with the request's claim in its booking: the key's
   * check and the request's claims ride in that transaction rather than being read and written before it
   * (`lib/http/booking-claims.ts`). The code that does it, `claimsInBooking` from there, passed in as
   * `queuedBookings` is, so that the functions that don't book don't bundle it. Not with `secretInResponse` (its
   * stored answer is sealed first).
   */
  claimsInBooking?: ClaimsInBooking;
}

/**
 * What a handler built here says about itself, read by the API description generator (`lib/openapi`).
 * The same schemas validate the requests, so the description cannot drift from what is enforced.
 */
export interface HandlerDescription {
  query?: z.ZodMiniType;
  body?: z.ZodMiniType;
  path?: z.ZodMiniType;
  response?: DescriptionSchema;
  successStatus: 200 | 201;
  summary?: string;
  description?: string;
  produces?: 'text/html' | 'text/javascript';
  documentedBody?: DescriptionSchema;
  /** The answer shows a secret once; its stored copy is sealed (the route needs kms:Encrypt: `encryptsSecrets`). */
  secretInResponse: boolean;
  /** The route the handler was built for (`routeHandler`). */
  route: Route;
}

interface HandlerInput<Q, B, P> {
  /** The context the handler was bound to (clock, DynamoDB, workflow, logger, configuration). */
  ctx: AppContext;
  query: Q;
  body: B;
  path: P;
  requestId: string;
  /** The verified caller. Present on every signed route (all but GET /time). */
  auth: AuthContext;
  /** True when the client's X-Request-Id made this POST idempotent (`requestId` is then the client's). */
  idempotent: boolean;
  /**
   * When the use case first ran for this invocation: the same on the run again after a claim its booking carried
   * was refused (`booking-claims.ts`), so what the first run accepted (a quote not yet expired) the second accepts too.
   */
  receivedAtMs: number;
  /**
   * The request's claim: a use case that books puts `claim(message)` in its booking transaction, where
   * `message` is what it returns. The booking and the stored answer commit together, so a retry of a run
   * that died after committing gets exactly this answer. Empty items when the request isn't idempotent.
   */
  claim: RequestClaim;
}

/**
 * Makes a route's Lambda handler for a context: the Lambda edge, the local server and tests each bind their
 * own. `api` describes the route for the API description (`lib/openapi`).
 */
export type BindApiHandler = ((ctx: AppContext) => ApiLambdaHandler) & {
  api: HandlerDescription;
};

/** A route's Lambda handler: an API Gateway proxy event and a Lambda context (its remaining time is the deadline). */
export type ApiLambdaHandler = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * Builds a route's handler, for a context, with the one middleware stack every route shares, in the order of
 * the request's life: request id and error mapping -> body size and nesting limits -> signature on the raw body -> JSON -> zod -> idempotency
 * -> the use case. `run` returns the response body (`{ message, ... }`); everything else is done here. A
 * function module exports the result as `bind` and `handler = onLambda(bind)` for Lambda. `route` is the
 * function's own row of the route table (`lib/routes.ts`), which the middleware reads (its permission area,
 * whether a GET creates something): only that row goes into the function's bundle.
 */
export function routeHandler<
  Q extends z.ZodMiniType | undefined = undefined,
  B extends z.ZodMiniType | undefined = undefined,
  P extends z.ZodMiniType | undefined = undefined,
>(
  route: Route,
  options: HandlerOptions<Q, B, P>,
  run: (input: HandlerInput<Parsed<Q>, Parsed<B>, Parsed<P>>) => Promise<unknown>,
): BindApiHandler {
  // The middleware finds the request's route through this: the function's own row, for its own requests only.
  const routeOf = onlyRoute(route);
  const successStatus = options.successStatus ?? 200;
  const claimsInBooking = options.secretInResponse ? undefined : options.claimsInBooking;
  const bind = (ctx: AppContext) => {
    const core = async (_event: APIGatewayProxyEvent, context: ServiceContext): Promise<APIGatewayProxyResult> => {
      const { svc } = context;
      const claim: RequestClaim = (message) => {
        const response = {
          statusCode: successStatus,
          headers: { ...options.headers, ...JSON_HEADERS },
          body: JSON.stringify({ message }),
        };
        const carried = svc.bookingClaims;
        if (carried && claimsInBooking) {
          carried.carried = true;
          // What the X-Request-Id's record stores, when the request has one; the same bytes otherwise.
          svc.claimedResponse = response;
          // Should the booking queue, its claims are made apart and the run begun apart is completed by it.
          return claimsInBooking.items(carried, response, () => {
            const run = svc.idempotentRun;
            return run ? [requestCompletionItem(ctx, run, response)] : [];
          });
        }
        const run = svc.idempotentRun;
        if (!run) return [];
        // The last claim made is the one that committed: a use case that retries builds its transaction anew,
        // and one whose transaction failed for good throws.
        svc.claimedResponse = response;
        return [requestCompletionItem(ctx, run, response)];
      };
      const receivedAtMs = ctx.clock.nowMs();
      const useCase = () =>
        run({
          ctx,
          query: svc.input?.query as Parsed<Q>,
          body: svc.input?.body as Parsed<B>,
          path: svc.input?.path as Parsed<P>,
          requestId: svc.requestId,
          auth: svc.auth as AuthContext,
          idempotent: svc.idempotentRun !== undefined,
          receivedAtMs,
          claim,
        });
      let body: unknown;
      try {
        body = await useCase();
      } catch (error) {
        // A route whose booking carries its claims (`booking-claims.ts`) and whose use case threw: nothing of the
        // booking was written, its claims neither. Refused by its booking, it is answered so; else its claims are
        // made apart, which may answer it, and it runs again.
        const carried = svc.bookingClaims;
        if (!carried || !claimsInBooking) throw error;
        svc.bookingClaims = undefined;
        svc.claimedResponse = undefined;
        const recovered = await claimsInBooking.recover(carried, error, useCase);
        if ('answered' in recovered) return recovered.answered;
        body = recovered.body;
      }
      // A use case that answered without booking would have skipped the key's check and the request's claims.
      if (svc.bookingClaims && !svc.bookingClaims.carried)
        throw new Error('a route whose booking carries its claims answered without booking them');
      // What the booking stored is what this run answers, byte for byte, like every retry of it.
      if (svc.claimedResponse) return { ...svc.claimedResponse, headers: { ...svc.claimedResponse.headers } };
      if (options.produces) {
        const headers = { ...options.headers, 'Content-Type': `${options.produces}; charset=utf-8` };
        return { statusCode: options.successStatus ?? 200, headers, body: String(body) };
      }
      return {
        statusCode: options.successStatus ?? 200,
        headers: { ...options.headers, ...JSON_HEADERS },
        body: JSON.stringify(body),
      };
    };
    const handler = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ServiceContext>({
      ...requestLog(ctx),
      // The last guard, for work that overran its deadline without waiting on anything the deadline bounds: the
      // use case is abandoned early enough for the error path to answer 503 and release the request's claim.
      timeoutEarlyInMillis: BACKSTOP_MS,
      timeoutEarlyResponse: () => {
        throw new DeadlineExceededError('handler');
      },
    })
      .use(envelope())
      .use(requestLimits())
      .use(verifySignature(ctx, { routeOf, claimsInBooking }))
      .use(jsonBody())
      .use(validateInput({ query: options.query, body: options.body, path: options.path }))
      .use(
        idempotency(ctx, {
          routeOf,
          sealResponse: options.secretInResponse,
          driveQueuedBooking: options.queuedBookings,
          claimsInBooking,
        }),
      )
      .handler(core);
    // Each invocation runs within its deadline: the Lambda context's remaining time, less the reserve for the
    // answer and the claim's release (`lib/runtime/deadline.ts`). Every wait below reads it.
    const bound: ApiLambdaHandler = (event, context) =>
      ctx.deadlines.within(remainingTimeOf(context), () => handler(event, context as ServiceContext));
    return bound;
  };
  const api: HandlerDescription = {
    query: options.query,
    body: options.body,
    path: options.path,
    response: options.response,
    successStatus: options.successStatus ?? 200,
    summary: options.summary,
    description: options.description,
    produces: options.produces,
    documentedBody: options.documentedBody,
    secretInResponse: options.secretInResponse ?? false,
    route,
  };
  return Object.assign(bind, { api });
}
