import type { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from '../store/records.js';
import { seconds } from './task-bodies.js';

/*
 * The webhook management bodies (`/v1/webhooks...`): an endpoint, and a delivery with its
 * attempts. A delivery's own body (the POST a receiver gets) is built by webhooks/payload.ts
 * around the task body of task-bodies.ts.
 */

export function webhookEndpointBody(endpoint: WebhookEndpointRecord) {
  return { id: endpoint.id, object: 'webhook' as const, url: endpoint.url, events: [...endpoint.events], created_at: seconds(endpoint.createdAt) };
}

/** `POST /v1/webhooks`: the endpoint and its secret, shown this once. */
export function webhookEndpointCreatedBody(endpoint: WebhookEndpointRecord) {
  return { ...webhookEndpointBody(endpoint), secret: endpoint.secret };
}

export function webhookDeliveryBody(delivery: WebhookDeliveryRecord, attempts: readonly WebhookAttemptRecord[]) {
  return {
    id: delivery.id,
    object: 'webhook.delivery' as const,
    webhook_id: delivery.endpointId,
    type: delivery.type,
    task_id: delivery.taskId,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' && delivery.nextAttemptAt !== null ? seconds(delivery.nextAttemptAt) : null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    created_at: seconds(delivery.createdAt),
    updated_at: seconds(delivery.updatedAt),
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: seconds(attempt.at),
      status_code: attempt.statusCode,
      error: attempt.error,
      duration_ms: attempt.durationMs,
    })),
  };
}
