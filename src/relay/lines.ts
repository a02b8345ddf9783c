/**
 * Newline-delimited input with a bound on the line length. Lines are handed on as Buffers (a trailing CR
 * dropped); a line longer than `maxBytes` is not held in memory: its bytes are discarded as they arrive while
 * a small scanner watches for the message's top-level `"id"`, so the sender can still be answered by id.
 */
export type LineEvent =
  { kind: 'line'; line: Buffer } | { kind: 'oversized'; bytes: number; id: string | number | undefined };

const LF = 0x0a;
const CR = 0x0d;

export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private skipping: { bytes: number; scanner: TopLevelIdScanner } | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly emit: (e: LineEvent) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(LF, start);
      const end = nl < 0 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl < 0) return;
      this.finishLine();
      start = nl + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.heldBytes > 0 || this.skipping) this.finishLine();
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.skipping) {
      this.skipping.bytes += part.length;
      this.skipping.scanner.feed(part);
      return;
    }
    if (this.heldBytes + part.length > this.maxBytes) {
      const scanner = new TopLevelIdScanner();
      for (const b of this.held) scanner.feed(b);
      scanner.feed(part);
      this.skipping = { bytes: this.heldBytes + part.length, scanner };
      this.held = [];
      this.heldBytes = 0;
      return;
    }
    // Copy: the chunk's memory is reused by the stream after this call for some sources.
    this.held.push(Buffer.from(part));
    this.heldBytes += part.length;
  }

  private finishLine(): void {
    if (this.skipping) {
      const { bytes, scanner } = this.skipping;
      this.skipping = null;
      this.emit({ kind: 'oversized', bytes, id: scanner.id() });
      return;
    }
    const [first] = this.held;
    let line = this.held.length === 1 && first ? first : Buffer.concat(this.held, this.heldBytes);
    this.held = [];
    this.heldBytes = 0;
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    this.emit({ kind: 'line', line });
  }
}

/**
 * Finds the value of the top-level `"id"` member of a JSON object streamed through it, without building the
 * object: it tracks nesting depth and strings, remembers the last top-level key, and captures a string or
 * integer value that follows `"id":`. Anything else (a malformed line, an id nested in params) gives undefined.
 */
export class TopLevelIdScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private token: number[] = []; // bytes of the current top-level string, or of the id value being read
  private lastKey: string | null = null;
  private expectValue = false;
  private capturing: 'string' | 'number' | null = null;
  private found: string | number | undefined;
  private done = false;

  feed(buf: Buffer): void {
    for (const b of buf) {
      if (this.done) return;
      this.step(b);
    }
  }

  id(): string | number | undefined {
    if (this.capturing === 'number') this.finishNumber();
    return this.found;
  }

  private step(b: number): void {
    if (this.inString) {
      const recording = this.depth === 1 && this.token.length < 4096;
      if (this.escaped) {
        this.escaped = false;
        if (recording) this.token.push(b);
        return;
      }
      if (b === 0x5c) {
        this.escaped = true;
        if (recording) this.token.push(b);
        return;
      }
      if (b === 0x22) {
        this.inString = false;
        if (this.depth === 1) this.closeString();
        return;
      }
      if (recording) this.token.push(b);
      return;
    }
    if (this.capturing === 'number') {
      if ((b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2e || b === 0x65 || b === 0x45 || b === 0x2b) {
        this.token.push(b);
        return;
      }
      this.finishNumber();
    }
    switch (b) {
      case 0x22: // "
        this.inString = true;
        this.token = [];
        if (this.depth === 1 && this.expectValue && this.lastKey === 'id') this.capturing = 'string';
        return;
      case 0x7b: // {
      case 0x5b: // [
        this.depth++;
        this.expectValue = false;
        return;
      case 0x7d: // }
      case 0x5d: // ]
        this.depth--;
        if (this.depth <= 0) this.done = true;
        return;
      case 0x3a: // :
        if (this.depth === 1) this.expectValue = true;
        return;
      case 0x2c: // ,
        if (this.depth === 1) {
          this.expectValue = false;
          this.lastKey = null;
        }
        return;
      default:
        if (this.depth === 1 && this.expectValue && this.lastKey === 'id' && ((b >= 0x30 && b <= 0x39) || b === 0x2d)) {
          this.capturing = 'number';
          this.token = [b];
        }
    }
  }

  private closeString(): void {
    const text = Buffer.from(this.token).toString('utf8');
    if (this.capturing === 'string') {
      try {
        this.found = JSON.parse(`"${text}"`) as string;
      } catch {
        this.found = undefined;
      }
      this.capturing = null;
      this.done = true;
      return;
    }
    if (!this.expectValue) {
      try {
        this.lastKey = JSON.parse(`"${text}"`) as string;
      } catch {
        this.lastKey = null;
      }
    }
  }

  private finishNumber(): void {
    const n = Number(Buffer.from(this.token).toString('latin1'));
    this.found = Number.isSafeInteger(n) ? n : undefined;
    this.capturing = null;
    this.done = true;
  }
}
