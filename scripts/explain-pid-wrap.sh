#!/usr/bin/env bash
# `explain -- CMD` across a wrap of the machine's process ids: the filter that keeps a
# program's system calls to it names its known threads and a window of pids not handed
# out yet, which wraps to the lowest free pids near pid_max (crates/sleeplab-capture/
# lineage.rs). This runs a Python program that creates a short-lived thread every 10 ms
# (each sleeps 2 ms three times; the main thread sleeps 10 ms between them) under
# `sleeplab explain`, while another process forks until the pids have wrapped past where
# they started; then checks that every sleep of every thread was found (4 per thread
# created), that the threads' ids span the wrap, and that no thread was born outside the
# filter. As root, on a machine whose pid_max is small enough to wrap in a minute or so
# (MAX_PIDS, default 100000; 32768 takes about 30 s here; above it the check says it is
# skipped and exits 0). Not a benchmark: it prints a pass or a fail and exits 0 or 1.
#
#   scripts/explain-pid-wrap.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
    echo "explain-pid-wrap: the kernel's tracepoints need root" >&2
    exit 2
fi
pid_max=$(cat /proc/sys/kernel/pid_max)
if [ "$pid_max" -gt "${MAX_PIDS:-100000}" ]; then
    echo "explain-pid-wrap: skipped, pid_max $pid_max takes too long to wrap (MAX_PIDS=N allows it)"
    exit 0
fi
cargo build --release -q -p sleeplab-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/spawner.py" <<'PY'
import os, sys, threading, time
done = sys.argv[1]
def work():
    for _ in range(3):
        time.sleep(0.002)
n = 0
while not os.path.exists(done) or n < 10:
    t = threading.Thread(target=work)
    t.start()
    t.join()
    n += 1
    time.sleep(0.01)
print(f"spawner: {n} threads", flush=True)
PY
cat >"$tmp/forker.py" <<'PY'
import os, sys
start = int(open("/proc/sys/kernel/ns_last_pid").read())
last, wrapped = start, False
while True:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    wrapped = wrapped or pid < last
    last = pid
    # Past the wrap, and far enough into the low pids for threads to be born there.
    if wrapped and pid > 2000:
        break
open(sys.argv[1], "w").write(f"{start} {pid}\n")
PY
start=$(cat /proc/sys/kernel/ns_last_pid)
"${CARGO_TARGET_DIR:-target}"/release/sleeplab -q explain --json "$tmp/waits.json" -- \
    python3 "$tmp/spawner.py" "$tmp/done" >"$tmp/explain.txt" 2>&1 &
explain=$!
sleep 1
python3 "$tmp/forker.py" "$tmp/done"
wait "$explain"
python3 - "$tmp/waits.json" "$tmp/explain.txt" "$start" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
start = int(sys.argv[3])
m = re.search(r"spawner: (\d+) threads", text)
if not m:
    sys.exit(f"explain-pid-wrap: FAIL: the program's count is missing:\n{text}")
n = int(m.group(1))
sleeps = [w for w in doc["waits"] if w["call"] == "clock_nanosleep"]
tids = sorted({w["tid"] for w in sleeps})
if not tids:
    sys.exit(f"explain-pid-wrap: FAIL: no sleep found:\n{text}")
late = re.search(r"(\d+) threads of the program were born faster", text)
checks = [
    (len(sleeps) == 4 * n, f"{len(sleeps)} sleeps found of the {4 * n} made"),
    (len(tids) == n + 1, f"{len(tids)} threads slept, of the {n + 1} that ran"),
    (tids[0] < start < tids[-1], f"thread ids {tids[0]}–{tids[-1]} span the wrap past {start}"),
    (late is None, f"{late.group(1) if late else 0} threads born outside the filter"),
    (doc["lost_events"] == 0, f"{doc['lost_events']} events lost"),
]
for ok, what in checks:
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
sys.exit(0 if all(ok for ok, _ in checks) else 1)
PY
