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
it a --proxy-timeout as long as a start may take. The rest is the package's own command.
"""

import sys

from tornado.httpclient import AsyncHTTPClient

if __name__ == "__main__":
    AsyncHTTPClient.configure(None, max_clients=1000)
    from configurable_http_proxy.cli import main

    sys.exit(main())
