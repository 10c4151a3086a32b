import type { Metadata } from 'next';
import { InstanceDetailView } from '@/instances/instance-detail';

type Props = { params: Promise<{ id: string }> };

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id } = await params;
  return { title: `Instance ${id.slice(0, 8)}` };
}

export default async function InstancePage({ params }: Props) {
  const { id } = await params;
  return <InstanceDetailView id={id} />;
}
