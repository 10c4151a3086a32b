import { Prisma } from '../generated/prisma/client.ts';

const inheritedReasonChars = 1000;

/**
 * A parent's reason as its child's reason quotes it (`parent <p> was cancelled: <this>`): whole, or its
 * last {@link inheritedReasonChars} characters after an ellipsis. Quoted whole at every level, a chain
 * thousands deep wrote reasons that grew with their depth, hundreds of megabytes in all (review 65); a
 * terminate's batches quote the same way (review 66). `reason` is an SQL expression.
 */
export const inherited = (reason: string) =>
  Prisma.sql`(case when length(${Prisma.raw(reason)}) > ${inheritedReasonChars}::int
                   then '…' || right(${Prisma.raw(reason)}, ${inheritedReasonChars}::int) else ${Prisma.raw(reason)} end)`;
