"""A model of the SSD tier as a log of files under the master's CLOCK hand.

It replays a trace (Mooncake FAST'25 JSON Lines) against an SSD-only cache
of 64 KiB blocks, and asks where the tier's room goes under three ways of
giving a block that was read another turn:

  inplace  metadata only (the store today): the record stays in its file,
           and compaction (the most dead sealed file, at 20 % dead or more,
           one step per few offloads above 90 % of the limit) copies it;
  refresh  the record is copied to the log's head when the hand reaches
           it, before its old file is reclaimed;
  navy     the hand works file by file, oldest first (CacheLib Navy's
           region reclaim): read blocks are copied forward and the rest
           evicted, and the file is freed at once.

A mode ending in "_live" counts only live blocks as used (no dead
allowance); "navy_tight" is navy with one file's slack (0.8 %) instead of
the 2 % allowance and the 98.4 % -> 97.4 % band. Prints the hit ratio (SSD alone), the live fraction averaged
over the second half (over the configured bytes), the write amplification
and the store's refusals. A model: no DRAM tier, no asynchrony between
the master and the node beyond the compaction rate.

Usage: python3 bench/ssd_log_sim.py TRACE MODE...
"""
import json, sys
from collections import OrderedDict, deque
if len(sys.argv) < 3:
    sys.exit(__doc__)
reqs=[json.loads(l)['hash_ids'] for l in open(sys.argv[1]) if l.strip()]
refs=sum(len(r) for r in reqs)

def run(mode, URGENT=False, F=64, LIMIT=8128, ALLOW_FRAC=0.02, HIGH=0.984, RATIO=0.01,
        BAR=0.2, STEPS_PER_PUT=1.0):
    CAP=int(LIMIT*(1-ALLOW_FRAC))
    ALLOW=LIMIT*ALLOW_FRAC
    files={}      # file no -> set of live blocks
    size={}       # file no -> slots used
    where={}      # block -> file
    meta=OrderedDict()  # block -> [disk_since, read_flag]; order = disk_since
    active=0; files[0]=set(); size[0]=0; nextf=1
    phys=0; live=0; writes=0; put=0; refusals=0; hits=0
    samples=[]; t=0; owed=0; attempts=0
    def append(b):
        nonlocal active, nextf, phys, writes
        if size[active]>=F:
            active=nextf; nextf+=1; files[active]=set(); size[active]=0
        files[active].add(b); size[active]+=1; where[b]=active
        phys+=1; writes+=1
    def kill(b):
        f=where.pop(b); files[f].discard(b)
    def compact_step(bar):
        nonlocal phys
        best=None; br=-1
        for f in files:
            if f==active or size[f]==0: continue
            r=1-len(files[f])/size[f]
            if r>=bar and r>br: best=f; br=r
        if best is None: return False
        for b in list(files[best]):
            files[best].discard(b); append(b)
        phys-=size[best]; del files[best]; del size[best]
        return True
    def master_used():
        dead=phys-live
        if mode.endswith('_live'): return live
        return live+max(0,dead-ALLOW)
    def evict_files(need):
        nonlocal live, phys
        freed=0
        while freed<need:
            sealed=[f for f in files if f!=active]
            if not sealed: break
            f=min(sealed)
            for b in list(files[f]):
                files[f].discard(b)
                if meta[b][1]:
                    meta.pop(b); meta[b]=[t,False]; append(b)
                else:
                    meta.pop(b); where.pop(b); live-=1; freed+=1
            phys-=size[f]; del files[f]; del size[f]
    def evict(need):
        nonlocal live
        if mode=='navy': return evict_files(need)
        freed=0
        # CLOCK hand over disk_since order
        while freed<need and meta:
            b,(ds,rd)=next(iter(meta.items()))
            meta.popitem(last=False)
            if rd:
                meta[b]=[t,False]
                if mode.startswith('refresh'):
                    kill(b); append(b)   # copy to head now
                continue
            kill(b); live-=1; freed+=1
    for r in reqs:
        pre=True
        for b in r:
            c=b in meta
            pre=pre and c
            if pre: hits+=1
        for b in r:
            t+=1
            if b in meta:
                meta[b][1]=True
                continue
            # offload a new block
            u=master_used()
            if u+1>HIGH*CAP or owed:
                evict(max(1,int(u+1-(HIGH-RATIO)*CAP))+owed); owed=0
            # node side: room?
            attempts+=1
            if phys>0.9*LIMIT and attempts%int(1/STEPS_PER_PUT)==0:
                compact_step(BAR)
            if phys+1>LIMIT and URGENT:
                # compaction steps under pressure
                while phys+1>LIMIT and compact_step(BAR): pass
            if phys+1>LIMIT:
                refusals+=1; owed=int(RATIO*CAP); continue
            append(b); meta[b]=[t,False]; live+=1; put+=1
            if t>refs//2: samples.append(live)
    return dict(mode=mode, hit=round(hits/refs,4), live=round(sum(samples)/max(1,len(samples))/(LIMIT/0.992),3),
                wa=round(writes/put,2), refusals=refusals)

if __name__ == "__main__":
    for mode in sys.argv[2:]:
        if mode == "navy_tight":  # one file's slack instead of 2 % + 1.6 %
            print(run("navy", STEPS_PER_PUT=1/8, ALLOW_FRAC=0.008,
                      HIGH=0.995, RATIO=0.005))
        else:
            print(run(mode, STEPS_PER_PUT=1/8))
