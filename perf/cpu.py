"""CPU time a server spends, as the kernel accounts it: a gunicorn master and its workers, and the
PostgreSQL backends connected to its database (the work the server asks of PostgreSQL). CPU rather
than wall time, so that other load on a shared machine moves the figure little. Read from
/proc/PID/stat (utime + stime); `CpuSampler` samples it through a load so that the CPU of a window
(the clients' measured seconds, without their logins) can be read off."""
import os
import subprocess
import threading
import time
from bisect import bisect_left
from pathlib import Path

from .memory import children

TICK = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0  # ended meanwhile
    return (int(fields[11]) + int(fields[12])) / TICK


def server_cpu_seconds(master_pid: int) -> float:
    return sum(_cpu_seconds(pid) for pid in [master_pid, *children(master_pid)])


def postgres_cpu_seconds(db_name: str) -> float:
    """The live backends connected to `db_name` (their process title names the database)."""
    pids = subprocess.run(["ps", "-C", "postgres", "-o", "pid="], capture_output=True, text=True).stdout.split()
    total = 0.0
    for pid in map(int, pids):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            continue
        if title.startswith("postgres:") and f" {db_name} " in title:
            total += _cpu_seconds(pid)
    return total


class CpuSampler:
    """Samples (time, server CPU, PostgreSQL CPU) every `every` seconds while it runs."""

    def __init__(self, master_pid: int, db_name: str, every: float = 0.1):
        self.master_pid, self.db_name, self.every = master_pid, db_name, every
        self.samples: list[tuple[float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.samples.append((time.time(), server_cpu_seconds(self.master_pid), postgres_cpu_seconds(self.db_name)))
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.samples.append((time.time(), server_cpu_seconds(self.master_pid), postgres_cpu_seconds(self.db_name)))

    def between(self, start: float, end: float) -> tuple[float, float]:
        """(server, PostgreSQL) CPU seconds from the last sample at or before `start` to the first at or after `end`."""
        times = [s[0] for s in self.samples]
        first = self.samples[max(0, bisect_left(times, start) - 1)]
        last = self.samples[min(len(times) - 1, bisect_left(times, end))]
        return last[1] - first[1], last[2] - first[2]
