/**
 * The schema worker's thread: compiles response schemas and checks answers
 * against them, one job at a time in the order sent (see schema-checker.ts for
 * why this is not done on the event loop). Only ever loaded as a Worker's file.
 */
import { parentPort } from 'node:worker_threads';
import { compileSchema } from './response-schema.js';
import { runSchemaJob, SCHEMA_WORKER_READY, type SchemaJobReply, type SchemaJobRequest } from './schema-job.js';

if (parentPort !== null) {
  const port = parentPort;
  port.on('message', (request: SchemaJobRequest) => {
    const reply: SchemaJobReply = { seq: request.seq, problem: runSchemaJob(request) };
    port.postMessage(reply);
  });
  // Ajv compiles its meta-schema on first use: done before `ready`, so no job's budget pays for it.
  compileSchema('{"type":"object"}');
  port.postMessage(SCHEMA_WORKER_READY);
}
