import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import type { StoredFile } from '../../storage/storage.js';
import { inputKey } from '../../storage/inputs.js';
import { pathParam, type DepsOf, type Handler } from '../route.js';

/** The files module's: the signer that checks a URL, and the stores of outputs and inputs. */
type FileDeps = DepsOf<'signer' | 'storage' | 'inputs'>;

// `sandbox` alone gives the document an opaque origin, and Chromium's media document then fetches
// the file cross-origin and is refused; `allow-same-origin` keeps the sandbox (no scripts, no
// forms, no popups) with the file's own origin. Verified in test/console-browser.test.ts.
export const FILE_CSP = "default-src 'none'; media-src 'self'; img-src 'self'; style-src 'unsafe-inline'; sandbox allow-same-origin";

/** Longest a client may cache a file, when its URL lives longer than this. */
const MAX_CACHE_S = 3600;

const RANGE = /^bytes=(\d*)-(\d*)$/;

/** A query parameter as a string ('' when absent or repeated). */
function queryParam(query: unknown, name: string): string {
  const value = typeof query === 'object' && query !== null ? (query as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/**
 * `GET /inputs/{folder}/{name}`: an input published for an upstream to fetch
 * (ChannelMedia.publish, when MEDIAGATE_PUBLIC_URL is set), at a signed URL that expires
 * within the hour; no API key.
 */
export function getInput({ ctx }: FileDeps): Handler {
  return async (request, reply) => {
    const folder = pathParam(request, 'folder');
    const name = pathParam(request, 'name');
    const exp = queryParam(request.query, 'exp');
    const signature = ctx.signer.check(inputKey(folder, name), exp, queryParam(request.query, 'sig'), Math.floor(Date.now() / 1000));
    if (signature === 'expired') throw errors.urlExpired();
    if (signature === 'invalid') throw errors.invalidSignature();
    const file = await ctx.inputs?.open(folder, name);
    if (!file) throw errors.fileGone();
    reply
      .header('content-type', file.contentType)
      .header('content-length', file.size)
      .header('cache-control', 'private, no-store')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', FILE_CSP)
      .header('referrer-policy', 'no-referrer');
    return reply.send(file.stream());
  };
}

/**
 * `GET /files/{task}/{name}`: output files at signed, expiring URLs; no API key, so a browser or
 * a plain `curl` can fetch them. Single byte ranges are served so video players can seek.
 */
export function getFile({ ctx }: FileDeps): Handler {
  return async (request, reply) => {
    const name = pathParam(request, 'name');
    const key = `${pathParam(request, 'task')}/${name}`;
    const exp = queryParam(request.query, 'exp');
    const nowS = Math.floor(Date.now() / 1000);
    const signature = ctx.signer.check(key, exp, queryParam(request.query, 'sig'), nowS);
    if (signature === 'expired') throw errors.urlExpired();
    if (signature === 'invalid') throw errors.invalidSignature();
    const file = await ctx.storage.open(key);
    if (!file) throw errors.fileGone();
    reply
      .header('content-type', file.contentType)
      // A cached copy must not outlive the URL: an expired URL answers url_expired.
      .header('cache-control', `private, max-age=${Math.max(0, Math.min(MAX_CACHE_S, Number(exp) - nowS))}`)
      .header('x-content-type-options', 'nosniff')
      // A file is media, never a page: no scripts, no framing of anything, sandboxed if opened.
      // Opened directly, the browser wraps it in its own media document, which loads the
      // file itself (media-src/img-src 'self') and styles it inline; nothing else is allowed.
      .header('content-security-policy', FILE_CSP)
      .header('referrer-policy', 'no-referrer')
      // Players on other origins may embed outputs (the URL itself is the credential).
      .header('cross-origin-resource-policy', 'cross-origin')
      .header('content-disposition', `inline; filename="${name}"`);
    return sendStoredFile(request, reply, file);
  };
}

/**
 * A stored file's bytes as the answer: whole, or the single byte range asked for (206, or 416
 * past its end), so players can seek. The front doors' `GET /v1/videos/{id}/content` answers
 * the same way.
 */
export function sendStoredFile(request: FastifyRequest, reply: FastifyReply, file: StoredFile): FastifyReply {
  reply.header('accept-ranges', 'bytes');
  const range = RANGE.exec(request.headers.range ?? '');
  if (range && (range[1] !== '' || range[2] !== '')) {
    let start = range[1] === '' ? Math.max(0, file.size - Number(range[2])) : Number(range[1]);
    let end = range[1] === '' || range[2] === '' ? file.size - 1 : Math.min(Number(range[2]), file.size - 1);
    if (start > end || start >= file.size) {
      return reply.code(416).header('content-range', `bytes */${file.size}`).send();
    }
    start = Math.max(0, start);
    end = Math.max(start, end);
    reply
      .code(206)
      .header('content-range', `bytes ${start}-${end}/${file.size}`)
      .header('content-length', end - start + 1);
    return reply.send(file.stream({ start, end }));
  }
  reply.header('content-length', file.size);
  return reply.send(file.stream());
}
