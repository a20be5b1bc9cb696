"""Real Redis and PostgreSQL servers for the tests, each on a free loopback port in a
temporary directory of its own, stopped afterwards.

The servers come from Debian's packages (``scripts/ensure-system-packages``
installs them). PostgreSQL refuses to run as root: when the tests run as root
(CI), ``initdb`` and ``postgres`` run as the ``postgres`` user the package
created (else ``nobody``), the data directory made theirs; its socket goes in
that directory too, and the tests connect over TCP on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

START_SECONDS = 30.0
STOP_SECONDS = 15.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_for_port(
    port: int,
    process: subprocess.Popen[bytes],
    log: Path,
    ready: str | None = None,
    times: int = 1,
) -> None:
    """Until ``port`` accepts connections (and ``log`` says ``ready``, ``times`` times: a
    log that a restart appends to)."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"exited with {process.returncode}:\n{_tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                if ready is None or log.read_text(errors="replace").count(ready) >= times:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"not ready on {port} after {START_SECONDS} s:\n{_tail(log)}")


def _tail(log: Path) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-20:])
    except OSError:
        return "(no log)"


def _stop(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(STOP_SECONDS)


class RedisServer:
    """``redis-server`` on 127.0.0.1, no persistence."""

    def __init__(self) -> None:
        self.binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(self.binary).exists():
            raise RuntimeError("redis-server is missing: run scripts/ensure-system-packages")
        self.dir = Path(tempfile.mkdtemp(prefix="tali-redis-"))
        self.log = self.dir / "redis.log"
        self.port = free_port()
        self._start()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    def _start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [self.binary, "--bind", "127.0.0.1", "--port", str(self.port),
                 "--dir", str(self.dir), "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        try:
            _wait_for_port(self.port, self.process, self.log)
        except BaseException:
            self.stop()
            raise

    def pause(self) -> None:
        """Stop the server (SIGSTOP): it hangs, connections open."""
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def restart(self) -> None:
        """Stop and start again on the same port: empty, as Redis without persistence
        comes back from a crash or a restart."""
        _stop(self.process, signal.SIGKILL)
        self._start()

    def stop(self) -> None:
        self.resume()
        _stop(self.process, signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)


def postgres_bin() -> Path:
    """The newest PostgreSQL server's programs (Debian keeps them off the PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0,
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise RuntimeError("PostgreSQL is missing: run scripts/ensure-system-packages")


def _server_user() -> pwd.struct_passwd | None:
    """Whom to run PostgreSQL as: None (ourselves) unless we are root, who may not."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root with neither a postgres nor a nobody user")


class PostgresServer:
    """A PostgreSQL cluster of its own (``initdb``), on 127.0.0.1, trusting local logins of
    the superuser ``tali``."""

    USER = "tali"

    def __init__(self) -> None:
        bin_dir = postgres_bin()
        user = _server_user()
        # Another user must reach the directory: under /tmp, not a TMPDIR of root's own.
        self.dir = Path(tempfile.mkdtemp(prefix="tali-pg-", dir="/tmp" if user else None))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.port = free_port()
        as_user: dict[str, object] = {}
        if user is not None:
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        try:
            subprocess.run(
                [str(bin_dir / "initdb"), "-D", str(self.data), "-U", self.USER, "--auth=trust",
                 "-E", "UTF8", "--locale=C", "--no-sync"],
                check=True, capture_output=True, timeout=120, cwd=self.dir, **as_user,
            )  # fmt: skip
        except subprocess.CalledProcessError as exc:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise RuntimeError(f"initdb failed: {exc.stderr.decode(errors='replace')}") from None
        self._bin, self._as_user = bin_dir, as_user
        self._start()
        self._databases = 0

    def _start(self) -> None:
        ready = "database system is ready to accept connections"
        seen = self.log.read_text(errors="replace").count(ready) if self.log.exists() else 0
        with self.log.open("ab") as out:
            user = _server_user()
            if user is not None:
                os.chown(self.log, user.pw_uid, user.pw_gid)
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                [str(self._bin / "postgres"), "-D", str(self.data), "-k", str(self.dir),
                 "-c", "listen_addresses=127.0.0.1", "-p", str(self.port),
                 "-c", "max_connections=100", "-c", "shared_buffers=32MB", "-c", "lc_messages=C"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.dir,
                **self._as_user,
            )  # fmt: skip
        try:
            _wait_for_port(self.port, self.process, self.log, ready, seen + 1)
        except BaseException:
            self.stop()
            raise

    def restart(self, down: float = 0.0) -> None:
        """A fast shutdown (every connection cut), ``down`` seconds without a server, and a
        start on the same data and port."""
        _stop(self.process, signal.SIGINT)
        time.sleep(down)
        self._start()

    def _pids(self) -> list[int]:
        """The postmaster and every process it started (backends, background workers)."""
        pids = [self.process.pid]
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                # The command may hold spaces and parentheses: the fields follow the last ")".
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:
                    pids.append(int(stat.parent.name))
        return pids

    def pause(self) -> None:
        """Stop every process of the server (SIGSTOP): it hangs, connections open."""
        for pid in self._pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in reversed(self._pids()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.USER}@127.0.0.1:{self.port}/{database}"

    def new_database_name(self) -> str:
        self._databases += 1
        return f"test_{self._databases}"

    def stop(self) -> None:
        # SIGINT: a fast shutdown (SIGTERM would wait for clients to leave).
        self.resume()
        _stop(self.process, signal.SIGINT)
        shutil.rmtree(self.dir, ignore_errors=True)
