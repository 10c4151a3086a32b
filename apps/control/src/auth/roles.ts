/** What an operator may do: viewer reads, operator repairs, admin manages operators and policy. */
export const roles = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof roles)[number];

const rank: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** Whether an operator with role `held` may do what `required` allows. */
export function roleAllows(held: Role, required: Role): boolean {
  return rank[held] >= rank[required];
}

export function isRole(value: string): value is Role {
  return (roles as readonly string[]).includes(value);
}
