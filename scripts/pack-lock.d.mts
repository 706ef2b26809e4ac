// Types of scripts/pack-lock.mjs (plain JavaScript: scripts/pack.mjs runs on bare Node).
export declare function withPackLock<T>(root: string, fn: () => Promise<T>, waitMs?: number): Promise<T>;
