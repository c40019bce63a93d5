"""The pure-Python configurable-http-proxy (PyPI), as `make classroom` runs it.

JupyterHub's default proxy is the Node.js program of the same name; this port from PyPI
needs nothing but Python, which is why `make classroom` uses it. It forwards plain HTTP
requests through tornado's AsyncHTTPClient, whose defaults suit one user, not a class:

- at most 10 requests in flight, the rest queued, and a queued request fails (503)
  after 20 s: thirty students opening JupyterLab at once send hundreds of requests;
- a response is passed on only once it is complete, within 20 s: the hub's spawn
  progress stream (what a student's "server starting" page waits on) lasts as long as
  the start, which on a busy machine is longer.

So this starts it with a pool as large as a class needs, and jupyterhub_config.py gives
it a --proxy-timeout as long as a start may take.

Its websockets need two more things. A browser opening a kernel's websocket offers
JupyterLab's subprotocol (v1.kernel.websocket.jupyter.org); the proxy passes the offer
on to the student's server, which accepts it, but answers the browser with none, so the
browser fails the handshake and JupyterLab retries every kernel connection without it.
`answer_subprotocol` answers with what the server behind chose. That protocol sends
binary frames, and the proxy forwards the browser's frames as text (its replies it
forwards as they came): `forward_as_sent` keeps each frame's type both ways. The rest
is the package's own command.
"""

import sys

from tornado.httpclient import AsyncHTTPClient


def answer_subprotocol(handler, offered):
    """The subprotocol the proxied server chose (its websocket is opened before the
    browser's is accepted), if the browser offered it; else none."""
    client = getattr(handler, "ws_client", None)
    chosen = getattr(client, "selected_subprotocol", None) if client else None
    return chosen if chosen in offered else None


def forward_as_sent(handler, message):
    """A browser's frame on to the server as it came: binary stays binary."""
    if handler.ws_client:
        prefix = handler.target["prefix"] if handler.target else ""
        if prefix:  # what the package's own on_message does: the user was active
            handler.proxy.update_last_activity(prefix)
        handler.ws_client.write_message(message, binary=isinstance(message, bytes))


if __name__ == "__main__":
    AsyncHTTPClient.configure(None, max_clients=1000)
    from configurable_http_proxy.cli import main
    from configurable_http_proxy.handlers import ProxyHandler

    ProxyHandler.select_subprotocol = answer_subprotocol
    ProxyHandler.on_message = forward_as_sent

    sys.exit(main())
