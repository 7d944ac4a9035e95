declare module 's3rver' {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory?: string;
    resetOnClose?: boolean;
    allowMismatchedSignatures?: boolean;
    configureBuckets?: Array<{ name: string; configs?: Array<string | Buffer> }>;
  }
  export default class S3rver {
    constructor(options?: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
    on(event: 'event', listener: (event: unknown) => void): this;
    /** Koa's middleware list, composed at run(). */
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- an ambient module cannot import a relative module
    middleware: Array<(ctx: import('./s3-part-copy.js').Ctx, next: () => Promise<void>) => unknown>;
    /** The filesystem store behind the emulator. */
    // eslint-disable-next-line @typescript-eslint/consistent-type-imports -- an ambient module cannot import a relative module
    store: import('./s3-part-copy.js').FilesystemStore;
  }
}
