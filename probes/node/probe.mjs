#!/usr/bin/env node
// sleeplab probe for Node.js (protocol sleeplab-probe/1, see spec/probe-protocol.md).
//
// Measures Node's own wait functions with process.hrtime.bigint and prints the
// line protocol on stdout. ESM, no npm dependencies, Node 18+.
//
//   node probe.mjs --list
//   node probe.mjs --method setTimeout --durations-ns 0,100000,1500000 --count 200 --warmup 5
//   node probe.mjs --method Atomics.wait --durations-ns 10000 --budget-ns 200000000
//   node probe.mjs --method setInterval --period-ns 1000000 --count 500 --warmup 10
//
// Output is written with fs.writeSync (one buffered write per cell), so nothing
// is lost when the process ends; the exit code goes through process.exitCode.

import { readlinkSync, writeSync } from 'node:fs';
import * as os from 'node:os';
import { setTimeout as sleepPromise } from 'node:timers/promises';

const PROTOCOL = 'sleeplab-probe/1';
const U64_MAX = (1n << 64n) - 1n;
const DEFAULT_MAX_COUNT = 100000n;
const CLOCK_NAME = 'process.hrtime.bigint';
const TIMEOUT_MAX = 2 ** 31 - 1; // largest delay Node's timers accept (ms)

const EXIT_OK = 0;
const EXIT_BAD_ARGS = 2;
const EXIT_UNAVAILABLE = 3;

const ONESHOT = 'oneshot';
const YIELD = 'yield';
const PERIODIC = 'periodic';

const hr = process.hrtime.bigint;

// ------------------------------------------------------------------ methods --

const METHODS = [
  {
    name: 'setTimeout', kind: ONESHOT,
    description: 'setTimeout(cb, d / 1e6): fractional ms; elapsed from just before ' +
      'setTimeout to the first line of cb',
  },
  {
    name: 'timers/promises.setTimeout', kind: ONESHOT,
    description: "await setTimeout(d / 1e6) from 'node:timers/promises': fractional ms",
  },
  {
    name: 'Atomics.wait', kind: ONESHOT,
    description: 'Atomics.wait(Int32Array over a SharedArrayBuffer, 0, 0, d / 1e6) on the ' +
      'main thread, nobody notifies: one call, no loop',
  },
  {
    name: 'setImmediate', kind: YIELD,
    description: 'setImmediate(cb): elapsed from just before the call to the first line of cb',
  },
  {
    name: 'setInterval', kind: PERIODIC,
    description: 'setInterval(cb, P / 1e6): arrival time of each callback since t0, read ' +
      'just before setInterval',
  },
];
const KIND = new Map(METHODS.map((m) => [m.name, m.kind]));

function unavailableReason(name) {
  if (name === 'Atomics.wait') {
    if (typeof SharedArrayBuffer !== 'function') return 'SharedArrayBuffer is disabled';
    if (typeof Atomics !== 'object' || typeof Atomics.wait !== 'function') {
      return 'Atomics.wait does not exist';
    }
  }
  return null;
}

// ---------------------------------------------------------------- arguments --

class BadArgs extends Error {}

const VALUE_FLAGS = new Set(['--method', '--durations-ns', '--count', '--budget-ns',
  '--warmup', '--max-count', '--period-ns']);

const q = (s) => JSON.stringify(s);

function parseUint(flag, text) {
  if (!/^[0-9]+$/.test(text)) {
    throw new BadArgs(`bad value ${q(text)} for ${flag}: expected a non-negative decimal integer`);
  }
  const v = BigInt(text);
  if (v > U64_MAX) throw new BadArgs(`bad value ${q(text)} for ${flag}: larger than 2^64-1`);
  return v;
}

// --timestamps is offered on Linux, where process.hrtime.bigint is libuv's uv_hrtime:
// clock_gettime(CLOCK_MONOTONIC) as an absolute count of ns, the kernel trace's clock.
const TIMESTAMPS_OFFERED = process.platform === 'linux';

function parseArgs(argv) {
  if (argv.length === 1 && argv[0] === '--list') return { action: 'list' };
  const raw = new Map();
  let timestamps = false;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--list') throw new BadArgs("bad argument '--list': it must be used alone");
    if (arg === '--timestamps' && TIMESTAMPS_OFFERED) {
      if (timestamps) throw new BadArgs("bad argument '--timestamps': given twice");
      timestamps = true;
      continue;
    }
    if (!VALUE_FLAGS.has(arg)) throw new BadArgs(`unknown argument ${q(arg)}`);
    if (raw.has(arg)) throw new BadArgs(`bad argument ${q(arg)}: given twice`);
    if (i + 1 >= argv.length) throw new BadArgs(`missing value for ${arg}`);
    raw.set(arg, argv[i + 1]);
    i += 1;
  }

  if (!raw.has('--method')) throw new BadArgs('missing --method (or --list)');
  const method = raw.get('--method');
  if (!KIND.has(method)) throw new BadArgs(`unknown method ${q(method)} (see --list)`);
  const kind = KIND.get(method);
  const opts = { action: 'run', method, kind, timestamps };

  if (kind === PERIODIC) {
    for (const flag of ['--durations-ns', '--budget-ns', '--max-count']) {
      if (raw.has(flag)) {
        throw new BadArgs(`bad argument ${flag}: ${q(method)} is a periodic method ` +
          '(use --period-ns P --count C [--warmup W])');
      }
    }
    if (!raw.has('--period-ns')) throw new BadArgs(`missing --period-ns for periodic method ${q(method)}`);
    if (!raw.has('--count')) throw new BadArgs(`missing --count for periodic method ${q(method)}`);
    opts.period = parseUint('--period-ns', raw.get('--period-ns'));
    if (opts.period < 1n) {
      throw new BadArgs(`bad value ${q(raw.get('--period-ns'))} for --period-ns: must be at least 1`);
    }
  } else {
    if (raw.has('--period-ns')) {
      throw new BadArgs(`bad argument --period-ns: ${q(method)} is a ${kind} method, not periodic`);
    }
    if (!raw.has('--durations-ns')) {
      throw new BadArgs(`missing --durations-ns for ${kind} method ${q(method)}`);
    }
    const text = raw.get('--durations-ns');
    if (text === '') throw new BadArgs("bad value \"\" for --durations-ns: empty list");
    opts.durations = text.split(',').map((part) => {
      if (part === '') throw new BadArgs(`bad value ${q(text)} for --durations-ns: empty list element`);
      return parseUint('--durations-ns', part);
    });
    const hasCount = raw.has('--count');
    const hasBudget = raw.has('--budget-ns');
    if (hasCount && hasBudget) {
      throw new BadArgs(`bad arguments: --count ${raw.get('--count')} and --budget-ns ` +
        `${raw.get('--budget-ns')} given together`);
    }
    if (!hasCount && !hasBudget) throw new BadArgs('missing --count or --budget-ns');
    if (hasBudget) {
      opts.budget = parseUint('--budget-ns', raw.get('--budget-ns'));
      if (opts.budget < 1n) {
        throw new BadArgs(`bad value ${q(raw.get('--budget-ns'))} for --budget-ns: must be at least 1`);
      }
    }
    opts.maxCount = DEFAULT_MAX_COUNT;
    if (raw.has('--max-count')) {
      opts.maxCount = parseUint('--max-count', raw.get('--max-count'));
      if (opts.maxCount < 1n) {
        throw new BadArgs(`bad value ${q(raw.get('--max-count'))} for --max-count: must be at least 1`);
      }
    }
  }
  if (raw.has('--count')) {
    opts.count = parseUint('--count', raw.get('--count'));
    if (opts.count < 1n) throw new BadArgs(`bad value ${q(raw.get('--count'))} for --count: must be at least 1`);
  }
  opts.warmup = raw.has('--warmup') ? parseUint('--warmup', raw.get('--warmup')) : 0n;
  return opts;
}

// ------------------------------------------------------------------- output --

// Writes all of `text` to fd synchronously; copes with partial writes and with a
// non-blocking pipe that is momentarily full (EAGAIN).
let pause = null;
function writeAll(fd, text) {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (err) {
      if (err.code !== 'EAGAIN') throw err;
      if (typeof SharedArrayBuffer === 'function') {
        pause ??= new Int32Array(new SharedArrayBuffer(4));
        Atomics.wait(pause, 0, 0, 1); // 1 ms, then retry
      }
    }
  }
}

function platform() {
  const arch = typeof os.machine === 'function' ? os.machine() : process.arch;
  return `${process.platform} ${arch}`;
}

function header(extra) {
  return JSON.stringify({
    protocol: PROTOCOL,
    runtime: 'node',
    implementation: 'node',
    runtime_version: `${process.version} (V8 ${process.versions.v8}, libuv ${process.versions.uv})`,
    clock: CLOCK_NAME,
    platform: platform(),
    ...extra,
  });
}

// --timestamps: every one-shot line carries its call's start, every periodic cell its t0.
let timestamps = false;

// The kernel id of this (the main) thread, which runs every wait and callback measured:
// /proc/thread-self is PID/task/TID. Null where it cannot be read.
function measuringThread() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

function measurementHeader(method, mode) {
  const extra = { method, mode };
  const tid = measuringThread();
  if (tid !== null) extra.tid = tid;
  if (timestamps) extra.timestamps = true;
  return `${header(extra)}\n`;
}

// `tag value` lines; with --timestamps and `starts`, each call's start as a second field.
function pushLines(parts, tag, values, starts, len) {
  for (let i = 0; i < len; i++) {
    parts.push(timestamps && starts ? `${tag} ${values[i]} ${starts[i]}\n` : `${tag} ${values[i]}\n`);
  }
}

// One cell as one string: notes, cell line, (a periodic cell's t0 with --timestamps,)
// w lines, samples, done line. `stamps` holds the one-shot calls' starts
// ({ warm, samples }) or the periodic cell's t0 ({ t0 }).
function cellText(value, warm, warmLen, samples, sampleLen, tag, notes, stamps) {
  const parts = [];
  for (const n of notes) parts.push(`# ${n}\n`);
  parts.push(`cell ${value}\n`);
  if (timestamps && stamps.t0 !== undefined) parts.push(`t0 ${stamps.t0}\n`);
  pushLines(parts, 'w', warm, stamps.warm, warmLen);
  pushLines(parts, tag, samples, stamps.samples, sampleLen);
  parts.push(`done ${value} ${sampleLen}\n`);
  return parts.join('');
}

function doList() {
  // The optional arguments this probe takes (spec: the --list header's "options").
  const lines = [header(TIMESTAMPS_OFFERED ? { options: ['timestamps'] } : {})];
  for (const m of METHODS) {
    const reason = unavailableReason(m.name);
    const obj = { method: m.name, kind: m.kind, available: reason === null };
    if (reason !== null) obj.reason = reason;
    obj.description = m.description;
    lines.push(JSON.stringify(obj));
  }
  lines.push('end');
  writeAll(1, lines.join('\n') + '\n');
}

// ---------------------------------------------------------- known roundings --

// Comment lines about what Node's timers do to a delay of `ms` milliseconds
// (lib/internal/timers.js: the Timeout constructor and insert()).
function timerNotes(name, ms) {
  if (!(ms >= 1 && ms <= TIMEOUT_MAX)) {
    if (ms > TIMEOUT_MAX) {
      return [`${name}: a delay above 2^31-1 ms is replaced by 1 ms (TimeoutOverflowWarning)`];
    }
    return [`${name}: a delay below 1 ms (${ms} ms) is raised to 1 ms`];
  }
  if (!Number.isInteger(ms)) {
    return [`${name}: the delay is truncated to whole ms: ${ms} ms is scheduled as ` +
      `${Math.trunc(ms)} ms`];
  }
  return [];
}

function notesFor(method, d) {
  const ms = Number(d) / 1e6;
  if (method === 'setTimeout' || method === 'timers/promises.setTimeout') {
    return timerNotes('setTimeout', ms);
  }
  if (method === 'Atomics.wait' && d % 1000n !== 0n) {
    return ['Atomics.wait: V8 truncates the timeout to whole microseconds ' +
      `(${d} ns waits as ${d / 1000n} us; below 1 us it does not wait at all)`];
  }
  return [];
}

// -------------------------------------------------------------- timed loops --
// Timed region everywhere: clock read, the wait, clock read. Callbacks and
// arrays are created before the first clock read; storing happens after the
// second. Measurements are strictly sequential: each is awaited before the next.
// Every call's opening clock read is kept as its start (for --timestamps).

// A growable sample store: exact size for --count, doubling for --budget-ns.
class Samples {
  constructor(capacity) {
    this.arr = new BigUint64Array(Math.max(1, capacity));
    this.len = 0;
  }

  push(v) {
    if (this.len === this.arr.length) {
      const bigger = new BigUint64Array(this.arr.length * 2);
      bigger.set(this.arr);
      this.arr = bigger;
    }
    this.arr[this.len++] = v;
  }
}

// One measurement of a callback API: `schedule(cb, arg)` arms the wait.
function callbackOnce(schedule, arg, starts) {
  return new Promise((resolve) => {
    let t0 = 0n;
    const cb = () => {
      const t1 = hr();
      starts.push(t0);
      resolve(t1 - t0);
    };
    t0 = hr();
    schedule(cb, arg);
  });
}

const scheduleTimeout = setTimeout;
const scheduleImmediate = (cb) => setImmediate(cb);

async function measureOne(method, ms, ia, starts) {
  switch (method) {
    case 'setTimeout':
      return callbackOnce(scheduleTimeout, ms, starts);
    case 'setImmediate':
      return callbackOnce(scheduleImmediate, undefined, starts);
    case 'timers/promises.setTimeout': {
      const sleep = sleepPromise;
      const t0 = hr();
      await sleep(ms);
      const t1 = hr();
      starts.push(t0);
      return t1 - t0;
    }
    case 'Atomics.wait': {
      const wait = Atomics.wait;
      const t0 = hr();
      wait(ia, 0, 0, ms);
      const t1 = hr();
      starts.push(t0);
      return t1 - t0;
    }
    default:
      throw new Error(`no measurement for ${method}`);
  }
}

// Atomics.wait is synchronous: a plain loop, no promise between samples.
function atomicsFill(ia, ms, out, starts, n) {
  const wait = Atomics.wait;
  for (let i = 0; i < n; i++) {
    const t0 = hr();
    wait(ia, 0, 0, ms);
    const t1 = hr();
    out.push(t1 - t0);
    starts.push(t0);
  }
}

function atomicsBudget(ia, ms, out, starts, budget, maxCount) {
  const wait = Atomics.wait;
  let total = 0;
  for (;;) {
    const t0 = hr();
    wait(ia, 0, 0, ms);
    const t1 = hr();
    const e = t1 - t0;
    out.push(e);
    starts.push(t0);
    total += Number(e);
    if (total >= budget || out.len >= maxCount) return;
  }
}

async function oneshotCell(opts, d, ia) {
  const method = opts.method;
  const ms = Number(d) / 1e6;
  const warmup = Number(opts.warmup);
  const warm = new Samples(warmup);
  const warmStarts = new Samples(warmup);
  const capacity = opts.count !== undefined ? Number(opts.count) : Math.min(Number(opts.maxCount), 1 << 16);
  const samples = new Samples(capacity);
  const starts = new Samples(capacity);
  if (method === 'Atomics.wait') {
    atomicsFill(ia, ms, warm, warmStarts, warmup);
    if (opts.count !== undefined) {
      atomicsFill(ia, ms, samples, starts, Number(opts.count));
    } else {
      atomicsBudget(ia, ms, samples, starts, Number(opts.budget), Number(opts.maxCount));
    }
    return { warm, warmStarts, samples, starts };
  }
  for (let i = 0; i < warmup; i++) warm.push(await measureOne(method, ms, ia, warmStarts));
  if (opts.count !== undefined) {
    const n = Number(opts.count);
    for (let i = 0; i < n; i++) samples.push(await measureOne(method, ms, ia, starts));
  } else {
    const budget = Number(opts.budget);
    const maxCount = Number(opts.maxCount);
    let total = 0;
    for (;;) {
      const e = await measureOne(method, ms, ia, starts);
      samples.push(e);
      total += Number(e);
      if (total >= budget || samples.len >= maxCount) break;
    }
  }
  return { warm, warmStarts, samples, starts };
}

async function runOneshot(opts) {
  writeAll(1, measurementHeader(opts.method, ONESHOT));
  const ia = new Int32Array(new SharedArrayBuffer(4)); // stays 0, never notified
  for (const d of opts.durations) {
    const { warm, warmStarts, samples, starts } = await oneshotCell(opts, d, ia);
    writeAll(1, cellText(d, warm.arr, warm.len, samples.arr, samples.len, 's',
      notesFor(opts.method, d), { warm: warmStarts.arr, samples: starts.arr }));
  }
  writeAll(1, 'end\n');
}

// setInterval: t0 is read just before setInterval; tick k (from 1) is due at k*P.
// Every callback that arrives is recorded, in arrival order. Resolves to the
// arrivals (ns since t0) and t0.
function intervalRun(ms, total) {
  return new Promise((resolve) => {
    const arrivals = new BigUint64Array(total);
    let k = 0;
    let t0 = 0n;
    let handle = null;
    const cb = () => {
      const t = hr();
      arrivals[k] = t - t0;
      k += 1;
      if (k === total) {
        clearInterval(handle);
        resolve({ arrivals, t0 });
      }
    };
    t0 = hr();
    handle = setInterval(cb, ms);
  });
}

async function runPeriodic(opts) {
  writeAll(1, measurementHeader(opts.method, PERIODIC));
  const ms = Number(opts.period) / 1e6;
  const warmup = Number(opts.warmup);
  const count = Number(opts.count);
  const { arrivals, t0 } = await intervalRun(ms, warmup + count);
  const notes = timerNotes('setInterval', ms);
  notes.push('setInterval re-arms each tick from the loop time (whole ms) at which the ' +
    'callback starts, not from the previous due time: lateness accumulates');
  writeAll(1, cellText(opts.period, arrivals, warmup, arrivals.subarray(warmup), count, 't',
    notes, { t0 }));
  writeAll(1, 'end\n');
}

// --------------------------------------------------------------------- main --

async function main(argv) {
  let opts;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof BadArgs)) throw err;
    writeAll(2, `probe.mjs: ${err.message}\n`);
    return EXIT_BAD_ARGS;
  }
  if (opts.action === 'list') {
    doList();
    return EXIT_OK;
  }
  timestamps = opts.timestamps;
  const reason = unavailableReason(opts.method);
  if (reason !== null) {
    writeAll(2, `probe.mjs: method ${q(opts.method)} is unavailable: ${reason}\n`);
    return EXIT_UNAVAILABLE;
  }
  if (opts.kind === PERIODIC) await runPeriodic(opts);
  else await runOneshot(opts);
  return EXIT_OK;
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err) => {
    if (err && err.code === 'EPIPE') {
      process.exitCode = 1; // the reader went away; the run is lost
      return;
    }
    try {
      writeAll(2, `probe.mjs: internal error: ${err && err.stack ? err.stack : err}\n`);
    } catch {
      // stderr is gone too
    }
    process.exitCode = 1;
  },
);
