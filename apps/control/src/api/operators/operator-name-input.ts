import { z } from 'zod';
import { storableText } from '../storable-text.ts';

/** An operator's sign-in name as the API takes it (compared without case or surrounding blanks). */
export const operatorNameInput = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9._@-]+$/, 'letters, digits and . _ @ - only');

/** A new password as the API takes it: operators.create's and auth.changePassword's one rule. */
export const newPasswordInput = storableText(1000).min(12, 'at least 12 characters');
