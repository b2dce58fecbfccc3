import { bigint, bytewise, type Dialect } from './dialect.js';
import { usageDay, periodStart } from './usage-sql.js';
import { activeTaskTriggers } from './active-tasks-sql.js';

/** The PostgreSQL notification channel of task changes (tasks/feed.ts listens on it). */
export const TASK_CHANNEL = 'mediagate_task';

/** The PostgreSQL notification channel of key changes (tasks/feed.ts listens on it; auth/api-keys.ts drops its cache). */
export const KEY_CHANNEL = 'mediagate_key';

/**
 * Versioned schema migrations, applied in order at start (and by `mediagate migrate`). A
 * migration is never edited once released; a change is a new version. Each step names its SQL
 * per dialect where the two differ (SQLite INTEGER is 64-bit; PostgreSQL needs BIGINT).
 */
interface Migration {
  readonly version: number;
  readonly name: string;
  readonly up: (dialect: Dialect) => readonly string[];
}

const ACTIVE = `('queued', 'processing')`;

/**
 * The bytes of the stored-input references (`mediagate-input:<name>;<mime>;<bytes>`,
 * storage/inputs.ts) in a task's top-level media fields, as SQL over the row's `params`: the
 * backfill of migration 10. Only media fields are read, so a prompt cannot pass for a reference.
 */
function referencedBytes(dialect: Dialect): string {
  if (dialect === 'postgres') {
    return `(SELECT COALESCE(sum(split_part(v, ';', 3)::bigint), 0) FROM (
               SELECT e.value #>> '{}' AS v FROM jsonb_each(tasks.params::jsonb) AS e
                WHERE e.key IN ('image', 'end_image', 'audio') AND jsonb_typeof(e.value) = 'string'
               UNION ALL
               SELECT a.v FROM jsonb_each(tasks.params::jsonb) AS e, jsonb_array_elements_text(e.value) AS a(v)
                WHERE e.key IN ('images', 'videos', 'audios') AND jsonb_typeof(e.value) = 'array') AS refs
              WHERE v ~ '^mediagate-input:[^;]*;[^;]*;[0-9]{1,12}$')`;
  }
  // 'mediagate-input:' is 16 characters; the bytes follow the second ';' after it.
  const rest = `substr(j.value, 17)`;
  const afterName = `substr(${rest}, instr(${rest}, ';') + 1)`;
  const bytes = `substr(${afterName}, instr(${afterName}, ';') + 1)`;
  return `(SELECT COALESCE(sum(CAST(${bytes} AS INTEGER)), 0) FROM json_tree(tasks.params) AS j
            WHERE j.type = 'text' AND j.value LIKE 'mediagate-input:%'
              AND ((j.path = '$' AND j.key IN ('image', 'end_image', 'audio')) OR j.path IN ('$.images', '$.videos', '$.audios')))`;
}

/**
 * Whether a row (`OLD`, `NEW`, or an alias) holds a slot of its channel: the predicate the
 * scheduler's max_in_flight counted before migration 13, and what `channel_slots.held` counts.
 */
function holdsSlot(row: string): string {
  return `(${row}.channel <> 'sandbox' AND ${row}.status IN ('queued', 'processing') AND ${row}.upstream_state IS NOT NULL)`;
}

/**
 * The triggers that keep `channel_slots` (migration 13). A new task never holds a slot (it is
 * inserted queued, unsubmitted), so only updates and deletes move the counters. Every statement
 * that changes whether a task holds a slot changes that one task (the submission, acceptance,
 * settle, cancel and failover statements of sql/upstream.ts and sql/cancel.ts): a row trigger
 * locks one counter row, after the task's, so two transactions never take them in two orders.
 * Rows are never deleted at zero: a delete racing a concurrent increment could lose it.
 */
function slotTriggers(dialect: Dialect): readonly string[] {
  const moved = `(${holdsSlot('OLD')} <> ${holdsSlot('NEW')} OR (${holdsSlot('NEW')} AND (OLD.channel <> NEW.channel OR OLD.owner <> NEW.owner)))`;
  const release = (row: string): string => `UPDATE channel_slots SET held = held - 1 WHERE channel = ${row}.channel AND owner = ${row}.owner`;
  const take = `INSERT INTO channel_slots (channel, owner, held) VALUES (NEW.channel, NEW.owner, 1)
                ON CONFLICT (channel, owner) DO UPDATE SET held = channel_slots.held + 1`;
  if (dialect === 'sqlite') {
    return [
      `CREATE TRIGGER tasks_slots AFTER UPDATE OF status, channel, owner, upstream_state ON tasks WHEN ${moved}
       BEGIN
         ${release('OLD')} AND ${holdsSlot('OLD')};
         ${take.replace('VALUES (NEW.channel, NEW.owner, 1)', `SELECT NEW.channel, NEW.owner, 1 WHERE ${holdsSlot('NEW')}`)};
       END`,
      `CREATE TRIGGER tasks_slots_delete AFTER DELETE ON tasks WHEN ${holdsSlot('OLD')}
       BEGIN ${release('OLD')}; END`,
    ];
  }
  return [
    `CREATE FUNCTION mediagate_channel_slots() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF ${holdsSlot('OLD')} THEN ${release('OLD')}; END IF;
       IF TG_OP = 'UPDATE' THEN
         IF ${holdsSlot('NEW')} THEN ${take}; END IF;
       END IF;
       RETURN NULL;
     END $$`,
    `CREATE TRIGGER tasks_slots AFTER UPDATE OF status, channel, owner, upstream_state ON tasks FOR EACH ROW
     WHEN ${moved} EXECUTE FUNCTION mediagate_channel_slots()`,
    `CREATE TRIGGER tasks_slots_delete AFTER DELETE ON tasks FOR EACH ROW
     WHEN ${holdsSlot('OLD')} EXECUTE FUNCTION mediagate_channel_slots()`,
  ];
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tasks, api keys, meta',
    up: (dialect) => {
      const int64 = bigint(dialect);
      return [
        `CREATE TABLE tasks (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL,
          model TEXT NOT NULL,
          owner TEXT NOT NULL,
          status TEXT NOT NULL,
          progress INTEGER,
          created_at ${int64} NOT NULL,
          started_at ${int64},
          completed_at ${int64},
          error TEXT,
          outputs TEXT NOT NULL DEFAULT '[]',
          attempt INTEGER NOT NULL DEFAULT 0,
          lease_owner TEXT,
          lease_expires_at ${int64},
          params TEXT NOT NULL
        )`,
        // Claiming reads the oldest queued task; takeover reads expired leases.
        `CREATE INDEX tasks_queued ON tasks (created_at, id) WHERE status = 'queued'`,
        `CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE status = 'processing'`,
        `CREATE TABLE api_keys (
          id TEXT PRIMARY KEY,
          hash TEXT NOT NULL UNIQUE,
          name TEXT NOT NULL,
          created_at ${int64} NOT NULL,
          revoked_at ${int64}
        )`,
        `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
      ];
    },
  },
  {
    version: 2,
    name: 'tasks.interruptions: attempts lost to a stopped worker',
    // `attempt` counts every claim (it is the settle fence), including the claims after a
    // graceful hand-back; only attempts whose worker stopped count towards MEDIAGATE_MAX_ATTEMPTS.
    up: () => [`ALTER TABLE tasks ADD COLUMN interruptions INTEGER NOT NULL DEFAULT 0`],
  },
  {
    version: 3,
    name: 'task lists by owner, idempotency keys',
    up: (dialect) => [
      // The list operation: newest first (ids are time-ordered) within one owner and family.
      `CREATE INDEX tasks_owner_kind ON tasks (owner, kind, id ${bytewise(dialect)})`,
      // The primary key decides between concurrent creates with one key, across processes.
      `CREATE TABLE idempotency_keys (
        owner TEXT NOT NULL,
        key TEXT NOT NULL,
        kind TEXT NOT NULL,
        request_hash TEXT NOT NULL,
        task_id TEXT NOT NULL,
        created_at ${bigint(dialect)} NOT NULL,
        PRIMARY KEY (owner, key)
      )`,
      `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
    ],
  },
  {
    version: 4,
    name: 'tasks.version: bumped by every transition; PostgreSQL notifies each change on commit',
    // `version` orders a task's events across processes (the SSE `id`). On PostgreSQL a row
    // trigger sends `pg_notify('mediagate_task', id)` whenever a statement bumps it: a NOTIFY
    // is delivered only when its transaction commits, so listeners never see a change that was
    // rolled back, and every transition statement (the batch forms too) is covered in one place.
    up: (dialect) =>
      dialect === 'postgres'
        ? [
            `ALTER TABLE tasks ADD COLUMN version INTEGER NOT NULL DEFAULT 0`,
            `CREATE OR REPLACE FUNCTION mediagate_task_notify() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN PERFORM pg_notify('${TASK_CHANNEL}', NEW.id); RETURN NULL; END $$`,
            `CREATE TRIGGER tasks_notify AFTER UPDATE OF version ON tasks FOR EACH ROW
             WHEN (OLD.version IS DISTINCT FROM NEW.version) EXECUTE FUNCTION mediagate_task_notify()`,
          ]
        : [`ALTER TABLE tasks ADD COLUMN version INTEGER NOT NULL DEFAULT 0`],
  },
  {
    version: 5,
    name: 'upstream channel lifecycle (docs/channels.md "The lifecycle")',
    // channel 'sandbox' is a render; any other channel is driven by the upstream scheduler,
    // which claims by next_check_at (its lease and its timer in one column).
    up: (dialect) => {
      const int64 = bigint(dialect);
      return [
        `ALTER TABLE tasks ADD COLUMN channel TEXT NOT NULL DEFAULT 'sandbox'`,
        `ALTER TABLE tasks ADD COLUMN target INTEGER NOT NULL DEFAULT 0`,
        `ALTER TABLE tasks ADD COLUMN upstream_id TEXT`,
        `ALTER TABLE tasks ADD COLUMN upstream_state TEXT`,
        `ALTER TABLE tasks ADD COLUMN upstream_request_id TEXT`,
        `ALTER TABLE tasks ADD COLUMN upstream_since ${int64}`,
        `ALTER TABLE tasks ADD COLUMN next_check_at ${int64}`,
        `ALTER TABLE tasks ADD COLUMN check_interval_ms INTEGER`,
        `CREATE INDEX tasks_upstream_due ON tasks (next_check_at) WHERE channel <> 'sandbox' AND status IN ('queued', 'processing')`,
        // A channel's request pacing, shared by every process: the next free slot per bucket.
        `CREATE TABLE channel_limits (
          channel TEXT NOT NULL,
          bucket TEXT NOT NULL,
          next_free_at ${int64} NOT NULL,
          PRIMARY KEY (channel, bucket)
        )`,
      ];
    },
  },
  {
    version: 6,
    name: 'webhooks: endpoints, the delivery outbox and its attempts; tasks.announced',
    // `announced` starts at 0 for new rows (the insert statements stay as they are) and is set
    // for tasks already final when the migration runs: only tasks settling afterwards are events.
    up: (dialect) => {
      const int64 = bigint(dialect);
      return [
        `ALTER TABLE tasks ADD COLUMN announced INTEGER NOT NULL DEFAULT 0`,
        `UPDATE tasks SET announced = 1 WHERE status IN ('completed', 'failed', 'cancelled')`,
        `CREATE INDEX tasks_unannounced ON tasks (completed_at) WHERE announced = 0 AND status IN ('completed', 'failed', 'cancelled')`,
        `CREATE TABLE webhook_endpoints (
          id TEXT PRIMARY KEY,
          owner TEXT NOT NULL,
          url TEXT NOT NULL,
          events TEXT NOT NULL,
          secret TEXT NOT NULL,
          created_at ${int64} NOT NULL
        )`,
        `CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner, created_at)`,
        `CREATE TABLE webhook_deliveries (
          id TEXT PRIMARY KEY,
          endpoint_id TEXT NOT NULL,
          owner TEXT NOT NULL,
          type TEXT NOT NULL,
          task_id TEXT NOT NULL,
          payload TEXT NOT NULL,
          status TEXT NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          next_attempt_at ${int64},
          lease_owner TEXT,
          last_status_code INTEGER,
          last_error TEXT,
          created_at ${int64} NOT NULL,
          updated_at ${int64} NOT NULL
        )`,
        `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`,
        `CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id ${bytewise(dialect)})`,
        `CREATE TABLE webhook_attempts (
          delivery_id TEXT NOT NULL,
          endpoint_id TEXT NOT NULL,
          attempt INTEGER NOT NULL,
          at ${int64} NOT NULL,
          status_code INTEGER,
          error TEXT,
          duration_ms INTEGER NOT NULL,
          PRIMARY KEY (delivery_id, attempt)
        )`,
        `CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, delivery_id ${bytewise(dialect)})`,
      ];
    },
  },
  {
    version: 7,
    name: 'tasks.fair_rank: fair order between API keys (start-time fair queueing)',
    // A task's place in its channel's queue, set at insert: one more than its owner's highest
    // active rank, and at least the lowest rank still queued. A key that floods gets ranks
    // 0..N; a key arriving later starts at the queue's current front, so keys take turns
    // whoever came first (docs/architecture.md "Fairness between keys"). Existing tasks get 0:
    // they go first, in creation order, as before.
    up: (dialect) => [
      `ALTER TABLE tasks ADD COLUMN fair_rank ${bigint(dialect)} NOT NULL DEFAULT 0`,
      // The claims' order and the queue's front (min rank) per channel.
      `CREATE INDEX tasks_fair ON tasks (channel, fair_rank, created_at, id) WHERE status = 'queued'`,
      // An owner's highest active rank, read by every insert.
      `CREATE INDEX tasks_owner_rank ON tasks (owner, channel, fair_rank) WHERE status IN ('queued', 'processing')`,
    ],
  },
  {
    version: 8,
    name: 'retention: final tasks by completion time',
    // The retention sweep (tasks/retention.ts) deletes final tasks completed before a time, oldest first.
    up: () => [`CREATE INDEX tasks_final_completed ON tasks (completed_at) WHERE status IN ('completed', 'failed', 'cancelled')`],
  },
  {
    version: 9,
    name: 'usage and budgets: key settings, reservations, per-task usage and cost, the daily rollup, the charge trigger',
    // Money is integer micro-units (1 unit = 1,000,000). The charge is a trigger so that every
    // statement that ends a task (settle, upstream settle, cancel, abandoned-task fail) charges
    // it in its own transaction, exactly once: the transition is a guarded UPDATE that takes
    // effect once, and the trigger fires only on a queued|processing -> final change.
    // docs/usage-and-budgets.md explains the whole mechanism.
    up: (dialect) => {
      const int64 = bigint(dialect);
      const bool = dialect === 'postgres' ? 'BOOLEAN NOT NULL DEFAULT false' : 'INTEGER NOT NULL DEFAULT 0';
      const columns = [
        `ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'client'`,
        `ALTER TABLE api_keys ADD COLUMN budget ${int64}`,
        `ALTER TABLE api_keys ADD COLUMN budget_period TEXT`,
        `ALTER TABLE api_keys ADD COLUMN models TEXT`,
        `ALTER TABLE api_keys ADD COLUMN rate_limit_per_min INTEGER`,
        `ALTER TABLE api_keys ADD COLUMN max_tasks_in_flight INTEGER`,
        `ALTER TABLE api_keys ADD COLUMN disabled ${bool}`,
        // What the key's active tasks hold (the sum of their reserved_cost).
        `ALTER TABLE api_keys ADD COLUMN reserved ${int64} NOT NULL DEFAULT 0`,
        // What the key's tasks final in the period starting at spent_period (unix seconds; 0 for
        // a lifetime budget or none) cost. A task final in a later period starts the sum again.
        `ALTER TABLE api_keys ADD COLUMN spent ${int64} NOT NULL DEFAULT 0`,
        `ALTER TABLE api_keys ADD COLUMN spent_period ${int64} NOT NULL DEFAULT 0`,
        `ALTER TABLE tasks ADD COLUMN reserved_cost ${int64} NOT NULL DEFAULT 0`,
        `ALTER TABLE tasks ADD COLUMN usage_seconds INTEGER`,
        `ALTER TABLE tasks ADD COLUMN usage_images INTEGER`,
        `ALTER TABLE tasks ADD COLUMN cost ${int64}`,
        // What an upstream reported about its own usage (JSON), for the operator only.
        `ALTER TABLE tasks ADD COLUMN upstream_usage TEXT`,
        `CREATE TABLE usage_daily (
          key_id TEXT NOT NULL,
          model TEXT NOT NULL,
          day TEXT NOT NULL,
          tasks ${int64} NOT NULL DEFAULT 0,
          seconds ${int64} NOT NULL DEFAULT 0,
          images ${int64} NOT NULL DEFAULT 0,
          cost ${int64} NOT NULL DEFAULT 0,
          PRIMARY KEY (key_id, model, day)
        )`,
        // The report across keys reads a range of days.
        `CREATE INDEX usage_daily_day ON usage_daily (day)`,
      ];
      const FINAL = `('completed', 'failed', 'cancelled')`;
      const ACTIVE = `('queued', 'processing')`;
      if (dialect === 'sqlite') {
        // One writer at a time: a row trigger, in the transition's own transaction.
        const period = periodStart(dialect, 'budget_period', 'NEW.completed_at');
        return [
          ...columns,
          `CREATE TRIGGER tasks_charge AFTER UPDATE OF status ON tasks
           WHEN OLD.status IN ${ACTIVE} AND NEW.status IN ${FINAL}
           BEGIN
             UPDATE api_keys
                SET reserved = reserved - NEW.reserved_cost,
                    spent = CASE WHEN ${period} > spent_period THEN COALESCE(NEW.cost, 0)
                                 WHEN ${period} = spent_period THEN spent + COALESCE(NEW.cost, 0)
                                 ELSE spent END,
                    spent_period = max(spent_period, ${period})
              WHERE id = NEW.owner;
             INSERT INTO usage_daily (key_id, model, day, tasks, seconds, images, cost)
             VALUES (NEW.owner, NEW.model, ${usageDay(dialect, 'NEW.completed_at')}, 1,
                     COALESCE(NEW.usage_seconds, 0), COALESCE(NEW.usage_images, 0), COALESCE(NEW.cost, 0))
             ON CONFLICT (key_id, model, day) DO UPDATE
                SET tasks = tasks + 1, seconds = seconds + excluded.seconds, images = images + excluded.images, cost = cost + excluded.cost;
           END`,
        ];
      }
      // PostgreSQL: several processes end tasks at once, and one statement may end many (the
      // settles' group commit). A row trigger would lock each task's key as it goes, in the
      // statement's row order, and two batches over the same keys in another order would
      // deadlock. So the charge is a statement trigger over the transition tables: it locks the
      // keys in id order, then upserts the rollup rows in key order. (A statement trigger with
      // transition tables cannot name columns, so it runs after every UPDATE of tasks and
      // returns at once when no row became final.)
      const period = periodStart(dialect, 'k.budget_period', 'c.completed_at');
      return [
        ...columns,
        `CREATE OR REPLACE FUNCTION mediagate_task_charge() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NOT EXISTS (SELECT 1 FROM charge_new n JOIN charge_old o ON o.id = n.id
                           WHERE o.status IN ${ACTIVE} AND n.status IN ${FINAL}) THEN
             RETURN NULL;
           END IF;
           PERFORM 1 FROM api_keys
             WHERE id IN (SELECT n.owner FROM charge_new n JOIN charge_old o ON o.id = n.id
                           WHERE o.status IN ${ACTIVE} AND n.status IN ${FINAL})
             ORDER BY id FOR UPDATE;
           WITH c AS (
             SELECT n.owner, n.reserved_cost, COALESCE(n.cost, 0) AS cost, n.completed_at
               FROM charge_new n JOIN charge_old o ON o.id = n.id
              WHERE o.status IN ${ACTIVE} AND n.status IN ${FINAL}),
           p AS (SELECT c.owner, c.reserved_cost, c.cost, ${period} AS period FROM c JOIN api_keys k ON k.id = c.owner),
           d AS (SELECT owner, sum(reserved_cost) AS released, max(period) AS period FROM p GROUP BY owner),
           s AS (SELECT d.owner, d.released, d.period, COALESCE(sum(p.cost) FILTER (WHERE p.period = d.period), 0) AS cost
                   FROM d JOIN p ON p.owner = d.owner GROUP BY d.owner, d.released, d.period)
           UPDATE api_keys k
              SET reserved = k.reserved - s.released,
                  spent = CASE WHEN s.period > k.spent_period THEN s.cost
                               WHEN s.period = k.spent_period THEN k.spent + s.cost
                               ELSE k.spent END,
                  spent_period = GREATEST(k.spent_period, s.period)
             FROM s WHERE k.id = s.owner;
           INSERT INTO usage_daily AS u (key_id, model, day, tasks, seconds, images, cost)
           SELECT n.owner, n.model, ${usageDay(dialect, 'n.completed_at')} AS day, count(*),
                  sum(COALESCE(n.usage_seconds, 0)), sum(COALESCE(n.usage_images, 0)), sum(COALESCE(n.cost, 0))
             FROM charge_new n JOIN charge_old o ON o.id = n.id
            WHERE o.status IN ${ACTIVE} AND n.status IN ${FINAL}
            GROUP BY 1, 2, 3
            ORDER BY 1, 2, 3
           ON CONFLICT (key_id, model, day) DO UPDATE
              SET tasks = u.tasks + excluded.tasks, seconds = u.seconds + excluded.seconds,
                  images = u.images + excluded.images, cost = u.cost + excluded.cost;
           RETURN NULL;
         END $$`,
        `CREATE TRIGGER tasks_charge AFTER UPDATE ON tasks REFERENCING OLD TABLE AS charge_old NEW TABLE AS charge_new
           FOR EACH STATEMENT EXECUTE FUNCTION mediagate_task_charge()`,
      ];
    },
  },
  {
    version: 10,
    name: 'stored input bytes per key: a counter kept with the tasks',
    // The per-key limit on stored input bytes (MEDIAGATE_KEY_INPUT_BYTES) used to sum the inputs
    // of every queued and processing task of the key on each data-URL create, so a create's cost
    // grew with the key's backlog. Now each task carries its bytes (`input_bytes`) and each key
    // its total (`key_inputs`): a create reserves its bytes in the insert's transaction, guarded
    // by the limit (sql/inputs.ts), and a trigger gives them back in the transaction of whichever
    // statement ends the task (settle, cancel, upstream settle, abandoned-task fail). The
    // backfill counts the references that active tasks already hold.
    up: (dialect) => {
      const int64 = bigint(dialect);
      const release =
        dialect === 'sqlite'
          ? `CREATE TRIGGER tasks_inputs_release AFTER UPDATE OF status ON tasks
             WHEN NEW.input_bytes > 0 AND OLD.status IN ${ACTIVE} AND NEW.status NOT IN ${ACTIVE}
             BEGIN
               UPDATE key_inputs SET bytes = bytes - NEW.input_bytes WHERE owner = NEW.owner;
             END`
          : `CREATE TRIGGER tasks_inputs_release AFTER UPDATE OF status ON tasks FOR EACH ROW
             WHEN (NEW.input_bytes > 0 AND OLD.status IN ${ACTIVE} AND NEW.status NOT IN ${ACTIVE})
             EXECUTE FUNCTION mediagate_inputs_release()`;
      return [
        `ALTER TABLE tasks ADD COLUMN input_bytes ${int64} NOT NULL DEFAULT 0`,
        `CREATE TABLE key_inputs (owner TEXT PRIMARY KEY, bytes ${int64} NOT NULL DEFAULT 0)`,
        `UPDATE tasks SET input_bytes = ${referencedBytes(dialect)}
          WHERE status IN ${ACTIVE} AND params LIKE '%mediagate-input:%'`,
        `INSERT INTO key_inputs (owner, bytes)
         SELECT owner, sum(input_bytes) FROM tasks WHERE status IN ${ACTIVE} AND input_bytes > 0 GROUP BY owner`,
        ...(dialect === 'postgres'
          ? [
              `CREATE OR REPLACE FUNCTION mediagate_inputs_release() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN UPDATE key_inputs SET bytes = bytes - NEW.input_bytes WHERE owner = NEW.owner; RETURN NULL; END $$`,
            ]
          : []),
        release,
      ];
    },
  },
  {
    version: 11,
    name: 'webhook deliveries in flight, by owner and endpoint',
    // The claim counts each key's and each endpoint's attempts in flight (leased: settling clears
    // the lease) to cap them; the first index holds only those few rows. (10 is another change's.)
    up: () => [
      `CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (owner, endpoint_id, next_attempt_at) WHERE lease_owner IS NOT NULL`,
      // Each endpoint's first due deliveries, read by the claim endpoint by endpoint.
      `CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending'`,
    ],
  },
  {
    version: 12,
    name: 'upstream cancels pending a retry (docs/channels.md "The lifecycle", step 7)',
    // Final tasks whose upstream job still needs its cancel: few, and claimed by next_check_at.
    up: () => [`CREATE INDEX tasks_upstream_cancels ON tasks (next_check_at) WHERE upstream_state IS NOT NULL AND status IN ('cancelled', 'failed')`],
  },
  {
    version: 13,
    name: "a channel's slots: held per key, kept by a trigger; the tasks waiting for a slot by channel and key",
    // The check before each submission (max_in_flight and a key's fair share) read the channel's
    // active tasks, so it grew with them. It reads instead `channel_slots`, one row per (channel,
    // key) holding the number of that key's tasks that hold a slot (submitting or submitted, not
    // final), kept by a trigger in the transition's own transaction whatever statement makes the
    // transition; and the partial index of tasks waiting for a slot, a seek per key.
    // (13 is another change's.)
    up: (dialect) => [
      `CREATE TABLE channel_slots (
        channel TEXT NOT NULL,
        owner TEXT NOT NULL,
        held INTEGER NOT NULL,
        PRIMARY KEY (channel, owner)
      )`,
      `INSERT INTO channel_slots (channel, owner, held)
       SELECT channel, owner, count(*) FROM tasks AS t WHERE ${holdsSlot('t')} GROUP BY channel, owner`,
      `CREATE INDEX tasks_channel_waiting ON tasks (channel, owner) WHERE channel <> 'sandbox' AND status = 'queued' AND upstream_state IS NULL`,
      ...slotTriggers(dialect),
    ],
  },
  {
    version: 14,
    name: 'PostgreSQL notifies, on commit, each change of a key that its lookups or its budget presence show',
    // Each process keeps the keys it has seen (and whether each has a budget) for up to 5 s; a
    // disable, a revoke or a change of settings made by another process (the admin API, the
    // CLI) reaches it through this notification at once instead. Row-level, on the columns those
    // caches hold: a create's reservation and a task's charge update `reserved` and `spent` on
    // every create and settle, and must not empty every process's cache. No payload: PostgreSQL
    // sends one notification per transaction for identical ones, and a process drops its whole
    // cache (such changes are rare). A new admin key is heard too (the admin API appears).
    // SQLite has no notifications: there the 5 s stand.
    up: (dialect) => {
      if (dialect !== 'postgres') return [];
      const watched = ['hash', 'role', 'revoked_at', 'disabled', 'models', 'rate_limit_per_min', 'max_tasks_in_flight', 'budget'];
      const changed = watched.map((column) => `OLD.${column} IS DISTINCT FROM NEW.${column}`).join(' OR ');
      return [
        `CREATE OR REPLACE FUNCTION mediagate_key_notify() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_notify('${KEY_CHANNEL}', ''); RETURN NULL; END $$`,
        `CREATE TRIGGER api_keys_notify_update AFTER UPDATE ON api_keys FOR EACH ROW WHEN (${changed}) EXECUTE FUNCTION mediagate_key_notify()`,
        `CREATE TRIGGER api_keys_notify_delete AFTER DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION mediagate_key_notify()`,
        `CREATE TRIGGER api_keys_notify_admin AFTER INSERT ON api_keys FOR EACH ROW WHEN (NEW.role = 'admin') EXECUTE FUNCTION mediagate_key_notify()`,
      ];
    },
  },
  {
    version: 15,
    name: 'a task keeps the trace context of its create (traces, docs/operations/observability.md)',
    // A task's trace context (a W3C traceparent, tracing/): whichever process works on the task
    // later starts its spans in the trace of the request that created it. Null without tracing.
    up: () => [`ALTER TABLE tasks ADD COLUMN trace_context TEXT`],
  },
  {
    version: 16,
    name: "a key's queued and processing tasks, counted with the tasks; the insert decides budgets and in-flight limits under the key's row lock",
    // The in-flight limit used to count a key's active tasks in each API process (cached for a
    // second) and a budget's presence was cached for 5 s, so creates through several processes
    // passed both. Now `api_keys.active_tasks` is kept in the statements that change it (insert:
    // + the rows; the charge trigger: - the rows that became final), and the insert's
    // transaction reads it, the key's own limit and its budget under the key row's lock
    // (the key guard, sql/hot-paths.ts), so no create can read a stale figure.
    up: (dialect) => [
      `ALTER TABLE api_keys ADD COLUMN active_tasks ${bigint(dialect)} NOT NULL DEFAULT 0`,
      `UPDATE api_keys SET active_tasks = (SELECT count(*) FROM tasks WHERE tasks.owner = api_keys.id AND tasks.status IN ${ACTIVE})`,
      ...activeTaskTriggers(dialect),
    ],
  },
  {
    version: 17,
    name: 'SQLite counts a batch of new tasks into their key once, not a trigger per row, and keeps no index of queued tasks by age',
    // SQLite has no statement triggers: migration 16's insert trigger updated the key row once
    // per new task, ~2.5 µs of a create's ~20 µs insert (docs/benchmarks.md). The one statement
    // that inserts tasks on SQLite runs in the group commit's transaction, which now counts the
    // batch's tasks per key after its rows (sql/hot-paths.ts, countInserted); a guard of the
    // same batch adds what is counted so far. The triggers that end and delete active tasks stay.
    // PostgreSQL's insert trigger is a statement trigger already, one per batch: unchanged.
    // `tasks_queued` (created_at of queued tasks) serves only PostgreSQL's sweep of stranded
    // tasks (sql/recovery.ts); on SQLite no statement's plan uses it (EXPLAIN QUERY PLAN of every
    // statement snapshot), and every create paid for its entry (~1.7 µs).
    up: (dialect) => (dialect === 'sqlite' ? ['DROP TRIGGER IF EXISTS tasks_active_insert', 'DROP INDEX IF EXISTS tasks_queued'] : []),
  },
];

export const LATEST_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

export interface MigrationStep {
  readonly version: number;
  /** DDL texts, run in order in the migration's transaction. */
  readonly statements: readonly string[];
}

/**
 * Every migration in order, for one dialect. A store applies each pending one atomically with
 * its record in `mediagate_migrations` (sql/migrations.ts), one process at a time: PostgreSQL
 * runs the whole pass in one transaction holding an advisory lock from its first statement
 * (even `CREATE TABLE IF NOT EXISTS` races between two starters), so the loser waits and then
 * finds everything applied; SQLite runs one transaction per migration (one writer at a time).
 */
export function migrationSteps(dialect: Dialect): readonly MigrationStep[] {
  return MIGRATIONS.map((migration) => ({ version: migration.version, statements: migration.up(dialect) }));
}
