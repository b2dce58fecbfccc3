import type { Task } from '../store/records.js';

/** The six events (decisions 8.5): a task of either family reaching a final state. */
export const WEBHOOK_EVENTS = ['video.completed', 'video.failed', 'video.cancelled', 'image.completed', 'image.failed', 'image.cancelled'] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

export function isWebhookEvent(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && (WEBHOOK_EVENTS as readonly string[]).includes(value);
}

/** The event a final task is; undefined for a task still queued or processing. */
export function eventOf(task: Task): WebhookEventType | undefined {
  if (task.status !== 'completed' && task.status !== 'failed' && task.status !== 'cancelled') return undefined;
  const type = `${task.kind}.${task.status}`;
  return isWebhookEvent(type) ? type : undefined;
}
