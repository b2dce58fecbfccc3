import type { Task } from '../store/records.js';
import { taskBody, type UrlFor } from '../wire/task-bodies.js';
import { eventOf, type WebhookEventType } from './events.js';

/**
 * The body of a webhook delivery: the event, when the task became final, and the task exactly
 * as a status poll of its family returns it (the wire presenter's body, with signed output
 * URLs). Written once, when the task is announced: every attempt sends these bytes.
 */
export function webhookPayload(task: Task, urlFor: UrlFor, currency: string): { readonly type: WebhookEventType; readonly payload: string } | undefined {
  const type = eventOf(task);
  if (type === undefined) return undefined;
  const timestamp = new Date(task.completedAt ?? Date.now()).toISOString();
  return { type, payload: JSON.stringify({ type, timestamp, data: taskBody(task, urlFor, currency) }) };
}
