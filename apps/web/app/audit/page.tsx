import type { Metadata } from 'next';
import { AuditList } from '@/audit/audit-list';
import { auditHref, parseAuditFilter } from '@/audit/audit-filter';

export const metadata: Metadata = { title: 'Audit trail' };

export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const filter = parseAuditFilter(await searchParams);
  return <AuditList key={auditHref(filter)} filter={filter} />;
}
