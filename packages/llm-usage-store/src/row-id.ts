/**
 * Row ids that sort by time, shared by the usage records and the config history.
 */
import { randomBytes } from 'node:crypto';

/** 48 random bits per process (per thread), so ids of several processes writing one database never collide. */
export const PROCESS_PART = randomBytes(6).toString('hex');
let sequence = 0;

/** This process's next id counter value (six base-36 digits, then it wraps). */
export function nextRowSequence(): number {
  sequence = (sequence + 1) % 2_176_782_336; // 36^6: six base-36 digits
  return sequence;
}

/** The id `rowId` makes, from its parts (record blocks keep the parts and make the id in the writer). */
export function formatRowId(time: number, processPart: string, sequenceNumber: number): string {
  return `${Math.max(0, Math.floor(time)).toString(36).padStart(9, '0')}-${processPart}${sequenceNumber.toString(36).padStart(6, '0')}`;
}

/**
 * A unique row id that sorts by time (epoch ms in base 36, then this process's
 * random part and a counter): rows arrive in time order, so the primary-key
 * index only ever grows at its end instead of taking inserts at random places
 * (which a UUID would cause). Within one process and millisecond they sort in
 * the order they were made (the config history relies on it). One random draw
 * per process, not per id: the request path calls this for every request.
 */
export function rowId(time: number): string {
  return formatRowId(time, PROCESS_PART, nextRowSequence());
}
