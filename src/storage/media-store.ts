import { ConfigError, type Config } from '../config.js';
import { explainFailure } from '../outbound/client.js';
import type { BlobStore } from './blobs.js';
import { LocalBlobStore } from './local-blobs.js';
import { S3BlobStore } from './s3/blobs.js';
import { S3Client, S3Error } from './s3/client.js';

/**
 * The media store a configuration names: the data directory, or the S3 bucket (checked here: a
 * missing bucket, refused credentials or an unreachable endpoint is a ConfigError naming the
 * variable at fault, exit 78 at start).
 */
export async function openMediaStore(config: Pick<Config, 'storage' | 'dataDir'>): Promise<BlobStore> {
  const storage = config.storage;
  if (storage.kind === 'local') return new LocalBlobStore(config.dataDir);
  const client = new S3Client({
    bucket: storage.bucket,
    endpoint: storage.endpoint,
    region: storage.region,
    pathStyle: storage.pathStyle,
    credentials: storage.credentials,
  });
  try {
    await client.headBucket();
  } catch (error) {
    await client.close();
    throw storageFault(storage.bucket, storage.endpoint, error);
  }
  return new S3BlobStore(client, storage.bucket, storage.prefix);
}

/** What a failed bucket check means for the operator: the variable to fix. */
function storageFault(bucket: string, endpoint: string | undefined, error: unknown): Error {
  const where = endpoint ?? 'AWS';
  if (error instanceof S3Error) {
    if (error.code === 'NoSuchBucket')
      return new ConfigError(`MEDIAGATE_S3_BUCKET: the bucket '${bucket}' does not exist at ${where} (create it first; mediagate never creates one).`);
    if (error.status === 403)
      return new ConfigError(`AWS_ACCESS_KEY_ID: the store at ${where} refused these credentials for the bucket '${bucket}' (${error.code}).`);
    return new ConfigError(`MEDIAGATE_S3_ENDPOINT: the store at ${where} answered ${error.status} (${error.code}) for the bucket '${bucket}'.`);
  }
  const { code } = explainFailure(error);
  return new ConfigError(
    `MEDIAGATE_S3_ENDPOINT: the store at ${where} cannot be reached (${code ?? (error instanceof Error ? error.message : String(error))}).`,
  );
}
