/**
 * What the operator listener's middleware learns about a request, on Express's `res.locals` (typed here): the sealed
 * session, and the operator it proves once their login has been checked against the config and the ledger.
 */
import type { IronSession } from 'iron-session';
import type { OperatorRole } from '../config/types';

/** What the sealed cookie holds: an id for the CSRF tokens, and after a passkey login who logged in, with what, when. */
export interface ConsoleSession {
  sid?: string;
  operator?: string;
  credential?: string;
  /** Unix ms of the login; the login ends `session_ttl_ms` later whatever happens meanwhile. */
  login_at?: number;
}

export interface SignedInOperator {
  name: string;
  role: OperatorRole;
  credential: string;
}

declare module 'express-serve-static-core' {
  interface Locals {
    session?: IronSession<ConsoleSession>;
    operator?: SignedInOperator;
  }
}
