"""The embedded server's process when it runs on xllamacpp: llama.cpp's own server, prebuilt, from PyPI.

`python -m greenloop.llm.xllamacpp_server -m MODEL --alias A --host H --port P -c N -t T
[--parallel K] [--no-webui]` takes the subset of llama-server's flags that `local_command`
passes, starts `xllamacpp.Server` (llama.cpp's C++ HTTP server in the wheel's own threads)
and waits until it is signalled. SIGTERM and SIGINT end the process at once, as they end
llama-server: the server holds nothing to save. A start that fails prints why and exits 1.
"""

from __future__ import annotations

import argparse
import signal
import sys
from typing import Any


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="greenloop.llm.xllamacpp_server", description=__doc__)
    p.add_argument("-m", "--model", required=True)
    p.add_argument("--alias", default="local")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("-c", "--ctx-size", type=int, default=8192)
    p.add_argument("-t", "--threads", type=int, default=1)
    p.add_argument("--parallel", type=int, default=1)
    p.add_argument("--no-webui", action="store_true")
    return p.parse_args(argv)


def params_for(args: argparse.Namespace, xlc: Any) -> Any:
    """xllamacpp's `CommonParams` set as llama-server sets them from the same flags."""
    params = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads  # llama-server: -tb defaults to -t
    params.ui = not args.no_webui
    return params


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)  # end now; no interpreter shutdown racing the server's threads
    try:
        import xllamacpp as xlc
    except ImportError as exc:
        print(f"error: xllamacpp is not installed ({exc}); pip install 'greenloop[local]'", flush=True)
        return 1
    print(f"xllamacpp {xlc.__version__}: {xlc.get_system_info()}", flush=True)
    try:
        server = xlc.Server(params_for(args, xlc))
    except Exception as exc:
        print(f"error: xllamacpp's server did not start: {exc}", flush=True)
        return 1
    print(f"listening on {server.listening_address}", flush=True)
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
