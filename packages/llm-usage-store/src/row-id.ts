/**
 * Row ids that sort by time, shared by the usage records and the config history.
 */
import { randomBytes } from 'node:crypto';

/** 48 random bits per process, so ids of several processes writing one database never collide. */
const PROCESS_PART = randomBytes(6).toString('hex');
let sequence = 0;

/**
 * A unique row id that sorts by time (epoch ms in base 36, then this process's
 * random part and a counter): rows arrive in time order, so the primary-key
 * index only ever grows at its end instead of taking inserts at random places
 * (which a UUID would cause). Within one process and millisecond they sort in
 * the order they were made (the config history relies on it). One random draw
 * per process, not per id: the request path calls this for every request.
 */
export function rowId(time: number): string {
  sequence = (sequence + 1) % 2_176_782_336; // 36^6: six base-36 digits
  return `${Math.max(0, Math.floor(time)).toString(36).padStart(9, '0')}-${PROCESS_PART}${sequence.toString(36).padStart(6, '0')}`;
}
