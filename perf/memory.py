"""Memory of a server's processes as the kernel accounts it: proportional set size (PSS).

RSS counts every shared page in full in every process that maps it, so four gunicorn workers
forked from a preloaded master look four times as big as they are; PSS splits each shared page
between the processes sharing it, so the PSS of the master and its workers adds up to what the
server costs the machine. Read from /proc/PID/smaps_rollup (Linux 4.14+).
"""
from pathlib import Path


def _field_kb(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise ValueError(f"no {field} in /proc/{pid}/smaps_rollup")


def children(pid: int) -> list[int]:
    """The direct children of `pid` (a gunicorn master's workers)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        found.extend(int(p) for p in text)
    return sorted(found)


def server_memory(master_pid: int) -> dict:
    """PSS and RSS (MB) of a gunicorn master and each of its workers, and the server's total PSS."""
    workers = children(master_pid)
    pss = {pid: _field_kb(pid, "Pss") / 1024 for pid in [master_pid, *workers]}
    rss = {pid: _field_kb(pid, "Rss") / 1024 for pid in [master_pid, *workers]}
    return {
        "master_pss_mb": round(pss[master_pid], 1),
        "worker_pss_mb": [round(pss[w], 1) for w in workers],
        "worker_rss_mb": [round(rss[w], 1) for w in workers],
        "workers_pss_total_mb": round(sum(pss[w] for w in workers), 1),
        "server_pss_total_mb": round(sum(pss.values()), 1),
        "workers_pss_target_mb": 400,
    }
