import type { OperatorRole } from '../db/schema.ts';

/** Routes as they are registered, a method and a path with its parameters. */
const writes = <K extends string>(table: Record<K, readonly OperatorRole[]>) => table;

/**
 * Who may call each operator route that changes something (decision 0099); every role reads (GET,
 * HEAD). The operator API checks each request against it (src/http/admin-routes.ts) and the console
 * checks each action against the route it does the work of (src/console/web.ts), so a role may do
 * the same through both. A change not listed here is the admin's alone.
 */
export const OPERATOR_WRITES = writes({
  'POST /admin/partners': ['admin'],
  'PATCH /admin/partners/:id': ['admin'],
  'POST /admin/partners/:id/secrets': ['admin'],
  'DELETE /admin/partners/:id/secrets/old': ['admin'],
  'POST /admin/partners/:id/users': ['admin'],
  'POST /admin/partners/:id/users/:userId/password-link': ['admin'],
  'POST /admin/partners/:id/wallet/credits': ['admin'],
  'POST /admin/orders/:id/refund': ['admin'],
  'PUT /admin/settings': ['admin'],
  'PUT /admin/sandbox/clock': ['admin'],
  'DELETE /admin/sandbox/clock': ['admin'],
  'POST /admin/orders/:id/webhook': ['admin', 'support'],
  'POST /admin/partners/:id/webhook-test': ['admin', 'support'],
});

export type OperatorWrite = keyof typeof OPERATOR_WRITES;

const BY_ROUTE = new Map<string, readonly OperatorRole[]>(Object.entries(OPERATOR_WRITES));

/** Whether `role` may call `method` on `route` (undefined: no route matched, which only admin learns). */
export function operatorMay(role: OperatorRole, method: string, route: string | undefined): boolean {
  if (method === 'GET' || method === 'HEAD') return true;
  const allowed = route === undefined ? undefined : BY_ROUTE.get(`${method} ${route}`);
  return allowed ? allowed.includes(role) : role === 'admin';
}

/** What each role does, in the words of its refusals. */
export const ROLE_SCOPE: Record<OperatorRole, string> = {
  admin: 'it does everything',
  support: 'it reads, and re-sends webhooks',
};

/** Whether `role` may do what the operator route `write` does. */
export const operatorMayWrite = (role: OperatorRole, write: OperatorWrite): boolean =>
  OPERATOR_WRITES[write].includes(role);
