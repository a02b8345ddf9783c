/** A payload that does not parse is an error, not a refusal: `payload_invalid`, with where it went wrong. */
import { SignerError } from '../util/errors';

export function invalid(message: string): SignerError {
  return new SignerError('payload_invalid', message);
}

export function shapeError(where: string): SignerError {
  return invalid(`payload has an unexpected shape (${where})`);
}

export function tooMany(field: string, count: number, limit: number, unit: string): SignerError {
  return invalid(`${field} has ${count} ${unit}; at most ${limit} fit in a transaction`);
}
