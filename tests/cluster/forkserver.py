"""Server processes forked from one that has imported the server already.

A test that starts a node pays, with ``python -m server``, for an interpreter and for the
server's imports (the protocol's models most of all): about 1.1 s of CPU each time, and the
cluster and durability tests start some 75 nodes. Here one process per test process (the
*fork server*, started at its first use) imports ``server.app`` once and then forks a child
for each node. Each child is a process of its own, as ``python -m server``'s would be: its
own event loop, sockets and store connections, started from the environment it is given;
SIGKILL, SIGSTOP, SIGCONT and SIGTERM reach it and nothing else. Only the imports are shared
(copied at the fork), and no event loop, thread or connection exists in the fork server
when it forks. One difference a node could show: the string hash seed is drawn once, by the
fork server, so the nodes forked from it iterate a set of strings in the same order, where
``python -m server`` processes would each draw their own (``random`` is reseeded at fork).

``spawn`` answers a ``Forked``: the part of ``asyncio.subprocess.Process`` the tests use
(``stderr``, ``returncode``, ``send_signal``, ``terminate``, ``kill``, ``wait``). The fork
server is the children's parent: it reaps a child when asked (once the child has exited),
and when the test process goes (its end of the socket closes) it kills and reaps any left.

The requests go over a Unix socket pair (one message each), the child's stderr as the write
end of a pipe passed with the request (``socket.send_fds``).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SERVER = "from server.app import main\nmain()\n"
"""What ``python -m server`` runs."""
_MESSAGE = 1 << 20


# -- the fork server ---------------------------------------------------------------------------


def _child(request: dict[str, Any], stderr: int) -> None:
    """In the forked child: become the process the request asks for, and exit with its status."""
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)
        os.dup2(stderr, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [request["argv0"]]
        try:
            exec(compile(request["code"], "<forked>", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except BaseException:
            # As the interpreter would at the top of ``python -m server``: through the hook the
            # server's log installed (a JSON record with the traceback), else printed.
            sys.excepthook(*sys.exc_info())
            code = 1
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def serve(sock: socket.socket) -> None:
    """Answer fork and wait requests until the other end closes; then kill what is left."""
    import server.app  # noqa: F401  (the imports every child shares)

    children: set[int] = set()
    while True:
        message, fds, _, _ = socket.recv_fds(sock, _MESSAGE, 1)
        if not message:
            break
        request = json.loads(message)
        if request["op"] == "fork":
            (stderr,) = fds
            assert threading.active_count() == 1, "no thread may live across a fork"
            sys.stdout.flush()
            sys.stderr.flush()
            gc.collect()
            gc.freeze()  # the shared pages stay shared (no reference counts written)
            pid = os.fork()
            if pid == 0:
                sock.close()
                _child(request, stderr)
            gc.unfreeze()
            os.close(stderr)
            children.add(pid)
            reply: dict[str, Any] = {"pid": pid}
        else:
            pid = request["pid"]
            _, status = os.waitpid(pid, 0)
            children.discard(pid)
            reply = {"returncode": os.waitstatus_to_exitcode(status)}
        sock.send(json.dumps(reply).encode())
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


# -- the test process's side -------------------------------------------------------------------


class _Server:
    """This test process's fork server: started at the first spawn, gone with this process."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.cluster.forkserver", str(theirs.fileno())],
            cwd=ROOT, pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        theirs.close()
        self.sock = ours
        self.lock = threading.Lock()
        atexit.register(self.close)

    def close(self) -> None:
        """Gone with this process: its children killed, and it reaped (so that the CPU it and
        they used counts as this process's children's, as ``python -m server``'s did)."""
        self.sock.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def ask(self, request: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        with self.lock:
            socket.send_fds(self.sock, [json.dumps(request).encode()], fds or [])
            reply = self.sock.recv(_MESSAGE)
        if not reply:
            raise RuntimeError(f"the fork server exited ({self.process.poll()})")
        answer: dict[str, Any] = json.loads(reply)
        return answer


_server: _Server | None = None
_server_lock = threading.Lock()


def _the_server() -> _Server:
    global _server
    with _server_lock:
        if _server is None or _server.process.poll() is not None:
            _server = _Server()
        return _server


class Forked:
    """A child of the fork server, as the tests use ``asyncio.subprocess.Process``."""

    def __init__(self, server: _Server, pid: int, stderr: asyncio.StreamReader) -> None:
        self._server = server
        self.pid = pid
        self.stderr = stderr
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)
        loop = asyncio.get_running_loop()
        self._exited: asyncio.Future[None] = loop.create_future()
        self._reaped: asyncio.Task[int] | None = None
        loop.add_reader(self._pidfd, self._on_exit)

    def _on_exit(self) -> None:
        # Reaped at once, as asyncio's child watcher does: a test reads ``returncode`` to see
        # that a node has not exited, without awaiting ``wait()``.
        asyncio.get_running_loop().remove_reader(self._pidfd)
        if not self._exited.done():
            self._exited.set_result(None)
        if self._reaped is None:
            self._reaped = asyncio.ensure_future(self._reap())

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def wait(self) -> int:
        """Its exit status (``-N`` for signal N), once it has exited."""
        if self._reaped is None:
            self._reaped = asyncio.ensure_future(self._reap())
        return await asyncio.shield(self._reaped)

    async def _reap(self) -> int:
        await self._exited
        reply = await asyncio.to_thread(self._server.ask, {"op": "wait", "pid": self.pid})
        self.returncode = int(reply["returncode"])
        os.close(self._pidfd)
        return self.returncode


async def spawn(env: dict[str, str], code: str = SERVER, cwd: Path = ROOT) -> Forked:
    """A new process running ``code`` (as ``__main__``) in ``env`` and ``cwd``, forked from the
    fork server; its stderr a pipe to the caller."""
    server = await asyncio.to_thread(_the_server)
    read, write = os.pipe()
    try:
        request = {"op": "fork", "env": env, "cwd": str(cwd), "code": code, "argv0": "server"}
        reply = await asyncio.to_thread(server.ask, request, [write])
    finally:
        os.close(write)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(loop=loop)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader, loop=loop), os.fdopen(read, "rb", 0)
    )
    return Forked(server, int(reply["pid"]), reader)


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
