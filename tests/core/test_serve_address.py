"""A second `make run` beside a running one: the serve command says at once that the address is taken, before its
banner or a model, and fails (daphne alone printed "Address already in use" and exited 0)."""

from __future__ import annotations

import os
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


def test_serve_with_the_database_down_says_so_in_one_line_and_fails(tmp_path):
    closed = free_port()  # nothing listens there
    for url in (f"postgres://chaoslm:s3cret@127.0.0.1:{closed}/chaoslm", f"sqlite:///{tmp_path}/no/such/folder/db"):
        done = run_manage("serve", f"127.0.0.1:{free_port()}", env={**os.environ, "DATABASE_URL": url})
        assert done.returncode == 1, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("CommandError: The database does not answer (")
        assert lines[0].endswith("): start it, or point DATABASE_URL at one that runs.")
        assert "Traceback" not in done.stderr and "s3cret" not in done.stderr
        assert "ChaosLM: http" not in done.stdout
