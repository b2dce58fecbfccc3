import type { ClaimedDelivery, WebhookAttemptRecord, WebhookDeliveryRecord, WebhookDeliveryStatus, WebhookEndpointRecord } from './records.js';
import { num, numOrNull } from './rows.js';
import type { ClaimedDeliveryRow, WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointRow } from './sql/webhooks.js';

export function toEndpoint(row: WebhookEndpointRow): WebhookEndpointRecord {
  return { id: row.id, owner: row.owner, url: row.url, events: JSON.parse(row.events) as string[], secret: row.secret, createdAt: num(row.created_at) };
}

export function toDelivery(row: WebhookDeliveryRow): WebhookDeliveryRecord {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    type: row.type,
    taskId: row.task_id,
    status: row.status as WebhookDeliveryStatus,
    attempts: num(row.attempts),
    nextAttemptAt: numOrNull(row.next_attempt_at),
    leased: row.lease_owner !== null,
    lastStatusCode: row.last_status_code === null ? null : num(row.last_status_code),
    lastError: row.last_error,
    createdAt: num(row.created_at),
    updatedAt: num(row.updated_at),
  };
}

export function toClaimedDelivery(row: ClaimedDeliveryRow): ClaimedDelivery {
  return { ...toDelivery(row), payload: row.payload };
}

export function toAttempt(row: WebhookAttemptRow): WebhookAttemptRecord {
  return {
    deliveryId: row.delivery_id,
    attempt: num(row.attempt),
    at: num(row.at),
    statusCode: row.status_code === null ? null : num(row.status_code),
    error: row.error,
    durationMs: num(row.duration_ms),
  };
}

/** Above every delivery id (`msg_` and base64url sort below `~`): the first page's cursor. */
export const FIRST_DELIVERY_PAGE = '~';

/** Attempts grouped by delivery, for a page of deliveries. */
export function withAttempts(
  deliveries: readonly WebhookDeliveryRecord[],
  attempts: readonly WebhookAttemptRecord[],
): { delivery: WebhookDeliveryRecord; attempts: WebhookAttemptRecord[] }[] {
  const byDelivery = new Map<string, WebhookAttemptRecord[]>();
  for (const attempt of attempts) {
    const list = byDelivery.get(attempt.deliveryId) ?? [];
    list.push(attempt);
    byDelivery.set(attempt.deliveryId, list);
  }
  return deliveries.map((delivery) => ({ delivery, attempts: byDelivery.get(delivery.id) ?? [] }));
}
