/**
 * Reference inputs the sandbox does not draw (`images`, `videos`, `audios`, `audio`) are still
 * held to the address policy that `image` meets when it is fetched: the same URL is refused in
 * any field, with the same failure (`input_refused`, param the field).
 */
import type { FetchAllowList } from '../../outbound/address-policy.js';
import { FetchError } from '../../outbound/client.js';
import { assertPublicUrl, type Resolve } from '../../outbound/url-refusal.js';
import type { ResolvedParams } from '../types.js';
import { fetchFailure } from './inputs.js';

const LIST_FIELDS = ['images', 'videos', 'audios'] as const;

function httpsUrls(params: ResolvedParams): { field: string; url: string }[] {
  const found: { field: string; url: string }[] = [];
  const add = (field: string, value: unknown) => {
    // https values only: a data URL, or an input the gateway stored (a reference), is no URL.
    if (typeof value === 'string' && /^https:/i.test(value)) found.push({ field, url: value });
  };
  for (const field of LIST_FIELDS) {
    const value = params[field];
    if (Array.isArray(value)) for (const item of value) add(field, item);
  }
  add('audio', params['audio']);
  return found;
}

export async function checkReferenceUrls(params: ResolvedParams, allow: FetchAllowList, signal: AbortSignal, resolve?: Resolve): Promise<void> {
  for (const { field, url } of httpsUrls(params)) {
    signal.throwIfAborted();
    try {
      await assertPublicUrl(url, allow, resolve);
    } catch (error) {
      if (error instanceof FetchError) throw fetchFailure(field, error);
      throw error;
    }
  }
}
