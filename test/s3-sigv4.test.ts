/**
 * The SigV4 signer of the S3 client (src/storage/s3/sigv4.ts) against the worked examples of
 * AWS's "Authenticating Requests: Using the Authorization Header" and "Query Parameters" pages
 * for S3 (bucket `examplebucket`, the documented example credentials, 24 May 2013): the header
 * signature of a ranged GET and a presigned GET URL. Runs without an S3 server; the specs on
 * Ceph RGW (s3-storage.test.ts) check the same signer against a server that refuses bad ones.
 */
import { describe, expect, it } from 'vitest';
import { presignGet, signHeaders, uriEncode } from '../src/storage/s3/sigv4.js';

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
const at = new Date('2013-05-24T00:00:00Z');
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('SigV4 signatures of the S3 client', () => {
  it("signs a ranged GET's headers as AWS's example does", () => {
    const headers = signHeaders({
      method: 'GET',
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      headers: { range: 'bytes=0-9' },
      payloadHash: EMPTY_SHA256,
      credentials,
      region: 'us-east-1',
      now: at,
    });
    expect(headers['x-amz-date']).toBe('20130524T000000Z');
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
        'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
    // A session token is sent and signed.
    const withToken = signHeaders({
      method: 'GET',
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      headers: {},
      payloadHash: EMPTY_SHA256,
      credentials: { ...credentials, sessionToken: 'tok' },
      region: 'us-east-1',
      now: at,
    });
    expect(withToken['x-amz-security-token']).toBe('tok');
    expect(withToken.authorization).toContain('SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,');
  });

  it("presigns a GET URL for a day as AWS's example does", () => {
    const url = new URL(
      presignGet({ url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'), credentials, region: 'us-east-1', signedAt: at, expiresS: 86_400 }),
    );
    expect(url.searchParams.get('X-Amz-Credential')).toBe('AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request');
    expect(url.searchParams.get('X-Amz-Expires')).toBe('86400');
    expect(url.searchParams.get('X-Amz-Signature')).toBe('aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404');
  });

  it('percent-encodes as SigV4 wants: only A-Z a-z 0-9 - _ . ~ stay', () => {
    expect(uriEncode("a b/c*d'(e)!~_.-")).toBe('a%20b%2Fc%2Ad%27%28e%29%21~_.-');
  });
});
