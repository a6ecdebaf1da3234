import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { MiddlewareObj, Request } from '@middy/core';
import type { AuthContext } from '../domain/caller.js';
import type { IdempotentRun, StoredResponse } from '../store/windows.js';
import type { BookingClaims } from './booking-claims.js';

/** What the middlewares learn about a request, carried on the Lambda context. */
export interface ServiceState {
  requestId: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  auth?: AuthContext;
  /** The parsed JSON body (undefined when there is none). */
  body?: unknown;
  /** Inputs after zod parsing. */
  input?: { query?: unknown; body?: unknown; path?: unknown };
  /** Set while this run owns its request's idempotency record (`X-Request-Id` on a POST). */
  idempotentRun?: IdempotentRun;
  /** The response the use case stored with its booking (through its request claim): what this run answers. */
  claimedResponse?: StoredResponse;
  /** A booking route's checks and claims, while its booking's transaction is to carry them (`booking-claims.ts`). */
  bookingClaims?: BookingClaims;
}

export type ServiceContext = Context & { svc: ServiceState };
export type ServiceRequest = Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ServiceContext>;
export type ServiceMiddleware = MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, ServiceContext>;
