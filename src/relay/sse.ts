/**
 * A minimal incremental parser for `text/event-stream` (the WHATWG event-stream format), as a Streamable HTTP
 * server may answer a POST: each event's `data` lines, joined by LF, are handed on. Event names, ids and
 * `retry` are not needed by a relay that never resumes a stream.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly onData: (data: string) => void) {}

  push(chunk: Buffer): void {
    this.buffer += this.decoder.decode(chunk, { stream: true });
    let start = 0;
    for (;;) {
      const cr = this.buffer.indexOf('\r', start);
      const lf = this.buffer.indexOf('\n', start);
      if (cr < 0 && lf < 0) break;
      let end: number;
      let next: number;
      if (cr >= 0 && (lf < 0 || cr < lf)) {
        // A CR at the very end may be the first half of CRLF: wait for the next chunk.
        if (cr === this.buffer.length - 1) break;
        end = cr;
        next = this.buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
      } else {
        end = lf;
        next = lf + 1;
      }
      this.line(this.buffer.slice(start, end));
      start = next;
    }
    this.buffer = this.buffer.slice(start);
  }

  /** End of the stream: a final event without its blank line is still dispatched. */
  end(): void {
    if (this.buffer.length > 0) this.line(this.buffer);
    this.buffer = '';
    this.line('');
  }

  private line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        const data = this.data.join('\n');
        this.data = [];
        this.onData(data);
      }
      return;
    }
    if (line.startsWith(':')) return; // a comment (keep-alive)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
  }
}
