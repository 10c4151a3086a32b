import Link from 'next/link';
import type { ReactNode } from 'react';
import { apiErrorInfo } from '@/trpc/api-error';
import type { useRestoredKeyUse } from './use-key-use';

/**
 * The notice over a draft offered back after its session ended (ADR 0117, 0120 and its addendum). It says
 * "not applied" (`children`) only once the server said the draft's key was never used; a key used since
 * (applied, sent for approval, rejected, expired) is named instead, with who, when and where to see it, and
 * the draft is no longer kept. While the answer is awaited it says only that it is checking.
 */
export function RestoredNotice({
  keyUse,
  what,
  children,
}: {
  keyUse: ReturnType<typeof useRestoredKeyUse>;
  /** "this draft", "this bulk draft". */
  what: string;
  children: ReactNode;
}) {
  const ended = `Your session ended while ${what} was open.`;
  if (keyUse.used)
    return (
      <p
        className={`notice ${keyUse.used.applied ? 'notice-ok' : 'notice-warn'}`}
        role="status"
        data-testid="repair-restored"
        data-key-use="used"
      >
        {ended} {keyUse.used.text} It is no longer kept in this tab.{' '}
        <Link href={keyUse.used.link.href} data-testid="repair-restored-link">
          {keyUse.used.link.label}
        </Link>
      </p>
    );
  if (keyUse.checking)
    return (
      <p className="notice notice-warn" role="status" data-testid="repair-restored" data-key-use="checking">
        {ended} Checking whether it went through since…
      </p>
    );
  if (keyUse.failed)
    return (
      <p className="notice notice-warn" role="status" data-testid="repair-restored" data-key-use="unknown">
        {ended} Whether it went through since could not be checked ({apiErrorInfo(keyUse.failed).message}). Here it is
        as you left it; applying it uses the key it had, so if it did go through, Apply shows that result and does
        nothing twice.
      </p>
    );
  return (
    <p className="notice notice-warn" role="status" data-testid="repair-restored" data-key-use="unused">
      {children}
    </p>
  );
}
