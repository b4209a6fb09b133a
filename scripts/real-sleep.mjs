// Sleeps N times for REQUEST_US microseconds with node's setTimeout (whole milliseconds
// in libuv's loop), each timer set when the one before fired, logging each from
// process.hrtime (CLOCK_MONOTONIC, the clock the kernel's events are on) as a CSV row of
// OUT: before_ns (just before setTimeout), after_ns (the callback's first line).
// For scripts/explain-real.sh.
//
//   node scripts/real-sleep.mjs OUT.csv N REQUEST_US
import { writeFileSync } from "node:fs";

const [out, nText, usText] = process.argv.slice(2);
const n = Number(nText), us = Number(usText);
if (!out || !Number.isInteger(n) || n < 1 || !Number.isInteger(us) || us < 1) {
  console.error("usage: node real-sleep.mjs OUT.csv N REQUEST_US");
  process.exit(2);
}
const rows = ["before_ns,after_ns"];
let i = 0;
function next() {
  if (i++ >= n) {
    writeFileSync(out, rows.join("\n") + "\n");
    return;
  }
  const before = process.hrtime.bigint();
  setTimeout(() => {
    rows.push(`${before},${process.hrtime.bigint()}`);
    next();
  }, us / 1000);
}
next();
