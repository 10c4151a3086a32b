import type { Role } from './roles.ts';

/** Who a request acts as: the operator its session belongs to. */
export interface SignedInOperator {
  id: string;
  name: string;
  displayName: string;
  role: Role;
}
