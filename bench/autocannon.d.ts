/** The part of autocannon 9's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    duration?: number;
    amount?: number;
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string }[];
  }
  interface Histogram {
    average: number;
    p50: number;
    p90: number;
    p99: number;
    max: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    statusCodeStats?: Record<string, { count: number }>;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
