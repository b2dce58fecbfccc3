import { randomBytes } from 'node:crypto';
import type { ModelKind } from '../catalog/index.js';

// 128 random bits, URL-safe; the prefix only helps a human tell the families apart.
export function newTaskId(kind: ModelKind): string {
  return `${kind === 'video' ? 'vid' : 'img'}_${randomBytes(16).toString('base64url')}`;
}
