import { z } from 'zod';

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A string the database stores as given: no NUL (PostgreSQL text refuses it) and no lone UTF-16
 * surrogate (it would be changed on the way in). Refused as a 400 naming the field, like the
 * engine's own text checks (ADR 0013).
 */
export const storableText = (maxLength: number) =>
  z
    .string()
    .max(maxLength)
    .refine((s) => !s.includes('\u0000'), 'must not contain NUL (\\u0000)')
    .refine((s) => !loneSurrogate.test(s), 'must not contain a lone UTF-16 surrogate');
