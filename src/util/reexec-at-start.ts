/**
 * Imported first by main.ts: ES modules run in the order they are imported, so the controller and
 * `ebb up` start again with their allocator setting (reexec.ts) before any other module of ebb has run.
 */
import { reexecDaemon } from "./reexec.ts";

reexecDaemon(process.argv[2]);
