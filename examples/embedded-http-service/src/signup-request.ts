import { z } from 'zod';
import { ServiceError } from './service-error.ts';

const schema = z.object(
  {
    email: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(z.email({ error: 'must be an email address' })),
    name: z.string().trim().min(1, { error: 'must not be empty' }).max(200),
  },
  { error: 'the body must be a JSON object' },
);

export type SignupRequest = z.output<typeof schema>;

/** Validates a POST /signups body; a bad one throws a ServiceError naming the first bad field. */
export function parseSignupRequest(body: unknown): SignupRequest {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : null;
  const message = issue?.message ?? 'invalid';
  throw new ServiceError('invalid_body', field ? `${field}: ${message}` : message, field);
}
