// Types of scripts/build-info.mjs (plain JavaScript, so that `npm start` checks the build without a TypeScript loader).
export declare const ROOT: string;
export declare const BUILD_DIR: string;
export declare const INFO_FILE: string;
export declare const EXTRA_INPUTS: string[];
export declare function sha256(file: string): string;
export declare function checkBuild(): { fresh: true } | { fresh: false; reason: string };
