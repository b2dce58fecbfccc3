import type { Generated } from 'kysely';

/** Tables as Kysely sees them; both dialects share this shape (see migrations.ts). */
export interface TasksTable {
  id: string;
  kind: string;
  model: string;
  owner: string;
  status: string;
  progress: number | null;
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  /** JSON of TaskError. */
  error: string | null;
  /** JSON array of TaskOutput. */
  outputs: string;
  attempt: Generated<number>;
  /** Attempts whose worker stopped without settling (taken over after the lease expired). */
  interruptions: Generated<number>;
  /** The worker holding the lease; once settled, the worker that settled the task. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** JSON of the resolved parameters; last, so reads of the other columns skip its pages. */
  params: string;
}

export interface ApiKeysTable {
  id: string;
  /** sha256 of the key, hex; the key itself is never stored. */
  hash: string;
  name: string;
  created_at: number;
  revoked_at: number | null;
}

export interface MetaTable {
  key: string;
  value: string;
}

export interface MigrationsTable {
  version: number;
  applied_at: number;
}

export interface Database {
  tasks: TasksTable;
  api_keys: ApiKeysTable;
  meta: MetaTable;
  mediagate_migrations: MigrationsTable;
}
