"""A second `make run` beside a running one: the serve command says at once that the address is taken, before its
banner or a model, and fails (daphne alone printed "Address already in use" and exited 0)."""

from __future__ import annotations

import socket

from tests.servers import free_port, run_manage


def test_serve_on_a_taken_address_says_so_at_once_and_fails():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        for args in (["serve", f"127.0.0.1:{port}"], ["serve", "--check", f"127.0.0.1:{port}"]):
            done = run_manage(*args)
            assert done.returncode == 1
            assert done.stderr.strip() == (
                f"CommandError: 127.0.0.1:{port} is already in use (is ChaosLM already running there?): stop it, or "
                f"serve on another port, e.g. make run ADDR=127.0.0.1:{port + 1}"
            )
            assert "ChaosLM: http" not in done.stdout and "model" not in done.stdout


def test_the_check_passes_a_free_address():
    done = run_manage("serve", "--check", f"127.0.0.1:{free_port()}")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
