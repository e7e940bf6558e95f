"""Where Quorum's server may connect when it calls a submitted dialog system (issue 25, item 2).
Pure: no Django; `quorum.settings.QUORUM_SYSTEM_ALLOWED_HOSTS` is given in by the callers.

A system's URL is checked at registration and at every call, after DNS resolution: every address
the host resolves to must be allowed, and the call connects to the address that was checked (so a
name that resolves elsewhere a moment later is not followed; nor is any redirect, see the client).
Refused by default: loopback, link-local (and so the cloud metadata address 169.254.169.254),
private ranges (RFC 1918, unique-local IPv6, carrier-grade NAT), unspecified, multicast and other
reserved addresses, IPv4 written inside IPv6. `allowed` names hosts (`localhost`, `lab-gpu-1`) whose
addresses are allowed whatever they are, and addresses or ranges (`127.0.0.1`, `10.20.0.0/16`)
that are; a lab lists its own network there. The metadata addresses stay refused unless listed
as addresses themselves.

Resolution is bounded in time (`resolve_within`): a name server that never answers costs a call
its deadline, not a web worker.
"""
import ipaddress
import socket
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as LookupTimeout
from dataclasses import dataclass
from urllib.parse import urlsplit

METADATA = (ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("100.100.100.200"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class AddressRefused(ValueError):
    """A target Quorum may not connect to; str() says why without saying what is there."""


@dataclass(frozen=True)
class AddressPolicy:
    hosts: frozenset[str] = frozenset()
    networks: tuple = ()

    @classmethod
    def from_setting(cls, allowed: Iterable[str]) -> "AddressPolicy":
        """From the setting's entries: a host name, or an address or range; a bad range is refused."""
        hosts, networks = set(), []
        for entry in allowed or ():
            entry = str(entry).strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                if "/" in entry:
                    raise AddressRefused(f"{entry!r} is not an address range") from None
                hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, host: str, address: str) -> str | None:
        """Why `address` (one that `host` resolved to) may not be called, or None."""
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if any(ip in net for net in self.networks):
            return None
        if ip in METADATA:
            return "it is a cloud metadata address"
        if host.lower().rstrip(".") in self.hosts:
            return None
        for kind, test in (
            ("a loopback", ip.is_loopback), ("the unspecified", ip.is_unspecified), ("a link-local", ip.is_link_local),
            ("a multicast", ip.is_multicast), ("a private", ip.is_private or (ip.version == 4 and ip in _CGNAT)),
            ("a reserved", ip.is_reserved or not ip.is_global),
        ):
            if test:
                return f"it resolves to {kind} address"
        return None

    def check(self, host: str, addresses: list[str]) -> list[str]:
        """`addresses` if every one is allowed; else AddressRefused (one refused is enough: a name
        that resolves both inside and outside would be let in by chance)."""
        for address in addresses:
            reason = self.refusal(host, address)
            if reason:
                raise AddressRefused(
                    f"Quorum may not connect to {host!r}: {reason} "
                    "(an operator can allow it with QUORUM_SYSTEM_ALLOWED_HOSTS)"
                )
        return addresses

    def resolve(self, host: str, port: int) -> list[str]:
        """The host's addresses, checked; AddressRefused for a refused or unresolvable host."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError):
            raise AddressRefused(f"the host name {host[:100]!r} does not resolve") from None
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not addresses:
            raise AddressRefused(f"the host name {host[:100]!r} has no address")
        return self.check(host, addresses)


# getaddrinfo cannot be interrupted, so a lookup runs on one of a few threads and the caller waits
# at most its deadline; a lookup that hangs holds one of these threads, never the caller, and
# lookups beyond them queue and time out in turn (the threads are bounded whatever DNS does).
MAX_PENDING_LOOKUPS = 8
_lookups = ThreadPoolExecutor(max_workers=MAX_PENDING_LOOKUPS, thread_name_prefix="quorum-dns")


def resolve_within(resolve: Callable[[str, int], list[str]], host: str, port: int, seconds: float) -> list[str]:
    """`resolve(host, port)`, given at most `seconds`; AddressRefused when it takes longer."""
    pending = _lookups.submit(resolve, host, port)
    try:
        return pending.result(timeout=max(seconds, 0.01))
    except LookupTimeout:
        pending.cancel()
        raise AddressRefused(f"the host name {host[:100]!r} did not resolve within {max(seconds, 0.1):.1f} s") from None


def url_problem(url: str) -> str | None:
    """What is wrong with a system's URL before any address is looked at, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a bad port)
    except ValueError:
        return "the URL has a bad port"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "the URL must be http(s) with a host"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "the URL must not hold a user name or password (the secret signs the requests)"
    if parts.query or parts.fragment:
        return "the URL must not have a query or fragment"
    return None
