#!/usr/bin/env python3
"""usage: python3 classify.py [logs/<release>-<mode>-<ckpt>-*.log ...]  (default: all logs/*.log)
Per trial: writer end-of-input checkpoint ids, records lost, split into
  stalled = lost committables of checkpoints BEFORE the final one (global committer blocked behind a
            checkpoint for which only one writer sent a summary), and
  final   = lost committables tagged with the last checkpoint id. If both writers ended at the SAME
            checkpoint this is the FLINK-38614 final-checkpoint loss; if they ended at different
            checkpoints the final checkpoint is also behind the stall.
Prints one line per trial and a summary per (release, mode, ckpt)."""
import re, sys, glob, collections
files = sys.argv[1:] or sorted(glob.glob('logs/*.log'))
rows = collections.OrderedDict()
for f in sorted(files, key=lambda p: (re.sub(r'-\d+\.log$', '', p), int(re.search(r'-(\d+)\.log$', p).group(1)))):
    key = re.sub(r'-\d+\.log$', '', f.split('/')[-1])
    txt = open(f).read()
    res = re.search(r'^RESULT lost=(\d+) committed=(\d+) expected=(\d+) status=(\S+)', txt, re.M)
    if not res:
        print(f, 'NO RESULT'); continue
    eoi = {}
    for m in re.finditer(r'WRITER (\d) prepareCommit seq=(\d+) eoi\(last-ckpt=(\w+)\)', txt):
        eoi[int(m.group(1))] = int(m.group(3)) + 1 if m.group(3) != 'null' else 1
    lostline = re.search(r'^NOT globally committed: \[(.*)\]', txt, re.M).group(1)
    lost = [c.strip() for c in lostline.split(',') if c.strip()]
    def cid(c):
        s = c.split(':')
        m = re.match(r'ckpt(\d+)', s[4]); return int(m.group(1)) if m else int(re.search(r'=(\w+)', s[4]).group(1)) + 1
    final = max(eoi.values()) if eoi else None
    stalled = sum(int(c.split(':')[3]) for c in lost if cid(c) < final)
    fin = sum(int(c.split(':')[3]) for c in lost if cid(c) == final)
    lostn = int(res.group(1))
    print(f"{f}: eoi-ckpt w0={eoi.get(0)} w1={eoi.get(1)} lost={lostn} (stalled={stalled}, final-ckpt={fin}) status={res.group(4)}")
    rows.setdefault(key, []).append((lostn, stalled, fin, eoi.get(0) != eoi.get(1), res.group(4)))
print()
print('| release-mode-ckpt[-end] | trials | trials with loss | records lost min/median/max (of 1700) | writers ended at DIFFERENT ckpts: trials (with loss) | of those, trials losing committables of non-final ckpts | writers ended at the SAME ckpt: trials (with loss; loss is then only the final ckpt = FLINK-38614) | job status |')
print('|---|---|---|---|---|---|---|---|')
for k, v in rows.items():
    ls = sorted(x[0] for x in v)
    diff = [x for x in v if x[3]]; same = [x for x in v if not x[3]]
    assert all(x[1] == 0 for x in same)
    print(f"| {k} | {len(v)} | {sum(1 for x in v if x[0] > 0)} | {ls[0]}/{ls[len(ls)//2]}/{ls[-1]} | "
          f"{len(diff)} ({sum(1 for x in diff if x[0] > 0)}) | {sum(1 for x in diff if x[1] > 0)} | "
          f"{len(same)} ({sum(1 for x in same if x[0] > 0)}) | {','.join(sorted(set(x[4] for x in v)))} |")
