"""make classroom's proxy (classroom/proxy.py) carries a kernel's websocket as
JupyterLab opens it: the subprotocol the server behind chose is answered to the
browser, and binary frames stay binary both ways (JupyterLab's kernel protocol sends
binary frames once that subprotocol is agreed)."""

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("configurable_http_proxy")
from tornado.httpserver import HTTPServer  # noqa: E402
from tornado.ioloop import IOLoop  # noqa: E402
from tornado.web import Application  # noqa: E402
from tornado.websocket import WebSocketHandler, websocket_connect  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KERNEL_PROTOCOL = "v1.kernel.websocket.jupyter.org"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Echo(WebSocketHandler):
    """A student's server, reduced to its websocket: it accepts the kernel protocol when
    offered and sends every frame back as the frame it received (binary or text)."""

    def select_subprotocol(self, subprotocols):
        return KERNEL_PROTOCOL if KERNEL_PROTOCOL in subprotocols else None

    def on_message(self, message):
        self.write_message(message, binary=isinstance(message, bytes))


@pytest.fixture(scope="module")
def proxied_echo():
    """The proxy's public address, with the echo server as its default target."""
    echo_port, proxy_port = free_port(), free_port()
    ready = threading.Event()
    loop_box = {}

    def serve():
        asyncio.set_event_loop(asyncio.new_event_loop())
        server = HTTPServer(Application([(r"/.*", Echo)]))
        server.listen(echo_port, "127.0.0.1")
        loop_box["loop"] = IOLoop.current()
        ready.set()
        loop_box["loop"].start()

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)
    proxy = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "classroom" / "proxy.py"),
            "--ip=127.0.0.1",
            f"--port={proxy_port}",
            f"--api-port={free_port()}",
            f"--default-target=http://127.0.0.1:{echo_port}",
        ],
        env={**os.environ, "CONFIGPROXY_AUTH_TOKEN": "test-token"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", proxy_port), timeout=1).close()
                break
            except OSError:
                if proxy.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        "classroom/proxy.py did not start: "
                        + proxy.stderr.read().decode(errors="replace")[-2000:]
                    ) from None
                time.sleep(0.1)
        yield f"ws://127.0.0.1:{proxy_port}/user/ana/api/kernels/k/channels"
    finally:
        proxy.terminate()
        proxy.wait(10)
        loop_box["loop"].add_callback(loop_box["loop"].stop)


def exchange(url: str, subprotocols, frames):
    """(the subprotocol the proxy answered, each reply) for frames sent one at a time."""

    async def talk():
        connection = await websocket_connect(url, subprotocols=subprotocols)
        chosen, replies = connection.selected_subprotocol, []
        for frame in frames:
            await connection.write_message(frame, binary=isinstance(frame, bytes))
            replies.append(await asyncio.wait_for(connection.read_message(), 10))
        connection.close()
        return chosen, replies

    return asyncio.run(talk())


def test_the_browser_gets_the_subprotocol_the_server_chose(proxied_echo):
    chosen, _ = exchange(proxied_echo, [KERNEL_PROTOCOL], ["hello"])
    assert chosen == KERNEL_PROTOCOL
    declined, replies = exchange(proxied_echo, ["something.else"], ["hello"])
    assert declined is None and replies == ["hello"]  # never one it was not offered
    none_offered, _ = exchange(proxied_echo, None, ["hello"])
    assert none_offered is None


def test_binary_frames_stay_binary_both_ways(proxied_echo):
    # a v1 kernel message: offsets as 8-byte integers, then the parts
    binary = (2).to_bytes(8, "little") + (24).to_bytes(8, "little") + b"\x00shell{}"
    _, replies = exchange(proxied_echo, [KERNEL_PROTOCOL], [binary, "text", b"\xff\x00"])
    assert replies == [binary, "text", b"\xff\x00"]
    assert [type(reply) for reply in replies] == [bytes, str, bytes]
