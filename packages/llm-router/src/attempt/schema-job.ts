import { answerProblem, compileSchema } from './response-schema.js';

/**
 * One piece of schema work, as schema-checker.ts hands it to the schema worker
 * (or, where no built worker exists, runs it in place): compile a schema (its
 * JSON text), or check an answer's content against one.
 */
export type SchemaJob =
  | { readonly kind: 'prepare'; readonly schema: string }
  | { readonly kind: 'check'; readonly schema: string | undefined; readonly content: unknown };

/** A `SchemaJob` as sent: numbered, so its reply finds its caller. */
export type SchemaJobRequest = SchemaJob & { readonly seq: number };

/** `problem`: for `prepare`, why the schema is invalid; for `check`, why the content is not the JSON asked for. Undefined: fine. */
export interface SchemaJobReply {
  readonly seq: number;
  readonly problem: string | undefined;
}

/** What the worker posts once its modules are loaded, before any reply. */
export const SCHEMA_WORKER_READY = 'ready';

export type SchemaWorkerMessage = SchemaJobReply | typeof SCHEMA_WORKER_READY;

export function runSchemaJob(job: SchemaJob): string | undefined {
  if (job.kind === 'check') return answerProblem(job.schema, job.content);
  const compiled = compileSchema(job.schema);
  return typeof compiled === 'string' ? compiled : undefined;
}
