/** Who calls the API: the signed key's platform and what the key may do. Established by signature verification. */

/** The permission areas a key can hold. Every signed route names one (see `lib/routes.ts`). */
export const PERMISSION_AREAS = [
  'participants',
  'liquidity',
  'rewards',
  'awards',
  'convert_withdraw',
  'payments',
  'transfers',
  'trades',
  'accounts',
  'assets',
  'withdrawals',
  'webhooks',
] as const;
export type PermissionArea = (typeof PERMISSION_AREAS)[number];

/** Who is calling, established by signature verification. */
export interface AuthContext {
  platformCode: string;
  /** The platform's own participant (holder of the platform's accounts). */
  participantCode: string;
  apiKey: string;
  permissions: readonly PermissionArea[];
}
