import { randomBytes } from 'node:crypto';
import type { ModelKind } from '../catalog/index.js';

// Entropy is drawn in blocks: one call into the CSPRNG serves 256 ids (as randomUUID does).
const ID_BYTES = 16;
let pool = Buffer.alloc(0);
let offset = 0;

function randomId(): string {
  if (offset + ID_BYTES > pool.length) {
    pool = randomBytes(ID_BYTES * 256);
    offset = 0;
  }
  const id = pool.toString('base64url', offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return id;
}

// 128 random bits, URL-safe; the prefix only helps a human tell the families apart.
export function newTaskId(kind: ModelKind): string {
  return `${kind === 'video' ? 'vid' : 'img'}_${randomId()}`;
}
