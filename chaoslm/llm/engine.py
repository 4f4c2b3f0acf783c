"""The embedded model's server process: llama.cpp's own server (the one its `llama-server` binary runs), from
xllamacpp's prebuilt wheel, on loopback. `python -m chaoslm.llm.engine --model FILE.gguf ...`; local_model.command
builds the command line and local_model.start runs it.

llama.cpp's server answers several calls at once: `--parallel` slots, with continuous batching (a new call joins
the batch the running ones are being written in, at the next token, rather than waiting for them to finish).
`--n_ctx` is the context of all slots together, split evenly among them, as llama-server's `-c` is.

No Django here: it runs as a child process of `serve`, given everything on its command line.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import signal
import threading


def parser() -> argparse.ArgumentParser:
    # The names llama-cpp-python's server took, which ChaosLM's command lines and logs have always used.
    parser = argparse.ArgumentParser(prog="python -m chaoslm.llm.engine", description=__doc__)
    parser.add_argument("--model", required=True, help="the GGUF file (or, with --hf_model_repo_id, its name there)")
    parser.add_argument("--hf_model_repo_id", default="", help="a Hugging Face repo to fetch --model from")
    parser.add_argument("--model_alias", required=True, help="the model's name on the server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--n_ctx", type=int, default=8192, help="the context of all slots together")
    parser.add_argument("--n_threads", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=1, help="how many calls are answered at once (slots)")
    parser.add_argument("--repeat_penalty", type=float, default=1.0, help="the default repetition penalty")
    parser.add_argument("--chat_template", default="", help="a Jinja chat template in place of the GGUF's own")
    return parser


def fetched(repo: str, pattern: str) -> str:
    """The file of `repo` matching `pattern` (a name or a glob), fetched into the Hugging Face cache."""
    from huggingface_hub import hf_hub_download, list_repo_files

    names = [name for name in list_repo_files(repo) if fnmatch.fnmatch(name, pattern)]
    if not names:
        raise SystemExit(f"{repo} has no file matching {pattern}.")
    return hf_hub_download(repo, sorted(names)[0])


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = fetched(args.hf_model_repo_id, args.model) if args.hf_model_repo_id else args.model
    params.model_alias = {args.model_alias}
    params.hostnames = [args.host]
    params.port = args.port
    params.n_parallel = max(1, args.parallel)
    params.n_ctx = args.n_ctx
    params.cont_batching = True
    params.cpuparams.n_threads = args.n_threads
    params.cpuparams_batch.n_threads = args.n_threads
    params.sampling.penalty_repeat = args.repeat_penalty
    if args.chat_template:
        params.use_jinja = True
        params.chat_template = args.chat_template
    server = xllamacpp.Server(params)
    print(f"llama.cpp server: {args.model_alias} at {server.listening_address}, {params.n_parallel} slots", flush=True)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    stop.wait()
    # At once: the server's threads are C++ ones, and unwinding them at interpreter exit only delays the stop.
    os._exit(0)


if __name__ == "__main__":
    main()
