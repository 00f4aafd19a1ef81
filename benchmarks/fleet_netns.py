"""A fleet across separate network hosts (Linux network namespaces), timed: the embedded
farm, the fleet of three workers, and the fleet with one worker's link cut for a while.

Run as root from the repository root:
`python -m benchmarks.fleet_netns [--cases 12] [--engine-latency-ms 100] [--link-ms 3]
[--jitter-ms 2] [--drop 0] [--cut-s 30]`. The topology is `tests.fleet_netns.network`'s
(addresses in 198.18.0.0/15, inside namespaces it creates and deletes); the engine is
`memeval serve --engine reference --latency-ms N` beside Redis and PostgreSQL. It prints each
run's wall time and whether its scores equal the embedded run's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import locomo_shaped
from tests.fleet_netns.network import Fleet, why_not
from tests.fleet_netns.test_fleet_netns import base_env, run_argv, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=12)
    parser.add_argument("--engine-latency-ms", type=float, default=100.0)
    parser.add_argument("--link-ms", type=float, default=3.0)
    parser.add_argument("--jitter-ms", type=float, default=2.0)
    parser.add_argument("--drop", type=float, default=0.0, help="share of connections refused")
    parser.add_argument("--cut-s", type=float, default=30.0, help="0: no cut run")
    args = parser.parse_args()
    if (reason := why_not()) is not None:
        sys.exit(f"cannot build the fleet's network here: {reason}")
    with tempfile.TemporaryDirectory(prefix="memeval-fleet-") as name:
        tmp = Path(name)
        suite = locomo_shaped.write(tmp / "conversations.json", args.cases)
        env = base_env(tmp)
        with Fleet(3, latency_ms=args.link_ms, jitter_ms=args.jitter_ms, drop=args.drop) as net:
            net.start_services(env, "reference", args.engine_latency_ms)
            start = time.monotonic()
            done = net.run(net.svc, run_argv(suite, "http://127.0.0.1:8080", tmp / "emb.json",
                                             "--workers", "6", "--pool", "threads"),
                           timeout=600, env=env)  # fmt: skip
            if done.returncode != 0:
                sys.exit(f"the embedded run failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
            print(f"embedded, 6 threads, in svc:   {time.monotonic() - start:6.1f} s")
            expected = scores(tmp / "emb.json", args.cases)
            workers = net.start_workers(env, threads=2)
            runs = [("fleet, 3 workers x 2 threads:", 0.0)]
            if args.cut_s:
                runs.append((f"fleet, w1 cut {args.cut_s:g} s at 4 s:", args.cut_s))
            for n, (title, cut) in enumerate(runs):
                out = tmp / f"fleet{n}.json"
                start = time.monotonic()
                proc = net.spawn(net.hosts[0], run_argv(suite, net.engine_url, out),
                                 f"run{n}", net.env(env))  # fmt: skip
                if cut:
                    time.sleep(4)
                    net.cut(workers[0])
                    time.sleep(cut)
                    net.mend(workers[0])
                code = proc.wait(600)
                same = code == 0 and scores(out, args.cases) == expected
                print(f"{title:32s}{time.monotonic() - start:6.1f} s  exit {code}  "
                      f"scores {'equal' if same else 'DIFFER'}")  # fmt: skip


if __name__ == "__main__":
    main()
