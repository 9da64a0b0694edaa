#!/bin/sh
# usage: sh reproduce.sh <release> <uneven|equal> <trials> [aligned|unaligned] [end]
#   e.g. sh reproduce.sh 2.3.0 uneven 10
#        sh reproduce.sh 2.0.2 equal 10 unaligned
#        sh reproduce.sh 2.3.0 uneven 10 aligned each:500
#   defaults: aligned, end=now.  end = now | each:<ms> | sync:<ms>  (see the top of UnevenWriters.java)
# Compiles UnevenWriters.java against the release's flink-dist jar and runs it <trials> times,
# one JVM at a time (local MiniCluster, parallelism 2, checkpoint interval 100 ms, no restarts).
# Logs: logs/<release>-<mode>-<ckpt>[-<end>]-<i>.log ; the RESULT lines are appended to results.txt.
# Summary table: python3 classify.py
# Jars: 2.3.0 from ~/.cache/ckptsim/flink-2.3.0/lib ; other releases from releases/<release>/lib, filled by
#   pip download apache-flink-libraries==<release> --no-deps --no-binary :all: -d releases/<release>
#   and copying flink-dist-*.jar + log4j-*.jar from the sdist's deps/lib/ into releases/<release>/lib
set -e
REL=${1:?release}; MODE=${2:?uneven|equal}; N=${3:?trials}; CK=${4:-aligned}; END=${5:-now}
cd "$(dirname "$0")"
if [ "$REL" = 2.3.0 ]; then LIB=$HOME/.cache/ckptsim/flink-2.3.0/lib; else LIB=releases/$REL/lib; fi
DIST=$(ls "$LIB"/flink-dist*.jar | head -1)
CP=$DIST; for j in "$LIB"/log4j-*.jar; do case $j in *layout-template*) ;; *) CP=$CP:$j;; esac; done
mkdir -p build/$REL logs
javac -nowarn -cp "$DIST" -d build/$REL UnevenWriters.java
TAG=$REL-$MODE-$CK; [ "$END" = now ] || TAG=$TAG-$(echo "$END" | tr ':' '_')
i=1
while [ $i -le $N ]; do
  LOG=logs/$TAG-$i.log
  timeout 300 java -Xmx768m -Dlog4j.configurationFile=log4j2.properties -cp "build/$REL:$CP" \
      UnevenWriters "$MODE" "$CK" "$END" > "$LOG" 2>&1 || echo "trial $i: java exit $?" >> "$LOG"
  R=$(grep '^RESULT' "$LOG" || echo "RESULT missing (see $LOG)")
  echo "release=$REL trial=$i $R" | tee -a results.txt
  i=$((i+1))
done
