/**
 * ChannelMedia over the media fetcher: how an adapter turns an input value (data URL or https
 * URL, as the catalog accepted it) into what its upstream takes. https values are fetched under
 * the media fetch policy only when an upstream needs bytes; otherwise the upstream fetches them.
 */
import { checkMediaString } from '../media/data-url.js';
import { loadMediaInput, type FetchOptions } from '../media/fetcher.js';
import { FetchError } from '../outbound/client.js';
import { MediaInputError, type ChannelMedia } from './protocol.js';

export interface ChannelMediaOptions {
  readonly fetch?: FetchOptions;
  /**
   * Stores bytes and returns a short-lived signed URL the upstream can fetch, or null when the
   * deployment has no public base URL. Wired by the lifecycle; absent: data URLs have no URL.
   */
  readonly publish?: (bytes: Buffer, mime: string) => Promise<string | null>;
}

export function createChannelMedia(options: ChannelMediaOptions = {}): ChannelMedia {
  async function bytes(value: string): Promise<{ bytes: Buffer; mime: string }> {
    try {
      return await loadMediaInput(value, options.fetch);
    } catch (err) {
      const reason = err instanceof FetchError ? err.message : 'the input could not be read';
      throw new MediaInputError('', reason);
    }
  }
  return {
    kind(value) {
      const check = checkMediaString(value);
      return check.ok && check.kind === 'data' ? 'data' : 'https';
    },
    bytes,
    async dataUrl(value) {
      const check = checkMediaString(value);
      if (check.ok && check.kind === 'data') return value;
      const got = await bytes(value);
      return `data:${got.mime || 'application/octet-stream'};base64,${got.bytes.toString('base64')}`;
    },
    async publicUrl(value) {
      const check = checkMediaString(value);
      if (check.ok && check.kind === 'https') return value;
      if (options.publish === undefined) return null;
      const got = await bytes(value);
      return options.publish(got.bytes, got.mime);
    },
  };
}
