import { z } from 'zod';

/** An operator's sign-in name as the API takes it (compared without case or surrounding blanks). */
export const operatorNameInput = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._@-]+$/, 'letters, digits and . _ @ - only');
