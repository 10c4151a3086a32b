import type { ConsoleRole } from '@/auth/use-session';

/** The roles an operator may hold, least first (the control plane's `roles`). */
export const consoleRoles: readonly ConsoleRole[] = ['viewer', 'operator', 'admin'];

/** What each role may do, as the role select shows it. */
export const roleSummary: Record<ConsoleRole, string> = {
  viewer: 'viewer (reads only)',
  operator: 'operator (repairs, starts runs)',
  admin: 'admin (also manages operators and the approval policy)',
};
