"""Who the live page (`--serve`) answers, and how many: the `Host` names it was bound to, an access token
where it listens beyond loopback, and a cap on its clients that leaves the run the descriptors it needs.

The page shows every prompt, reason and message of the run. On loopback only this machine's users reach it,
but a web site can still point a name of its own at 127.0.0.1 (DNS rebinding) and read it from a browser:
a request for any `Host` but the names it was bound to (and `localhost`) is refused. Beyond loopback anyone
who can reach the port could read it: a token, printed once and never written to the run directory, is
asked for. No aiohttp here: explorer/cli/web_server.py applies these rules.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import os
import secrets
import socket
import sys
from dataclasses import dataclass

if sys.platform != "win32":
    import resource

MAX_CLIENTS = 32  # the page's connections at once; past them, 503 at once
RESERVED_FILES = 128  # descriptors the page never takes: the run's files, its models' and store's connections
FILES_PER_CLIENT = 2  # a client's connection, and report.html open while it is sent
ACCEPT_BURST = 8  # connections accepted in one go (the listen backlog); each refused one is closed at once
TOKEN_BYTES = 24  # the access token's randomness: 32 URL-safe characters
TOKEN_COOKIE = "explorer-page-{port}"  # the token, once a browser has shown it: a cookie per port

DEFAULT_HOST = "127.0.0.1"  # where --serve PORT listens: this machine only


@dataclass(frozen=True)
class PageAccess:
    """The `Host` names answered, and the token asked for (None on loopback)."""

    names: frozenset[str]
    any_address: bool  # bound to every interface: a Host that is an IP address is answered too
    token: str | None

    def answers(self, host: str | None) -> bool:
        """Whether a request with this Host header is for this page; a name that is not the page's may
        be a web site's, pointed at this address."""
        if not host:
            return False
        name = host_name(host)
        return name in self.names or (self.any_address and _is_address(name))

    def admits(self, presented: str | None) -> bool:
        """Whether `presented` is the token (in constant time), or none is asked for."""
        if self.token is None:
            return True
        return presented is not None and hmac.compare_digest(presented.encode(), self.token.encode())

    def cookie(self, port: int) -> str:
        return TOKEN_COOKIE.format(port=port)


def host_name(header: str) -> str:
    """The name in a Host header: without its port, brackets or final dot, in lower case."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        header = header.partition(":")[0]
    return header.rstrip(".")


def _is_address(name: str) -> bool:
    """Whether `name` is an IP address: a browser that names the page by its address is no other site's."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def page_access(host: str, bound: str) -> PageAccess:
    """What the page at `host` (as --serve gave it), listening on the address `bound`, answers. Beyond
    loopback it asks for a new token."""
    address = ipaddress.ip_address(bound.partition("%")[0])
    names = {host.lower().rstrip("."), bound.lower()}
    if address.is_loopback or address.is_unspecified:
        names.add("localhost")
    if address.is_unspecified:
        names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
    token = None if address.is_loopback else secrets.token_urlsafe(TOKEN_BYTES)
    return PageAccess(frozenset(names), address.is_unspecified, token)


def browser_host(bound: str) -> str:
    """A host a browser can open for a page listening on `bound`: for every interface (0.0.0.0, ::),
    this machine's name where it resolves, else loopback."""
    address = ipaddress.ip_address(bound.partition("%")[0])
    if not address.is_unspecified:
        return bound
    name, family = socket.gethostname(), socket.AF_INET if address.version == 4 else socket.AF_INET6
    try:
        socket.getaddrinfo(name, None, family=family)  # :: listens on IPv6 only: the name must have such an address
    except OSError:
        return "127.0.0.1" if address.version == 4 else "::1"
    return name


def files_limit() -> int | None:
    """How many descriptors the process may have open (RLIMIT_NOFILE's soft limit); None without one."""
    if sys.platform == "win32":
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else soft


def open_files() -> int:
    """The descriptors the process has open now (0 where the system does not list them)."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            return len(os.listdir(folder))
        except OSError:
            continue
    return 0


def client_cap(limit: int | None, open_now: int) -> int:
    """MAX_CLIENTS, or fewer where their descriptors would leave the run less than RESERVED_FILES of
    `limit` beyond the `open_now` it has (refused connections in a burst count too)."""
    if limit is None:
        return MAX_CLIENTS
    spare = limit - open_now - RESERVED_FILES - 2 * ACCEPT_BURST
    return max(0, min(MAX_CLIENTS, spare // FILES_PER_CLIENT))


def page_url(host: str, port: int) -> str:
    """The address to open: an IPv6 host in brackets."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def announcement(url: str, access: PageAccess, bound: str, clients: int, limit: int | None) -> list[str]:
    """What the console says of the page: where it listens beyond loopback (it shows the run's prompts,
    reasons and messages), fewer clients than MAX_CLIENTS and why, and its address with the token, once."""
    lines = []
    if access.token is not None:
        where = "every interface" if access.any_address else bound
        lines.append(
            f"The live page listens on {where}: it shows the run's prompts, reasons and messages to anyone "
            "who has its address with the token below."
        )
    if clients < MAX_CLIENTS:
        lines.append(
            f"The live page takes {clients} clients at once (not {MAX_CLIENTS}): the process may open "
            f"{limit} files (ulimit -n), and the run keeps {RESERVED_FILES} of them."
        )
    lines.append(f"Watch the run at {url}" + (f"?token={access.token}" if access.token else ""))
    return lines


def serve_address(text: str) -> tuple[str, int]:
    """--serve's PORT, HOST:PORT or [IPv6]:PORT (the host 127.0.0.1 by default); the port 0 to 65535."""
    host, _, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") or DEFAULT_HOST
    if not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not [HOST:]PORT, such as 8000 or 127.0.0.1:8000 (0: any free port)"
        )
    return host, int(port)
