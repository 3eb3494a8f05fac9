export { UsageStore } from './usage-store.js';
export type { Housekeeping, UsageStoreOptions } from './usage-store.js';
export { openConnection } from './connections.js';
export type { Connection, ConnectionRole, MigrationSet, StoreLocation } from './connections.js';
export type { HealthTransitionsTable, ReplicasTable, SharedConfigTable, UsageDatabase } from './schema.js';
export { ServiceKeyStore } from './key-store.js';
export type { KeyStoreOptions } from './key-store.js';
export type { KeyDatabase, ServiceKeysTable } from './key-schema.js';
export { SERVICE_KEYS_CHANNEL } from './service-keys.js';
export type { ServiceKeyWrite } from './service-keys.js';
export {
  BatchWriter,
  DEFAULT_DROP_LOG_INTERVAL_MS,
  DEFAULT_FLUSH_INTERVAL_MS,
  DEFAULT_MAX_BATCH,
  DEFAULT_MAX_QUEUED,
} from './batch-writer.js';
export { rowId } from './row-id.js';
export type { BatchSink, BatchWriterOptions, BatchWriterStatus } from './batch-writer.js';
export { recordBatch } from './record-block.js';
export type { RecordBatch, RecordBlock } from './record-block.js';
export { WorkerSink, workerAvailable } from './worker-sink.js';
export { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './page-size.js';
export { SUMMARY_GROUPS } from './query-summary.js';
export { DEFAULT_CONFIG_PAGE_SIZE, MAX_CONFIG_PAGE_SIZE, MAX_CONFIG_VERSIONS, addConfigVersionIn } from './config-versions.js';
export type { ConfigVersionEntry, ConfigVersionInput, ConfigVersionPage, ConfigVersionWithPredecessor, StoredConfigVersion } from './config-versions.js';
export { LATEST_SCHEMA_VERSION } from './migrations.js';
export { ATTEMPT_LIST, PLAN_LIST, REQUEST_COLUMNS } from './request-columns.js';
export type { ItemField, ListColumn, ListShape, RequestColumn } from './request-columns.js';
export type { ColumnKind, ItemKind, KindWire, Nullability } from './column-kinds.js';
export { SQL_TYPES } from './column-kinds.js';
export { requestJson } from './usage-json.js';
export type { UsageAttemptJson, UsagePlannedTargetJson, UsageRequestJson } from './usage-json.js';
export { UsageQueryError, isUsageQueryError } from './usage-query-error.js';
export type {
  AttemptRecord,
  PlannedTarget,
  RequestFilter,
  RequestPage,
  RequestPageQuery,
  RequestRecord,
  StoredRequest,
  SummaryGroup,
  SummaryQuery,
  SummaryRow,
} from './types.js';
