import { bytewise, operation, skipLocked } from '../dialect.js';
import { TASK_COLUMNS, columns, type CountRow, type Int, type TaskRow } from '../rows.js';

/*
 * Webhooks (decisions 8.5): endpoints per key, the outbox of deliveries, and one row per attempt.
 * A final task is announced once: the announcer picks final tasks whose `announced` is 0
 * (migration 6: new rows start at 0), inserts one delivery per matching endpoint and sets
 * `announced`, all in one transaction, so the settle statements stay as they are and a crash
 * between a settle and its deliveries loses nothing.
 */

export interface WebhookEndpointRow {
  id: string;
  owner: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  secret: string;
  created_at: Int;
}

const ENDPOINT_COLUMNS = ['id', 'owner', 'url', 'events', 'secret', 'created_at'] as const;

export const insertWebhookEndpoint = operation<{ id: string; owner: string; url: string; events: string; secret: string; createdAt: number }>(
  'insert-webhook-endpoint',
  () => `INSERT INTO webhook_endpoints (id, owner, url, events, secret, created_at) VALUES (@id, @owner, @url, @events, @secret, @createdAt)`,
);

export const listWebhookEndpoints = operation<{ owner: string }, WebhookEndpointRow>(
  'list-webhook-endpoints',
  (dialect) => `SELECT ${columns(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE owner = @owner ORDER BY created_at, id ${bytewise(dialect)}`,
);

export const countWebhookEndpoints = operation<{ owner: string }, CountRow>(
  'count-webhook-endpoints',
  () => `SELECT count(*) AS n FROM webhook_endpoints WHERE owner = @owner`,
);

/** An endpoint by id alone: the dispatcher's read (owner '' matches any) or its owner's. */
export const getWebhookEndpoint = operation<{ id: string; owner: string }, WebhookEndpointRow>(
  'get-webhook-endpoint',
  () => `SELECT ${columns(ENDPOINT_COLUMNS)} FROM webhook_endpoints WHERE id = @id AND (@owner = '' OR owner = @owner)`,
);

/* Deleting an endpoint deletes its deliveries and their attempts with it (one transaction): its pending deliveries stop. */
export const deleteWebhookAttempts = operation<{ endpointId: string }>(
  'delete-webhook-attempts',
  () => `DELETE FROM webhook_attempts WHERE endpoint_id = @endpointId`,
);

export const deleteWebhookDeliveries = operation<{ endpointId: string }>(
  'delete-webhook-deliveries',
  () => `DELETE FROM webhook_deliveries WHERE endpoint_id = @endpointId`,
);

export const deleteWebhookEndpoint = operation<{ id: string; owner: string }>(
  'delete-webhook-endpoint',
  () => `DELETE FROM webhook_endpoints WHERE id = @id AND owner = @owner`,
);

/** Final tasks not yet announced, oldest first; on PostgreSQL locked so processes share the work. */
export const pickUnannounced = operation<{ limit: number }, TaskRow>(
  'pick-unannounced',
  (dialect) => `SELECT ${columns(TASK_COLUMNS)} FROM tasks
       WHERE announced = 0 AND status IN ('completed', 'failed', 'cancelled')
    ORDER BY completed_at LIMIT @limit ${skipLocked(dialect)}`,
);

export const markAnnounced = operation<{ id: string }>('mark-announced', () => `UPDATE tasks SET announced = 1 WHERE id = @id AND announced = 0`);

/** The batch form (PostgreSQL: one statement over an array). */
export const markAnnouncedMany = operation<{ ids: string[] }>(
  'mark-announced-many',
  () => `UPDATE tasks SET announced = 1 WHERE id = ANY(@ids::text[]) AND announced = 0`,
  ['postgres'],
);

export interface NewDeliveryParams {
  id: string;
  endpointId: string;
  owner: string;
  type: string;
  taskId: string;
  payload: string;
  now: number;
}

export const insertWebhookDelivery = operation<NewDeliveryParams>(
  'insert-webhook-delivery',
  () => `INSERT INTO webhook_deliveries (id, endpoint_id, owner, type, task_id, payload, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (@id, @endpointId, @owner, @type, @taskId, @payload, 'pending', 0, @now, @now, @now)`,
);

export interface WebhookDeliveryRow {
  id: string;
  endpoint_id: string;
  type: string;
  task_id: string;
  status: string;
  attempts: Int;
  next_attempt_at: Int | null;
  lease_owner: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: Int;
  updated_at: Int;
}

const DELIVERY_COLUMNS = [
  'id',
  'endpoint_id',
  'type',
  'task_id',
  'status',
  'attempts',
  'next_attempt_at',
  'lease_owner',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
] as const;

export interface ClaimedDeliveryRow extends WebhookDeliveryRow {
  payload: string;
}

/** How many attempts in flight one endpoint, and one key's endpoints together, may have. */
export interface DeliveryCaps {
  readonly perEndpoint: number;
  readonly perKey: number;
}

/** MEDIAGATE_WEBHOOK_PER_ENDPOINT, MEDIAGATE_WEBHOOK_PER_KEY. */
export const DEFAULT_DELIVERY_CAPS: DeliveryCaps = { perEndpoint: 2, perKey: 4 };

export interface ClaimDeliveriesParams {
  owner: string;
  now: number;
  leaseUntil: number;
  limit: number;
  /** Attempts in flight (every process) one endpoint may have, this claim's included. */
  perEndpoint: number;
  /** Attempts in flight (every process) one API key's endpoints may have together. */
  perKey: number;
}

/**
 * Due deliveries, leased: `next_attempt_at` is both the retry timer and the lease (as the
 * upstream claim's `next_check_at`), so a dispatcher that dies leaves its deliveries due again
 * when the lease ends. `attempts + 1` fences the result write of an earlier holder.
 *
 * Fair between keys and between endpoints, not oldest-due-first: an endpoint gets at most
 * `perEndpoint` attempts in flight and a key at most `perKey` (counting the leased ones, of
 * every process), and the claim takes each key's first due delivery before any key's second
 * (rank within the key, then due time). Endpoints that never answer hold only their key's
 * share of the slots; another key's delivery goes at once. On PostgreSQL two processes claiming
 * at one instant may each see the other's leases not yet taken, so a cap may be passed by what
 * one claim takes (at most the dispatcher's free slots). The claim reads each endpoint's first
 * `perEndpoint` due deliveries (an index probe per endpoint), not the whole backlog: a key with
 * thousands due costs a claim no more than a key with a few.
 */
export const claimWebhookDeliveries = operation<ClaimDeliveriesParams, ClaimedDeliveryRow>(
  'claim-webhook-deliveries',
  (dialect) => `UPDATE webhook_deliveries SET lease_owner = @owner, next_attempt_at = @leaseUntil, attempts = attempts + 1, updated_at = @now
       WHERE id IN (
         SELECT claimable.id FROM webhook_deliveries claimable JOIN (
           SELECT open_endpoints.id, open_endpoints.next_attempt_at, open_endpoints.owner,
                  ROW_NUMBER() OVER (PARTITION BY open_endpoints.owner ORDER BY open_endpoints.next_attempt_at, open_endpoints.id) AS key_rank
             FROM (
               SELECT due.id, due.owner, due.next_attempt_at,
                      ROW_NUMBER() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS endpoint_rank,
                      (SELECT count(*) FROM webhook_deliveries busy
                        WHERE busy.lease_owner IS NOT NULL AND busy.owner = due.owner AND busy.endpoint_id = due.endpoint_id
                          AND busy.next_attempt_at > @now) AS endpoint_busy
                 FROM webhook_endpoints endpoint
                 JOIN webhook_deliveries due ON due.id IN (
                        SELECT head.id FROM webhook_deliveries head
                         WHERE head.endpoint_id = endpoint.id AND head.status = 'pending' AND head.next_attempt_at <= @now
                         ORDER BY head.next_attempt_at, head.id LIMIT @perEndpoint)
             ) open_endpoints
            WHERE open_endpoints.endpoint_rank + open_endpoints.endpoint_busy <= @perEndpoint
         ) fair ON fair.id = claimable.id
          WHERE claimable.status = 'pending' AND claimable.next_attempt_at <= @now
            AND fair.key_rank + (SELECT count(*) FROM webhook_deliveries busy
                                  WHERE busy.lease_owner IS NOT NULL AND busy.owner = fair.owner AND busy.next_attempt_at > @now) <= @perKey
          ORDER BY fair.key_rank, fair.next_attempt_at, fair.id
          LIMIT @limit ${dialect === 'postgres' ? 'FOR UPDATE OF claimable SKIP LOCKED' : ''})
   RETURNING ${columns([...DELIVERY_COLUMNS, 'payload'])}`,
);

/** When the next pending delivery is due (the dispatcher sleeps until then, or until woken). */
export const nextWebhookDue = operation<object, { due: Int | null }>(
  'next-webhook-due',
  () => `SELECT min(next_attempt_at) AS due FROM webhook_deliveries WHERE status = 'pending'`,
);

export interface DeliveryResultParams {
  id: string;
  owner: string;
  attempts: number;
  status: string;
  nextAttemptAt: number | null;
  statusCode: number | null;
  error: string | null;
  now: number;
}

/** An attempt's outcome, written only by the holder of that attempt. */
export const settleWebhookDelivery = operation<DeliveryResultParams>(
  'settle-webhook-delivery',
  () => `UPDATE webhook_deliveries SET status = @status, next_attempt_at = @nextAttemptAt, lease_owner = NULL,
            last_status_code = @statusCode, last_error = @error, updated_at = @now
       WHERE id = @id AND lease_owner = @owner AND attempts = @attempts AND status = 'pending'`,
);

export const insertWebhookAttempt = operation<{
  deliveryId: string;
  endpointId: string;
  attempt: number;
  at: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}>(
  'insert-webhook-attempt',
  () => `INSERT INTO webhook_attempts (delivery_id, endpoint_id, attempt, at, status_code, error, duration_ms)
     VALUES (@deliveryId, @endpointId, @attempt, @at, @statusCode, @error, @durationMs)`,
);

/** A delivery without an endpoint (deleted while it was being announced) is dropped. */
export const dropWebhookDelivery = operation<{ id: string }>('drop-webhook-delivery', () => `DELETE FROM webhook_deliveries WHERE id = @id`);

/** Manual redelivery: due now, with the same id; a delivery in flight is left to its attempt. */
export const redeliverWebhook = operation<{ id: string; endpointId: string; now: number }>(
  'redeliver-webhook',
  () => `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = @now, updated_at = @now
       WHERE id = @id AND endpoint_id = @endpointId AND lease_owner IS NULL`,
);

export const getWebhookDelivery = operation<{ id: string; endpointId: string }, WebhookDeliveryRow>(
  'get-webhook-delivery',
  () => `SELECT ${columns(DELIVERY_COLUMNS)} FROM webhook_deliveries WHERE id = @id AND endpoint_id = @endpointId`,
);

/** A page of an endpoint's deliveries, newest first (ids are time-ordered); `after` '~' for the first page. */
export const listWebhookDeliveries = operation<{ endpointId: string; after: string; limit: number }, WebhookDeliveryRow>(
  'list-webhook-deliveries',
  (dialect) => `SELECT ${columns(DELIVERY_COLUMNS)} FROM webhook_deliveries
       WHERE endpoint_id = @endpointId AND id ${bytewise(dialect)} < @after
    ORDER BY id ${bytewise(dialect)} DESC LIMIT @limit`,
);

export interface WebhookAttemptRow {
  delivery_id: string;
  attempt: Int;
  at: Int;
  status_code: number | null;
  error: string | null;
  duration_ms: Int;
}

/** The attempts of a page of deliveries: those of the endpoint between the page's first and last ids. */
export const listWebhookAttempts = operation<{ endpointId: string; low: string; high: string }, WebhookAttemptRow>(
  'list-webhook-attempts',
  (dialect) => `SELECT delivery_id, attempt, at, status_code, error, duration_ms FROM webhook_attempts
       WHERE endpoint_id = @endpointId AND delivery_id ${bytewise(dialect)} >= @low AND delivery_id ${bytewise(dialect)} <= @high
    ORDER BY attempt`,
);
