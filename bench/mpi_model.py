#!/usr/bin/env python3
"""mpi_model.py: the scaling model of distributed runs (docs/mpi.md).

  mpi_model.py summarize TRACE PROFILE_JSON > SUMMARY
      from one process's run (`rfx --trace=TRACE --profile=json:PROFILE_JSON`): per
      semi-naive iteration (commands up to each SWAP of a loop), its compute seconds and
      the rows written by the commands whose outputs a distributed run may send (joins,
      projections, maps, filters: fused groups included)
  mpi_model.py predict SUMMARY DIST_PROFILE_JSON [DIST_PROFILE_JSON ...]
      with the measured distributed runs (`mpirun -np P rfx --profile=json:...`: rows each
      process sent, the largest share of a relation), calibrates the rows sent per row
      written, and prints per-iteration compute and exchange volumes and the predicted time
      on 2-64 GPUs over NVLink and over InfiniBand HDR (200 Gb/s)

Model, per iteration i on P GPUs: compute C_i / P times the measured imbalance (largest
share x P), plus the bytes each GPU sends and receives (X_i rows of 8 bytes written, of
which (P-1)/P move, spread over P GPUs) over its link, plus two settles and one exchange of
latency per command that exchanges. Transfers staged through the host (as built) add a
copy down and up at the host link's rate."""
import json
import math
import sys

LINKS = {   # name: (GB/s per GPU per direction in an all-to-all, latency of one collective step in s)
    "NVLink (NVSwitch)": (300.0, 3e-6),
    "IB HDR 200 Gb/s (a NIC per GPU)": (20.0, 5e-6),
}
LAUNCH = 15e-6     # s a command takes on a GPU however small its share (launch and wait)
HOST_LINK = 50.0   # GB/s each way between a GPU and its host (PCIe 5), for host-staged transfers
SENDS = ("JOIN", "MAPJOIN", "PRODUCT", "PROJECT", "MAP", "MAPFILTER", "FUSED")


def summarize(trace_path, profile_path):
    events = json.load(open(trace_path))["traceEvents"]
    prof = json.load(open(profile_path))
    its, cur = [], {"compute_s": 0.0, "rows": 0, "commands": 0}
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != 1:
            continue
        name = e["name"]
        cur["compute_s"] += e["dur"] * 1e-6
        cur["commands"] += 1
        if name.split(" ")[0] in SENDS:
            cur["rows"] += e["args"].get("tuples_out", 0)
        if name.startswith("SWAP"):
            its.append(cur)
            cur = {"compute_s": 0.0, "rows": 0, "commands": 0}
    # what follows the last loop (outputs) is not an iteration: kept apart, not scaled
    json.dump({"seconds": prof["seconds"], "iterations": its, "after": cur}, sys.stdout)
    print()


def predict(summary_path, dist_paths):
    s = json.load(open(summary_path))
    its = s["iterations"]
    written = sum(i["rows"] for i in its)
    calib, imbalance = [], 1.0
    print("measured distributed runs (one GPU shared):")
    for p in dist_paths:
        d = json.load(open(p))
        P = len(d["processes"])
        sent = sum(q["sent_rows"] for q in d["processes"])
        share = max(r["largest_share"] for r in d["shares"]) if d["shares"] else 1.0 / P
        imbalance = max(imbalance, share * P)
        calib.append(sent / (written * (P - 1) / P) if written else 0.0)
        print("  P=%d: %.3f s, rows sent %d (%.2f per row written x (P-1)/P), largest share %.1f%%, "
              "transfer s per process %s" % (P, d["seconds"], sent, calib[-1], 100 * share,
                                            ", ".join("%.3f" % q["transfer_seconds"] for q in d["processes"])))
    k = sum(calib) / len(calib) if calib else 1.0
    print("\none GPU: %.3f s, %d iterations (%.3f s in them), %d rows written by sending commands" %
          (s["seconds"], len(its), sum(i["compute_s"] for i in its), written))
    print("%4s %12s %14s %14s" % ("iter", "compute ms", "rows sent (P=2)", "rows sent (P=64)"))
    for n, i in enumerate(its):
        print("%4d %12.3f %14d %14d" % (n + 1, i["compute_s"] * 1e3, k * i["rows"] / 2, k * i["rows"] * 63 / 64))
    print("\npredicted fixpoint seconds (imbalance %.2f from the measured shares):" % imbalance)
    Ps = [1, 2, 4, 8, 16, 32, 64]
    print("%-46s %s" % ("link", " ".join("%8s" % ("P=%d" % P) for P in Ps)))
    for name, (bw, lat) in LINKS.items():
        for staged in (False, True):
            row = []
            for P in Ps:
                t = 0.0
                for i in its:
                    if P == 1:
                        t += i["compute_s"]
                        continue
                    t += max(i["compute_s"] / P * imbalance, i["commands"] * LAUNCH)
                    per_gpu = k * i["rows"] * 8 * (P - 1) / P / P
                    # a settle (allreduce) per command; an exchange's P messages where rows move
                    t += per_gpu / (bw * 1e9) + i["commands"] * lat * math.log2(P) + (lat * P if i["rows"] else 0)
                    if staged:
                        t += 2 * per_gpu / (HOST_LINK * 1e9)
                row.append(t)
            print("%-46s %s" % (name + (", host-staged" if staged else ", CUDA-aware"),
                                " ".join("%8.3f" % t for t in row)))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "summarize":
        summarize(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "predict":
        predict(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
