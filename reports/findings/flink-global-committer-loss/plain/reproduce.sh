#!/bin/sh
# Probe for FLINK-38614 (global committer loses the final checkpoint's committables).
#
# Usage:  sh reproduce.sh <release> <aligned|unaligned> <trials> [key=value ...]
#   e.g.  sh reproduce.sh 2.3.0 aligned 40
#         sh reproduce.sh 2.0.2 unaligned 40 interval=20
#         sh reproduce.sh 2.3.0 aligned 5 trace=true
# key=value pairs go to GlobalCommitterLoss (n, sleepUs, interval, sinkPar, commitSleepMs, trace).
#
# Jars: release 2.3.0 uses ~/.cache/ckptsim/flink-2.3.0/lib if present. Other releases (and 2.3.0
# otherwise) come from PyPI's apache-flink-libraries (pip download, unpacked under
# ~/.cache/flinkrel/<release>): wheels keep the jars in pyflink/lib, sdists in deps/lib.
# Each trial is a fresh JVM with a local MiniCluster; at most 2 JVMs run at once (PAR=1 for one).
# Per-trial stdout goes to runs/<release>-<mode>-<tag>/trial-<i>.out (Flink logs to /tmp/gcl-logs).
# Prints each RESULT line and a tally: trials with loss / trials, records lost in total.
set -eu

REL=${1:?release}; MODE=${2:?aligned|unaligned}; K=${3:?trials}; shift 3
EXTRA="$*"
HERE=$(cd "$(dirname "$0")" && pwd)
PAR=${PAR:-2}

jar_dir() {
    if [ "$REL" = 2.3.0 ] && [ -f "$HOME/.cache/ckptsim/flink-2.3.0/lib/flink-dist-2.3.0.jar" ]; then
        echo "$HOME/.cache/ckptsim/flink-2.3.0/lib"; return
    fi
    base="$HOME/.cache/flinkrel/$REL"
    d=$(find "$base" -name "flink-dist-$REL.jar" 2>/dev/null | head -1)
    if [ -z "$d" ]; then
        mkdir -p "$base"
        pip download "apache-flink-libraries==$REL" --no-deps -d "$base" >&2 \
          || pip download "apache-flink-libraries==$REL" --no-deps --no-binary :all: -d "$base" >&2
        # extract only flink-dist and the log4j jars (wheel: pyflink/lib, sdist: deps/lib)
        python3 - "$base" <<'PY'
import glob, re, sys, tarfile, zipfile
base = sys.argv[1]
pat = re.compile(r'(pyflink|deps)/lib/(flink-dist|log4j)[^/]*\.jar$')
for f in glob.glob(base + '/*.whl'):
    z = zipfile.ZipFile(f)
    for n in z.namelist():
        if pat.search(n): z.extract(n, base + '/unpacked')
for f in glob.glob(base + '/*.tar.gz'):
    t = tarfile.open(f)
    for m in t:
        if pat.search(m.name): t.extract(m, base + '/unpacked')
PY
        d=$(find "$base" -name "flink-dist-$REL.jar" | head -1)
    fi
    dirname "$d"
}

LIB=$(jar_dir)
CP=$(ls "$LIB"/*.jar | grep -E '/(flink-dist|log4j)[^/]*\.jar$' | tr '\n' ':')
CLS="/tmp/gcl-classes/$REL"
mkdir -p "$CLS" /tmp/gcl-logs
javac -nowarn -d "$CLS" -cp "$CP" "$HERE/GlobalCommitterLoss.java" 2>&1 | grep -v '^Note:' >&2 || true

TAG=$(echo "$EXTRA" | tr ' =' '_-')
OUT="$HERE/runs/$REL-$MODE${TAG:+-$TAG}"
mkdir -p "$OUT"; rm -f "$OUT"/trial-*.out
echo "release=$REL mode=$MODE trials=$K extra='$EXTRA' lib=$LIB"

run_trial() {
    i=$1
    log="/tmp/gcl-logs/$REL-$MODE${TAG:+-$TAG}-$i.log"
    rm -f "$log"
    timeout 120 java -Xmx1g -Dlog4j.configurationFile="$HERE/log4j2.properties" -Dckpt.log="$log" \
        -cp "$CP$CLS" GlobalCommitterLoss "$MODE" ckptLog="$log" $EXTRA \
        > "$OUT/trial-$i.out" 2>&1 || echo "RESULT jvm-exit=$? (see $OUT/trial-$i.out)" >> "$OUT/trial-$i.out"
}

i=1
while [ "$i" -le "$K" ]; do
    run_trial "$i" &
    if [ "$PAR" -ge 2 ] && [ $((i + 1)) -le "$K" ]; then run_trial $((i + 1)) & i=$((i + 1)); fi
    wait
    i=$((i + 1))
done

lossy=0; lostsum=0; n=0
for f in $(ls "$OUT"/trial-*.out | sort -V); do
    r=$(grep '^RESULT' "$f" | tail -1)
    echo "$(basename "$f" .out) $r"
    n=$((n + 1))
    l=$(echo "$r" | sed -n 's/.*lost=\([-0-9]*\).*/\1/p')
    if [ -n "$l" ] && [ "$l" != 0 ]; then lossy=$((lossy + 1)); lostsum=$((lostsum + l)); fi
    if echo "$r" | grep -q 'sumOk=false' && [ "$l" = 0 ]; then lossy=$((lossy + 1)); fi
done
echo "TALLY release=$REL mode=$MODE extra='$EXTRA' trials=$n with_loss=$lossy records_lost_total=$lostsum"
