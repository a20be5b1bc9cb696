"""The deployment files: compose and Dockerfile lint clean, agree with the README, and the
nginx example really proxies TLS WebSocket traffic to the server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from protocol.codec import PROTOCOL_VERSION
from server.app import TaliServer

from .conftest import make_server

ROOT = Path(__file__).resolve().parents[2]
NODE_BIN = ROOT / "tools" / "node" / "node_modules" / ".bin"


def dclint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE_BIN / "dclint"), str(path), "--max-warnings", "0", "--color", "false"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_compose_file_is_valid_and_clean() -> None:
    run = dclint(ROOT / "compose.yaml")
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_compose_validator_really_checks_the_schema(tmp_path: Path) -> None:
    broken = tmp_path / "compose.yaml"
    broken.write_text((ROOT / "compose.yaml").read_text().replace("restart:", "restarts:"))
    run = dclint(broken)
    assert run.returncode != 0
    assert "additional properties" in run.stdout


def test_dockerfile_lints_clean() -> None:
    hadolint = (
        shutil.which("hadolint", path=str(Path(__file__).parents[2] / ".venv" / "bin"))
        or "hadolint"
    )
    run = subprocess.run(
        [hadolint, str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_image_compose_and_readme_run_the_same_command() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    (cmd,) = re.findall(r"^CMD (\[.*\])$", dockerfile, re.M)
    image_command = json.loads(cmd)
    compose = (ROOT / "compose.yaml").read_text()
    (line,) = re.findall(r"^    command: (\[.*\])$", compose, re.M)
    compose_command = json.loads(line.replace("'", '"'))
    assert image_command == compose_command == ["tali-server"]
    readme = (ROOT / "README.md").read_text()
    assert "the image runs `tali-server`" in readme
    assert 'tali-server = "server.app:main"' in (ROOT / "pyproject.toml").read_text()
    assert "USER 10001" in dockerfile
    assert "HEALTHCHECK" in dockerfile
    assert "/healthz" in compose


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.mark.asyncio
async def test_the_nginx_example_proxies_tls_websockets(server: TaliServer, tmp_path: Path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "make test installs nginx"
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    port = free_port()
    site = (ROOT / "deploy" / "nginx.conf").read_text()
    site = site.replace("127.0.0.1:8765", f"127.0.0.1:{server.port}").replace(
        "listen 443 ssl", f"listen 127.0.0.1:{port} ssl"
    )
    site = site.replace("/etc/ssl/certs/tali.example.org.pem", str(cert)).replace(
        "/etc/ssl/private/tali.example.org.key", str(key)
    )
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n proxy_temp_path {tmp_path};\n"
        f" include {tmp_path}/site.conf;\n}}\n"
    )
    check = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert check.returncode == 0, check.stderr
    proxy = subprocess.Popen(
        [nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"]
    )
    try:
        context = ssl.create_default_context(cafile=str(cert))
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await asyncio.sleep(0.05)

        def fetch(path: str) -> int:
            with urllib.request.urlopen(
                f"https://127.0.0.1:{port}{path}", context=context, timeout=5
            ) as reply:
                return int(reply.status)

        assert await asyncio.to_thread(fetch, "/healthz") == 200
        assert await asyncio.to_thread(fetch, "/metrics") == 200  # from 127.0.0.1: allowed
        async with connect(f"wss://127.0.0.1:{port}/", ssl=context) as ws:
            await ws.send(
                json.dumps(
                    {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Through TLS", "id": 1}
                )
            )
            welcome = json.loads(await asyncio.wait_for(ws.recv(), 5))
            assert welcome["type"] == "welcome"
            await ws.send(json.dumps({"type": "ping", "id": 2, "data": "via nginx"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 5))["data"] == "via nginx"
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)


def test_the_cluster_profile_keeps_the_single_node_default_as_it_is() -> None:
    compose = (ROOT / "compose.yaml").read_text()
    single = compose.split("\n  tali:\n", 1)[1].split("\n\n", 1)[0]
    assert "profiles" not in single
    assert "TALI_STORE" not in single
    assert compose.count('profiles: [ "cluster" ]') == 4  # nginx, postgres, redis, tali-a (b)
    assert "./deploy/nginx-cluster.conf:/etc/nginx/conf.d/default.conf:ro" in compose
    for node in ("a", "b"):
        assert f"TALI_PUBLIC_URL: ws://localhost:8080/node/{node}/" in compose
        assert f"location /node/{node}/ " in (ROOT / "deploy" / "nginx-cluster.conf").read_text()


@pytest.mark.asyncio
async def test_the_cluster_nginx_reaches_any_node_and_each_by_its_path(tmp_path: Path) -> None:
    from tests.integration.conftest import running

    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    nodes = [make_server(), make_server()]
    apps = [running(app) for app in nodes]
    for app in apps:
        await anext(app)
    port = free_port()
    site = (ROOT / "deploy" / "nginx-cluster.conf").read_text()
    site = site.replace("tali-a:8765", f"127.0.0.1:{nodes[0].port}")
    site = site.replace("tali-b:8765", f"127.0.0.1:{nodes[1].port}")
    site = site.replace("listen 80;", f"listen 127.0.0.1:{port};")
    (tmp_path / "site.conf").write_text(site)
    (tmp_path / "nginx.conf").write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n proxy_temp_path {tmp_path};\n"
        f" include {tmp_path}/site.conf;\n}}\n"
    )
    proxy = subprocess.Popen(
        [nginx, "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", "daemon off;"]
    )
    try:
        for _ in range(100):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                await asyncio.sleep(0.05)
        for path, node in (("/node/a/", nodes[0]), ("/node/b/", nodes[1]), ("/", None)):
            async with connect(f"ws://127.0.0.1:{port}{path}") as ws:
                await ws.send(
                    json.dumps(
                        {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "Routed", "id": 1}
                    )
                )
                welcome = json.loads(await asyncio.wait_for(ws.recv(), 5))
                assert welcome["type"] == "welcome"
                served = [len(app.connections) for app in nodes]
                if node is None:
                    assert sum(served) == 1
                else:
                    assert len(node.connections) == 1, served
                    assert sum(served) == 1
            for _ in range(100):  # the node sees the close
                if not any(app.connections for app in nodes):
                    break
                await asyncio.sleep(0.02)

        def fetch(path: str) -> int:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
                    return int(reply.status)
            except urllib.error.HTTPError as error:
                return error.code

        assert await asyncio.to_thread(fetch, "/node/b/healthz") == 200
        assert await asyncio.to_thread(fetch, "/metrics") == 403
    finally:
        proxy.terminate()
        proxy.wait(timeout=10)
        for app in apps:
            with contextlib.suppress(StopAsyncIteration):
                await anext(app)
