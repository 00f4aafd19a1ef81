"""Serve the Zep or Supermemory fake on 127.0.0.1, to run `memeval run` against it by hand:

    python -m tests.adapters.serve_hosted zep --port 8791
    ZEP_API_KEY=zep-contract-test-key memeval run --engine 'zep?url=http://127.0.0.1:8791' ...

The key printed is the fake's own constant, not a secret of any account.
"""

from __future__ import annotations

import argparse

import uvicorn

from tests.adapters.fake_supermemory import SUPERMEMORY_KEY, FakeSupermemory
from tests.adapters.fake_zep import ZEP_KEY, FakeZep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("service", choices=("zep", "supermemory"))
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds a write takes")
    args = parser.parse_args()
    if args.service == "zep":
        fake, env, key = FakeZep(delay=args.delay), "ZEP_API_KEY", ZEP_KEY
    else:
        fake, env, key = FakeSupermemory(delay=args.delay), "SUPERMEMORY_API_KEY", SUPERMEMORY_KEY
    print(f"{args.service} fake on http://127.0.0.1:{args.port}; set {env}={key}", flush=True)
    uvicorn.run(fake.app(), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
