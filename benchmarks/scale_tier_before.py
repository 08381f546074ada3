"""Scale-tier cycles of an older gpusim (a checkout of commit 7bfc3cc at /tmp/old: git worktree add /tmp/old 7bfc3cc),
for benchmarks/results/scale_tier_before_after.md; writes /tmp/old_scale.json."""
import concurrent.futures as cf
import json
import sys
import time

sys.path.insert(0, "/tmp/old")
def one(case, n):
    import gpusim
    from gpusim.suite import CASES, run_case
    t = time.time()
    with gpusim.Device("h100", mode="timing"):
        r = run_case(CASES[case], gpusim, n)
    return case, n, [int(l.cycles) for l in r.launches], round(time.time() - t, 1)
if __name__ == "__main__":
    sys.path.insert(0, "/tmp/old")
    hw = json.load(open("/work/main/validation/reports/h100/scale_tier/hardware_h100.json"))
    runs = sorted({(l["case"], l["n"]) for l in hw["launches"]})
    out = {}
    with cf.ProcessPoolExecutor(2) as pool:
        for case, n, cyc, s in pool.map(one, *zip(*runs)):
            out[f"{case}:{n}"] = cyc
            print(case, n, cyc, s, flush=True)
    json.dump(out, open("/tmp/old_scale.json", "w"), indent=1)
