"""A real PostgreSQL server for the production tests, one per pytest session (per xdist worker).

The server runs from Debian's `postgresql` binaries in a temporary data directory, with
password authentication for one superuser, on a free port of 127.0.0.1. PostgreSQL refuses
to run as root: as root, the server runs as the `postgres` user (through `runuser`), which
owns the temporary directory. Without the binaries the tests skip, or fail when
`ADK_EVAL_REQUIRE_POSTGRES=1` (CI sets it).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest

_INSTALL_HINT = "install it with `apt-get install postgresql`"
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
# `pg_dump` lines that differ between two dumps of the same data: comments, and the
# `\restrict KEY` / `\unrestrict KEY` guards, whose key is random on every run.
_VOLATILE_DUMP_LINE = re.compile(r"^(--|\\restrict |\\unrestrict )")
_START_TIMEOUT = 60
_COMMAND_TIMEOUT = 60


class PostgresUnavailable(Exception):
    """The machine cannot run a PostgreSQL server (binaries or the `postgres` user missing)."""


def _quote(identifier: str) -> str:
    if not _IDENTIFIER.fullmatch(identifier):
        raise ValueError(
            f"PostgreSQL identifiers here must match {_IDENTIFIER.pattern!r}, got {identifier!r}"
        )
    return f'"{identifier}"'


@dataclass(frozen=True)
class PostgresServer:
    """A running PostgreSQL server, reached over TCP with a password.

    Attributes:
        host: The address the server listens on (always 127.0.0.1).
        port: The TCP port it listens on.
        user: A superuser's name.
        password: That superuser's password.
        bin_dir: The directory of `psql` and `pg_dump`.
        log_path: The server's log file.
    """

    host: str
    port: int
    user: str
    password: str
    bin_dir: Path
    log_path: Path
    _env: dict[str, str] = field(repr=False)

    def url(self, dbname: str) -> str:
        """The SQLAlchemy URL of database `dbname`, for the asyncpg driver."""
        return f"postgresql+asyncpg://{self.user}:{self.password}@{self.host}:{self.port}/{dbname}"

    def create_database(self, name: str) -> None:
        """Creates database `name` (letters, digits and underscores)."""
        self.psql("postgres", f"CREATE DATABASE {_quote(name)}")

    def row_counts(self, dbname: str, tables: Sequence[str]) -> dict[str, int]:
        """The number of rows of each of `tables` in database `dbname`."""
        if not tables:
            return {}
        query = " UNION ALL ".join(
            f"SELECT {index}, count(*) FROM {_quote(table)}" for index, table in enumerate(tables)
        )
        counts = {}
        for line in self.psql(dbname, query).splitlines():
            index, count = line.split("|")
            counts[tables[int(index)]] = int(count)
        return counts

    def dump_checksum(self, dbname: str) -> str:
        """The sha256 of `pg_dump`'s dump of `dbname` (schema and data), without volatile lines."""
        dump = self._run(
            ["pg_dump", "--no-password", *self._connection(dbname)], what=f"pg_dump of {dbname!r}"
        )
        kept = [line for line in dump.splitlines() if not _VOLATILE_DUMP_LINE.match(line)]
        return hashlib.sha256("\n".join(kept).encode()).hexdigest()

    def psql(self, dbname: str, sql: str) -> str:
        """Runs `sql` in database `dbname` with `psql`; its unaligned output (`|`-separated)."""
        return self._run(
            [
                "psql",
                "--no-psqlrc",
                "--no-password",
                "--tuples-only",
                "--no-align",
                "--set=ON_ERROR_STOP=1",
                *self._connection(dbname),
                "--command",
                sql,
            ],
            what=f"psql in {dbname!r}",
        )

    def _connection(self, dbname: str) -> list[str]:
        return [f"--host={self.host}", f"--port={self.port}", f"--username={self.user}", dbname]

    def _run(self, command: list[str], *, what: str) -> str:
        program = self.bin_dir / command[0]
        result = subprocess.run(
            [str(program) if program.exists() else command[0], *command[1:]],
            env=self._env,
            capture_output=True,
            text=True,
            timeout=_COMMAND_TIMEOUT,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"{what} failed ({result.returncode}): {result.stderr.strip()}")
        return result.stdout


def _bin_dir() -> Path:
    """The directory of the newest PostgreSQL server binaries (Debian's layout, else PATH)."""
    debian = sorted(
        (Path(found).parent for found in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
    )
    if debian:
        return debian[-1]
    pg_ctl = shutil.which("pg_ctl")
    bin_dir = Path(pg_ctl).resolve().parent if pg_ctl else None
    if bin_dir is None or not (bin_dir / "initdb").exists():
        raise PostgresUnavailable(
            "PostgreSQL's server binaries (`pg_ctl`, `initdb`) were not found in "
            f"/usr/lib/postgresql/*/bin or on PATH: {_INSTALL_HINT}"
        )
    return bin_dir


def _as_server_user() -> list[str]:
    """The prefix running a command as the server's user: `postgres` when we are root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        raise PostgresUnavailable(
            "running as root needs `runuser` (util-linux) to start PostgreSQL"
        )
    try:
        subprocess.run(["id", "-u", "postgres"], capture_output=True, check=True)
    except subprocess.CalledProcessError:
        raise PostgresUnavailable(
            f"running as root needs the `postgres` user to start PostgreSQL: {_INSTALL_HINT}"
        ) from None
    return ["runuser", "-u", "postgres", "--"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _log_tail(log_path: Path, lines: int = 20) -> str:
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join(text.splitlines()[-lines:]) or "(empty server log)"


def _client_env(password: str) -> dict[str, str]:
    # The caller's own PG* settings (PGDATABASE, PGSERVICE, ...) must not redirect the tests.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    env.update(PGPASSWORD=password, PGCONNECT_TIMEOUT="10")
    return env


@contextmanager
def running_postgres(bin_dir: Path, as_server_user: Sequence[str] = ()) -> Iterator[PostgresServer]:
    """Starts a PostgreSQL server in a temporary directory; stops it and removes it at the end.

    Args:
        bin_dir: The directory of `initdb`, `pg_ctl`, `psql` and `pg_dump`.
        as_server_user: The prefix running a command as the server's user (see
            `_as_server_user`); empty to run it as ourselves.

    Raises:
        RuntimeError: `initdb` or the server failed; the message holds the server log's tail.
    """
    prefix = list(as_server_user)
    user, password = "adk", secrets.token_urlsafe(24)
    # Not under pytest's basetemp: as root that is private to root, and the server runs as
    # `postgres`, which must own (and reach) its directory.
    root = Path(tempfile.mkdtemp(prefix="adk-eval-postgres-"))
    data, sockets, log_path = root / "data", root / "sockets", root / "server.log"

    def server_command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, str(bin_dir / args[0]), *args[1:]],
            cwd=root,  # the server's user may not reach the caller's directory
            capture_output=True,
            text=True,
            timeout=_START_TIMEOUT + 30,
            check=False,
        )

    def failure(what: str, result: subprocess.CompletedProcess[str]) -> RuntimeError:
        output = (result.stdout + result.stderr).strip()
        return RuntimeError(
            f"{what} failed ({result.returncode}): {output}\n"
            f"server log ({log_path}):\n{_log_tail(log_path)}"
        )

    try:
        sockets.mkdir()
        password_file = root / "password"
        password_file.write_text(password)
        password_file.chmod(0o600)
        if prefix:
            for path in (root, sockets, password_file):
                shutil.chown(path, "postgres", "postgres")
        result = server_command(
            "initdb",
            f"--pgdata={data}",
            f"--username={user}",
            f"--pwfile={password_file}",
            "--auth=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        if result.returncode != 0:
            raise failure("`initdb`", result)
        password_file.unlink()
        with (data / "postgresql.conf").open("a") as conf:
            conf.write(
                "\n# adk-eval tests: reachable on 127.0.0.1 only, durability traded for speed\n"
                "listen_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{sockets}'\n"
                "fsync = off\n"
                "synchronous_commit = off\n"
                "full_page_writes = off\n"
            )
        # Another process (an xdist worker, say) may take the free port before the server
        # binds it: then try another one.
        for attempt in range(3):
            port = _free_port()
            log_start = log_path.stat().st_size if log_path.exists() else 0
            result = server_command(
                "pg_ctl",
                "start",
                f"--pgdata={data}",
                f"--log={log_path}",
                f"--options=-p {port}",
                "--wait",
                f"--timeout={_START_TIMEOUT}",
            )
            if result.returncode == 0:
                break
            with log_path.open("rb") as log:
                log.seek(log_start)
                port_taken = b"could not bind" in log.read()
            if attempt == 2 or not port_taken:
                raise failure(f"`pg_ctl start` on 127.0.0.1:{port}", result)
        try:
            server = PostgresServer(
                host="127.0.0.1",
                port=port,
                user=user,
                password=password,
                bin_dir=bin_dir,
                log_path=log_path,
                _env=_client_env(password),
            )
            _wait_until_accepting(server)
            yield server
        finally:
            _stop(prefix, bin_dir, data, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _wait_until_accepting(server: PostgresServer) -> None:
    """Waits until a password login over TCP succeeds (`pg_ctl --wait` does not log in)."""
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        try:
            server.psql("postgres", "SELECT 1")
            return
        except RuntimeError as error:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"PostgreSQL on 127.0.0.1:{server.port} did not accept a login within "
                    f"{_START_TIMEOUT} s: {error}\nserver log ({server.log_path}):\n"
                    f"{_log_tail(server.log_path)}"
                ) from None
        time.sleep(0.1)


def _stop(prefix: list[str], bin_dir: Path, data: Path, root: Path) -> None:
    """Stops the server (fast shutdown); kills it if that does not work."""
    with suppress(subprocess.TimeoutExpired):
        result = subprocess.run(
            [*prefix, str(bin_dir / "pg_ctl"), "stop", f"--pgdata={data}", "--mode=fast", "--wait"],
            cwd=root,
            capture_output=True,
            timeout=_START_TIMEOUT,
            check=False,
        )
        if result.returncode == 0:
            return
    try:
        pid = int((data / "postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return  # no server left running
    with suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for this session (each xdist worker starts its own).

    Skips without PostgreSQL; fails instead when `ADK_EVAL_REQUIRE_POSTGRES=1`.
    """
    try:
        bin_dir, prefix = _bin_dir(), _as_server_user()
    except PostgresUnavailable as error:
        if os.environ.get("ADK_EVAL_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"{error} (ADK_EVAL_REQUIRE_POSTGRES=1 requires it)")
        pytest.skip(str(error))
    with running_postgres(bin_dir, prefix) as server:
        yield server
