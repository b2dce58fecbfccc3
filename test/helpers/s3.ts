import { randomBytes } from 'node:crypto';
import { S3Client } from '../../src/storage/s3/client.js';

/**
 * The real S3 server of the specs: Ceph's RADOS Gateway, started by `.ci/s3-server start`
 * (`.ci/run` does it before the tests), which exports MEDIAGATE_TEST_S3_ENDPOINT, _BUCKET,
 * _ACCESS_KEY and _SECRET_KEY. Without them, S3 specs skip with HOW_TO_RUN_S3; under CI
 * (CI=true) that is an error: there they must run. Each use gets a key prefix of its own in the
 * one bucket, so specs share the server and list only their own objects.
 */
export const HOW_TO_RUN_S3 = 'to run them, start the S3 server with `eval "$(.ci/s3-server start)"` (Debian packages radosgw ceph-mon ceph-osd; about 20 s)';

export interface S3Target {
  readonly endpoint: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** The S3 server of this run, or undefined (then S3 specs skip with `reason`). */
export function s3Target(): { target: S3Target | undefined; reason: string } {
  const env = process.env;
  const endpoint = env['MEDIAGATE_TEST_S3_ENDPOINT'];
  const bucket = env['MEDIAGATE_TEST_S3_BUCKET'];
  const accessKeyId = env['MEDIAGATE_TEST_S3_ACCESS_KEY'];
  const secretAccessKey = env['MEDIAGATE_TEST_S3_SECRET_KEY'];
  if (endpoint && bucket && accessKeyId && secretAccessKey) return { target: { endpoint, bucket, accessKeyId, secretAccessKey }, reason: '' };
  if (env['CI']) throw new Error(`no S3 server (MEDIAGATE_TEST_S3_ENDPOINT is not set), and under CI its specs must run; ${HOW_TO_RUN_S3}.`);
  const reason = `S3 specs skipped: MEDIAGATE_TEST_S3_ENDPOINT is not set; ${HOW_TO_RUN_S3}`;
  // Once per run: the test processes inherit the environment of the one that showed it.
  if (!env['MEDIAGATE_TEST_S3_SKIP_SHOWN']) process.stderr.write(`\n${reason}\n\n`);
  env['MEDIAGATE_TEST_S3_SKIP_SHOWN'] = '1';
  return { target: undefined, reason };
}

/** A fresh key prefix (`t-<random>`), without its trailing slash. */
export function freshPrefix(): string {
  return `t-${randomBytes(8).toString('hex')}`;
}

/** The configuration variables of a mediagate storing its media in `target` under `prefix`. */
export function s3Env(target: S3Target, prefix: string): Record<string, string> {
  return {
    MEDIAGATE_STORAGE: 's3',
    MEDIAGATE_S3_BUCKET: target.bucket,
    MEDIAGATE_S3_PREFIX: prefix,
    MEDIAGATE_S3_ENDPOINT: target.endpoint,
    MEDIAGATE_S3_REGION: 'us-east-1',
    MEDIAGATE_S3_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: target.accessKeyId,
    AWS_SECRET_ACCESS_KEY: target.secretAccessKey,
  };
}

/** A client of the test bucket, to look at what mediagate left there. */
export function s3Client(target: S3Target): S3Client {
  return new S3Client({
    bucket: target.bucket,
    endpoint: target.endpoint,
    region: 'us-east-1',
    pathStyle: true,
    credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
  });
}

/** Every key in the bucket under `prefix/` (listed from the server, not assumed). */
export async function listKeys(target: S3Target, prefix: string): Promise<string[]> {
  const client = s3Client(target);
  try {
    const keys: string[] = [];
    for await (const object of client.list(`${prefix}/`)) keys.push(object.key.slice(prefix.length + 1));
    return keys.sort();
  } finally {
    await client.close();
  }
}

/** Deletes everything under `prefix/` (after a spec). */
export async function emptyPrefix(target: S3Target, prefix: string): Promise<void> {
  const client = s3Client(target);
  try {
    const keys: string[] = [];
    for await (const object of client.list(`${prefix}/`)) keys.push(object.key);
    for (const key of keys) await client.deleteObject(key);
  } finally {
    await client.close();
  }
}
