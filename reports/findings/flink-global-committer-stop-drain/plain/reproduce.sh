#!/bin/sh
# Stop-with-savepoint (with / without --drain) and a Sink V2 global committer, on real Flink.
#
# Usage:  sh reproduce.sh <release> <drain|nodrain> <trials> [key=value ...]
#   e.g.  sh reproduce.sh 2.3.0 drain 5
#         sh reproduce.sh 2.0.2 nodrain 5
#         sh reproduce.sh 2.3.0 nodrain 3 trace=true
# key=value pairs go to StopDrain (stopAfterMs, sleepUs, interval, sinkPar, restore, restoreMs, trace, commitOnInput).
#
# Jars (same places as ../../flink-global-committer-loss/plain/reproduce.sh, nothing is downloaded
# here): 2.3.0 from ~/.cache/ckptsim/flink-2.3.0/lib, other releases from the apache-flink-libraries
# package unpacked under ~/.cache/flinkrel/<release>. Only flink-dist and the log4j jars are used.
# One fresh JVM per trial, sequential. Per-trial stdout: runs/<release>-<mode>[-<extra>]/trial-<i>.out,
# Flink's log: /tmp/sd-logs/<release>-<mode>[-<extra>]-<i>.log, savepoints: /tmp/sd-sp/<uuid>.
set -eu

REL=${1:?release}; MODE=${2:?drain|nodrain}; K=${3:?trials}; shift 3
EXTRA="$*"
HERE=$(cd "$(dirname "$0")" && pwd)
case "$MODE" in
    drain) DRAIN=true ;;
    nodrain) DRAIN=false ;;
    *) echo "mode must be drain or nodrain" >&2; exit 2 ;;
esac

if [ "$REL" = 2.3.0 ] && [ -f "$HOME/.cache/ckptsim/flink-2.3.0/lib/flink-dist-2.3.0.jar" ]; then
    LIB="$HOME/.cache/ckptsim/flink-2.3.0/lib"
else
    d=$(find "$HOME/.cache/flinkrel/$REL" -name "flink-dist-$REL.jar" 2>/dev/null | head -1)
    if [ -z "$d" ]; then
        echo "no flink-dist-$REL.jar under ~/.cache/flinkrel/$REL (fetch it with ../../flink-global-committer-loss/plain/reproduce.sh)" >&2
        exit 3
    fi
    LIB=$(dirname "$d")
fi
CP=$(ls "$LIB"/*.jar | grep -E '/(flink-dist|log4j)[^/]*\.jar$' | tr '\n' ':')
CLS="/tmp/sd-classes/$REL"
mkdir -p "$CLS" /tmp/sd-logs /tmp/sd-sp
rm -f "$CLS"/StopDrain*.class
javac -nowarn -d "$CLS" -cp "$CP" "$HERE/StopDrain.java" 2>&1 | grep -v '^Note:' >&2 || true
[ -f "$CLS/StopDrain.class" ] || { echo "javac failed" >&2; exit 4; }

TAG=$(echo "$EXTRA" | tr ' =' '_-')
OUT="$HERE/runs/$REL-$MODE${TAG:+-$TAG}"
mkdir -p "$OUT"; rm -f "$OUT"/trial-*.out
echo "release=$REL mode=$MODE trials=$K extra='$EXTRA' lib=$LIB"

i=1
while [ "$i" -le "$K" ]; do
    log="/tmp/sd-logs/$REL-$MODE${TAG:+-$TAG}-$i.log"
    rm -f "$log"
    start=$(date +%s)
    timeout 150 java -Xmx1g -Dlog4j.configurationFile="$HERE/log4j2.properties" -Dckpt.log="$log" \
        -cp "$CP$CLS" StopDrain drain=$DRAIN ckptLog="$log" $EXTRA \
        > "$OUT/trial-$i.out" 2>&1 || echo "RESULT jvm-exit=$? (see $OUT/trial-$i.out)" >> "$OUT/trial-$i.out"
    echo "trial $i: $(( $(date +%s) - start )) s" >&2
    i=$((i + 1))
done

lossy=0; lostsum=0; lostrec=0; n=0; drops=0
for f in $(ls "$OUT"/trial-*.out | sort -V); do
    r=$(grep '^RESULT' "$f" | tail -1)
    echo "$(basename "$f" .out) $r"
    n=$((n + 1))
    l=$(echo "$r" | sed -n 's/.* lostCommittables=\([0-9]*\) .*/\1/p')
    lr=$(echo "$r" | sed -n 's/.* lostRecords=\([0-9]*\) .*/\1/p')
    d=$(echo "$r" | sed -n 's/.* droppedAfterEndOfData=\([0-9]*\)(.*/\1/p')
    if [ -n "$l" ] && [ "$l" != 0 ]; then lossy=$((lossy + 1)); lostsum=$((lostsum + l)); lostrec=$((lostrec + lr)); fi
    [ -n "$d" ] && drops=$((drops + d))
done
echo "TALLY release=$REL mode=$MODE extra='$EXTRA' trials=$n with_loss=$lossy lost_committables_total=$lostsum lost_records_total=$lostrec dropped_after_end_of_data_total=$drops"
