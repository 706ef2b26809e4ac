/** The part of s3rver (which ships no types) the tests use: ./s3.ts. */
declare module 's3rver' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export default class S3rver {
    constructor(options: { directory: string; silent?: boolean; configureBuckets?: { name: string }[] });
    configureBuckets(): Promise<void>;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  }
}
