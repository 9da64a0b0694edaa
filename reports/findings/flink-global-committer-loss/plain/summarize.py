# Summarises runs/*/trial-*.out (written by reproduce.sh): python3 summarize.py
import glob, re, os, statistics, sys
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'runs')
for d in sorted(os.listdir(root)):
    rs = []
    for f in glob.glob(f'{root}/{d}/trial-*.out'):
        r = [l for l in open(f) if l.startswith('RESULT')]
        if r: rs.append(r[-1])
    def g(l, k):
        m = re.search(k + r'=(-?\d+)', l); return int(m.group(1)) if m else None
    lost = [g(l, 'lost') for l in rs]
    ck = [g(l, 'checkpoints') for l in rs]
    dr = [int(re.search(r'atGlobalCommitter=(\d+)', l).group(1)) for l in rs]
    st = set(re.search(r'status=(\S+)', l).group(1) for l in rs)
    lossy = [x for x in lost if x]
    cls = [re.search(r'lostClass=(\S+)', l) for l in rs]
    print(f"{d}: trials={len(rs)} loss={len(lossy)} lostTotal={sum(lossy)} lostRange={min(lossy) if lossy else 0}-{max(lossy) if lossy else 0} ckptMedian={statistics.median(ck)} ckptRange={min(ck)}-{max(ck)} droppedAtGC>0 in {sum(1 for x in dr if x)} status={st}")
    if any(cls):
        c = [tuple(int(x) for x in re.findall(r':(\d+)', m.group(1))) for m in cls if m]
        print(f"    lostClass totals: neverReceived={sum(x[0] for x in c)} ({sum(1 for x in c if x[0])} trials), "
              f"receivedAfterLastNotify={sum(x[1] for x in c)} ({sum(1 for x in c if x[1])} trials), "
              f"receivedNotCommitted={sum(x[2] for x in c)} ({sum(1 for x in c if x[2])} trials)")
