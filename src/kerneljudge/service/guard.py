"""When the service may listen beyond this machine: only with a token, and only with the judge's box.

Solution code runs in child processes; on a bind others can reach, anyone with the token can make this
machine run code, so the box that confines those processes (kerneljudge.sandbox) must be complete.
"""

from __future__ import annotations

import ipaddress


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the service reachable from this machine only."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False       # a host name: whatever it resolves to, treat it as reachable


def sandbox_gaps() -> tuple[str, ...]:
    """What the judge's box lacks on this machine (empty when it is complete). Without the sandbox
    module (ImportError) the box is unavailable, which is a gap."""
    try:
        from kerneljudge.sandbox import probe
    except ImportError:
        return ("the judge's box is unavailable (kerneljudge.sandbox is not installed)",)
    report = probe()
    return () if report.complete else tuple(report.missing) or ("the judge's box is incomplete",)
