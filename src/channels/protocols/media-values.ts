/**
 * Media inputs for upstreams that take a URL or an inline data URL in the same field
 * (DashScope, Ark): an https value is passed as is (the upstream fetches it); a data URL is
 * published as a signed URL of ours when the deployment can, else sent inline.
 */
import { MediaInputError, type ChannelContext } from '../protocol.js';

export async function urlOrInline(ctx: ChannelContext, value: unknown, param: string): Promise<string> {
  if (typeof value !== 'string') throw new MediaInputError(param, `'${param}' is not a media string`);
  if (ctx.media.kind(value) === 'https') return value;
  try {
    return (await ctx.media.publicUrl(value)) ?? value;
  } catch (err) {
    throw new MediaInputError(param, err instanceof Error ? err.message : 'the input could not be published');
  }
}

/**
 * A media input the upstream takes by URL only (Ark's video and audio, MiniMax's audio and
 * video): an https value as is, a data URL published as a signed URL of ours, else refused.
 */
export async function urlOnly(ctx: ChannelContext, value: string, param: string, provider: string, what: string): Promise<string> {
  if (ctx.media.kind(value) === 'https') return value;
  const url = await ctx.media.publicUrl(value);
  if (url === null)
    throw new MediaInputError(
      param,
      `'${param}' is a data URL; ${provider} takes ${what} by URL only, and this deployment has no public base URL to serve it.`,
    );
  return url;
}

export function stringList(value: unknown): readonly string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
